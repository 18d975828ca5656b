import type { Span } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { context, propagation, SpanKind, SpanStatusCode, trace, tracer } from '../infra/tracing.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The server span of this request (only while tracing is on). */
    otelSpan?: Span;
  }
}

/**
 * One SERVER span per HTTP request (OpenTelemetry HTTP semantic conventions: `GET /compliance/brands/:id`, method,
 * route, status), continuing the caller's trace from a W3C `traceparent` header. The span is made current for the
 * rest of the request (hooks and handler run inside it), so GraphQL, SQL-side and webhook spans become its children.
 * Installed only when tracing is on (src/infra/tracing.ts).
 */
export function installHttpSpans(http: FastifyInstance): void {
  http.addHook('onRequest', (request, _reply, done) => {
    const parent = propagation.extract(context.active(), request.headers);
    const route = request.routeOptions.url ?? 'unmatched';
    const span = tracer().startSpan(
      `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          'http.route': route,
          'url.path': request.url.split('?')[0],
          'switchboard.request_id': request.id,
        },
      },
      parent,
    );
    request.otelSpan = span;
    context.with(trace.setSpan(parent, span), done);
  });
  http.addHook('onResponse', (request, reply, done) => {
    const span = request.otelSpan;
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
  // A request whose client leaves before it is answered ends its span here. A hijacked SSE stream's span ends when
  // the stream is established (hijackedStreamEstablished, src/http/hijacked-stream.ts: status 200, and
  // `request.otelSpan` cleared), so neither this hook nor onResponse ends it again.
  http.addHook('onRequestAbort', (request, done) => {
    request.otelSpan?.end();
    done();
  });
}
