import type { FastifyReply, FastifyRequest } from 'fastify';

/** The HTTP request metrics a hijacked stream's opening is counted in (src/infra/metrics/prometheus.ts). */
export interface HttpRequestMetrics {
  /** One answered request: method, route pattern, status, seconds to answer. */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
}

/**
 * Accounts for a hijacked stream response (the SSE stream, `GET /api/events`) once its headers are written, and
 * takes it off Fastify's books (docs/operations.md "Metrics", "Logs"):
 *
 * - the HTTP request metrics count the request now, with the status written (200) and the time to establish the
 *   stream (`switchboard_http_requests_total`, `switchboard_http_request_duration_seconds`);
 * - the request log line (`request completed`, at info, with `res.statusCode` and `responseTime` in ms, as
 *   Fastify writes it) is written now;
 * - the request's tracing span (src/http/tracing.ts) ends now with `http.response.status_code` 200;
 * - Fastify's own `finish`/`error` listener on the raw response (`onResFinished`, fastify/lib/reply.js
 *   `setupResponseListeners`) is removed: it kept the request and the reply (≈ 0.74 KB per HTTP/2 stream,
 *   docs/performance.md round 7) for the whole stream only to run the `onResponse` hooks and the log line when the
 *   server ended the stream (never when the client left). A stream's life is the stream's own to account for:
 *   `switchboard_open_streams`, `switchboard_streams_ended_total{reason}` and the `event stream ended` line.
 *
 * Call it after `reply.hijack()` and `reply.raw.writeHead(...)`. `route` is the route pattern.
 */
export function hijackedStreamEstablished(
  request: FastifyRequest,
  reply: FastifyReply,
  metrics: HttpRequestMetrics,
  route: string,
): void {
  const res = reply.raw;
  for (const event of ['finish', 'error'] as const) {
    for (const listener of res.listeners(event)) {
      if (listener.name === 'onResFinished') res.off(event, listener as (...args: unknown[]) => void);
    }
  }
  const status = res.statusCode;
  const elapsedMs = reply.elapsedTime;
  metrics.httpRequest(request.method, route, status, elapsedMs / 1000);
  reply.log.info({ res: reply, responseTime: elapsedMs }, 'request completed');
  const span = request.otelSpan;
  if (span) {
    span.setAttribute('http.response.status_code', status);
    span.end();
    // The tracing's onRequestAbort hook (a client that leaves later) then has nothing left to end.
    request.otelSpan = undefined;
  }
}
