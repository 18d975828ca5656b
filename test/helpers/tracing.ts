// OpenTelemetry in tests: an in-memory exporter registered as the process's tracer provider, with the context
// manager and W3C propagator the service's tracing needs (what OTEL_EXPORTER_OTLP_ENDPOINT sets up with the OTLP
// exporter in src/infra/tracing.ts), so a test reads the finished spans.
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

/** Tracing installed by {@link installInMemoryTracing}. */
export interface InMemoryTracing {
  /** Every span finished so far, in finishing order. */
  spans(): ReadableSpan[];
  /** The direct children of `parent` among the finished spans. */
  childrenOf(parent: ReadableSpan): ReadableSpan[];
  /** Flushes and removes the provider, context manager and propagator: later files in the worker run untraced. */
  uninstall(): Promise<void>;
}

/**
 * Registers an in-memory tracer provider (SimpleSpanProcessor: a span is readable as soon as it ends), an
 * AsyncLocalStorage context manager and the W3C trace-context propagator as the process's globals. Call in
 * `beforeAll` before starting the app, and `uninstall()` in `afterAll`.
 */
export function installInMemoryTracing(): InMemoryTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const spans = () => exporter.getFinishedSpans();
  return {
    spans,
    childrenOf: (parent) => spans().filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId),
    async uninstall() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
