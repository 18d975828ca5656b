// OpenTelemetry traces, off by default. With OTEL_EXPORTER_OTLP_ENDPOINT set, `startTracing` loads the SDK (lazily:
// a start without it loads only @opentelemetry/api, whose calls are no-ops) and exports spans over OTLP/HTTP; the
// standard OTEL_* variables (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT…) apply.
// Spans: HTTP requests (server, W3C traceparent in and out), GraphQL operations, Redis publishes, webhook attempts
// (client, traceparent sent to the receiver), SQL statements (db-tracing.ts), SMTP sessions and messages
// (src/smtp/tracing.ts) and agent model calls (model/traced.ts); the event id is an attribute (`switchboard.event_id`) of the ingest
// request's span and of every delivery attempt's span, so one query finds both ends of an event's path.
import { type Attributes, context, propagation, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

/** Attribute naming the event a span is about (ingest, webhook attempt, Redis publish). */
export const EVENT_ID_ATTRIBUTE = 'switchboard.event_id';

/** The tracer of this service (a no-op until a tracer provider is registered). */
export function tracer() {
  return trace.getTracer('switchboard');
}

/**
 * Whether spans are recorded (a tracer provider is registered: `startTracing`, or a test's own). Decided when an app
 * is built, so that without tracing not even the hooks that would make no-op spans are installed.
 */
export function tracingEnabled(): boolean {
  const probe = tracer().startSpan('probe');
  const recording = probe.isRecording();
  probe.end();
  return recording;
}

let shutdown: Promise<() => Promise<void>> | undefined;

/**
 * Registers the OpenTelemetry SDK globally (once per process) when `endpoint` (OTEL_EXPORTER_OTLP_ENDPOINT) is set:
 * AsyncLocalStorage context, W3C trace-context propagation, a batch processor and the OTLP/HTTP exporter.
 * @returns a function that flushes and stops it (call at shutdown); undefined when tracing stays off.
 */
export async function startTracing(endpoint: string | undefined): Promise<(() => Promise<void>) | undefined> {
  if (!endpoint) return undefined;
  shutdown ??= (async () => {
    const [
      { TracerProvider, BatchSpanProcessor },
      { OTLPTraceExporter },
      { AsyncLocalStorageContextManager },
      core,
      res,
    ] = await Promise.all([
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      import('@opentelemetry/resources'),
    ]);
    const provider = new TracerProvider({
      resource: res.resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME || 'switchboard' }),
      spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
    });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(provider);
    return () => provider.shutdown();
  })();
  return shutdown;
}

/**
 * Runs `fn` inside a span named `name` (made current, so spans started within are its children), recording an
 * exception and an error status when `fn` throws, and ending the span either way.
 */
export async function inSpan<T>(
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}

export { context, propagation, SpanKind, SpanStatusCode, trace };
