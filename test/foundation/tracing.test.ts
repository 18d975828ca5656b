// OpenTelemetry traces, with an in-memory exporter registered as the process's tracer provider (what
// OTEL_EXPORTER_OTLP_ENDPOINT does with the OTLP exporter): an event POSTed with a traceparent continues the caller's
// trace in the HTTP span, which carries the event id; the webhook attempt that delivers the event is a CLIENT span
// with the same event id and sends traceparent to the receiver; GraphQL operations have their own spans; without a
// provider nothing is recorded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_ID_ATTRIBUTE, tracingEnabled } from '../../src/infra/tracing.js';
import { startApp, type TestAccount, type TestApp } from '../helpers/app.js';
import { type InMemoryTracing, installInMemoryTracing } from '../helpers/tracing.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

describe('OpenTelemetry traces (in-memory exporter)', () => {
  let tracing: InMemoryTracing;
  let t: TestApp;
  let a: TestAccount;
  let receiver: Receiver;
  beforeAll(async () => {
    expect(tracingEnabled()).toBe(false); // off by default
    tracing = installInMemoryTracing();
    expect(tracingEnabled()).toBe(true);
    receiver = await startReceiver();
    t = await startApp();
    a = await t.newAccount();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await tracing?.uninstall(); // later files in this worker run without tracing again
  });

  it('carries the event id from the ingest request (continuing the caller trace) to the webhook attempt', async () => {
    const hook = await a.request('POST', '/api/webhooks', { url: `${receiver.url}/traced`, events: ['sms.*'] });
    expect(hook.status).toBe(201);
    receiver.setSecrets('/traced', [hook.body.secret]);
    const callerTrace = '0af7651916cd43dd8448eb211c80319c';
    const posted = await a.request(
      'POST',
      '/api/events',
      { eventType: 'sms.sent', payload: { id: 'otel-1', status: 'sent' } },
      { traceparent: `00-${callerTrace}-b7ad6b7169203331-01` },
    );
    expect(posted.status).toBe(202);
    const [delivery] = await receiver.waitFor('/traced', 1);

    const spans = tracing.spans;
    const ingest = spans().find((s) => s.name === 'POST /api/events');
    expect(ingest?.spanContext().traceId).toBe(callerTrace);
    expect(ingest?.attributes[EVENT_ID_ATTRIBUTE]).toBe(posted.body.id);
    expect(ingest?.attributes['http.response.status_code']).toBe(202);

    // The attempt's span ends right after the receiver answered: wait for it rather than assume it is there.
    await expect
      .poll(
        () => spans().find((s) => s.name === 'webhook POST' && s.attributes[EVENT_ID_ATTRIBUTE] === posted.body.id),
        {
          timeout: 60_000,
        },
      )
      .toBeDefined();
    const attempt = spans().find(
      (s) => s.name === 'webhook POST' && s.attributes[EVENT_ID_ATTRIBUTE] === posted.body.id,
    )!;
    expect(attempt.attributes['http.response.status_code']).toBe(200);
    expect(attempt.attributes['server.address']).toBe('127.0.0.1');
    // The receiver got the attempt's trace context.
    expect(delivery!.headers.traceparent).toBe(
      `00-${attempt.spanContext().traceId}-${attempt.spanContext().spanId}-01`,
    );
  });

  it('records a span per GraphQL operation, inside the HTTP request span', async () => {
    const res = await a.request('POST', '/graphql', { query: 'query WhoAmI { viewer { accountId } }' });
    expect(res.status).toBe(200);
    const op = tracing.spans().find((s) => s.name === 'graphql query WhoAmI');
    expect(op?.attributes['graphql.operation.type']).toBe('query');
    const http = tracing
      .spans()
      .find((s) => s.name === 'POST /graphql' && s.spanContext().traceId === op?.spanContext().traceId);
    expect(http).toBeDefined();
    expect(op?.parentSpanContext?.spanId).toBe(http?.spanContext().spanId);
  });
});
