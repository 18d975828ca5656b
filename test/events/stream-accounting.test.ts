import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/infra/logger.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { rawSse } from '../helpers/sse.js';

// docs/operations.md "Metrics" and "Logs": an SSE stream's opening is one HTTP request (counted, logged and traced
// when the stream is established, status 200); its life is switchboard_open_streams, switchboard_streams_ended_total
// by reason and the `event stream ended` line.

const METRICS_TOKEN = 'metrics-token-0123456789';

/** The value of one sample of the Prometheus text `text` (labels in any order); 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return 0;
}

/** An app whose JSON log lines are collected in `lines`. */
async function loggedApp(lines: Record<string, unknown>[]): Promise<TestApp> {
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      callback();
    },
  });
  return startApp({
    logger: createLogger('info', sink),
    env: { METRICS_TOKEN, EVENT_STREAM_HEARTBEAT_MS: '100' },
  });
}

const opened = { method: 'GET', route: '/api/events', status: '200' };
const counts = (text: string) => ({
  requests: sample(text, 'switchboard_http_requests_total', opened),
  timed: sample(text, 'switchboard_http_request_duration_seconds_count', { method: 'GET', route: '/api/events' }),
  open: sample(text, 'switchboard_open_streams', { transport: 'sse' }),
  closed: sample(text, 'switchboard_streams_ended_total', { transport: 'sse', reason: 'closed' }),
  revoked: sample(text, 'switchboard_streams_ended_total', { transport: 'sse', reason: 'revoked' }),
  shutdown: sample(text, 'switchboard_streams_ended_total', { transport: 'sse', reason: 'shutdown' }),
});

describe('an SSE stream in the metrics and the logs', () => {
  const lines: Record<string, unknown>[] = [];
  let t: TestApp;
  beforeAll(async () => {
    t = await loggedApp(lines);
  });
  afterAll(async () => {
    await t?.close();
  });
  const scrape = async () => {
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    return counts(await res.text());
  };
  const linesOf = (reqId: string) => lines.filter((l) => l.reqId === reqId);

  it('counts the request once when the stream opens, and the end as `revoked` when its key is revoked', async () => {
    const admin = await t.newAccount();
    const issued = await admin.request('POST', '/graphql', {
      query:
        'mutation { issueApiKey(input: { name: "dash", scopes: [EVENTS_READ] }) { ... on IssueApiKeyPayload { issuedApiKey { keyId apiKey } } } }',
    });
    const { keyId, apiKey } = issued.body.data.issueApiKey.issuedApiKey as { keyId: string; apiKey: string };
    const before = await scrape();
    const stream = await rawSse(`${t.url}/api/events?token=${apiKey}`, { 'x-request-id': 'sse-revoked-1' });
    expect(stream.status).toBe(200);
    await stream.waitFor(/: connected/);
    const during = await scrape();
    expect(during).toMatchObject({
      requests: before.requests + 1,
      timed: before.timed + 1,
      open: before.open + 1,
      revoked: before.revoked,
    });
    expect(linesOf('sse-revoked-1').filter((l) => l.msg === 'request completed')).toEqual([
      expect.objectContaining({ res: { statusCode: 200 }, responseTime: expect.any(Number) }),
    ]);

    await admin.request('POST', '/graphql', {
      query: `mutation { revokeApiKey(input: { keyId: "${keyId}" }) { ... on RevokeApiKeyPayload { revokedKeyId } } }`,
    });
    await stream.ended;
    const after = await scrape();
    expect(after).toMatchObject({
      requests: before.requests + 1,
      timed: before.timed + 1,
      open: before.open,
      revoked: before.revoked + 1,
      closed: before.closed,
    });
    const own = linesOf('sse-revoked-1');
    expect(own.filter((l) => l.msg === 'request completed')).toHaveLength(1);
    expect(own.filter((l) => l.msg === 'event stream ended')).toEqual([
      expect.objectContaining({ reason: 'revoked', durationMs: expect.any(Number) }),
    ]);
  });

  it('counts the end as `closed` when the client leaves, the request still once', async () => {
    const a = await t.newAccount();
    const before = await scrape();
    const stream = await rawSse(`${t.url}/api/events?token=${a.apiKey}`, { 'x-request-id': 'sse-left-1' });
    await stream.waitFor(/: connected/);
    stream.close();
    let after = await scrape();
    for (let i = 0; i < 100 && after.closed === before.closed; i++) {
      await new Promise((r) => setTimeout(r, 50));
      after = await scrape();
    }
    expect(after).toMatchObject({ requests: before.requests + 1, open: before.open, closed: before.closed + 1 });
    expect(linesOf('sse-left-1').map((l) => [l.msg, l.reason])).toEqual([
      ['incoming request', undefined],
      ['request completed', undefined],
      ['event stream ended', 'closed'],
    ]);
  });

  it('counts a refused stream request as an ordinary request (401), with no stream', async () => {
    const before = await scrape();
    const refused = await fetch(`${t.url}/api/events?token=sk_nope`);
    expect(refused.status).toBe(401);
    const text = await (
      await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    expect(sample(text, 'switchboard_http_requests_total', { ...opened, status: '401' })).toBeGreaterThan(0);
    expect(counts(text)).toMatchObject({ requests: before.requests, open: before.open });
  });
});

describe('an SSE stream ended by shutdown', () => {
  it('is counted as `shutdown` and logged with its reason', async () => {
    const lines: Record<string, unknown>[] = [];
    const t = await loggedApp(lines);
    let closed = false;
    try {
      const a = await t.newAccount();
      const stream = await rawSse(`${t.url}/api/events?token=${a.apiKey}`, { 'x-request-id': 'sse-shutdown-1' });
      await stream.waitFor(/: connected/);
      await t.close();
      closed = true;
      await stream.ended;
      // The exposition GET /metrics answers (the server is closed; its registry is still there).
      const after = counts((await t.app.ctx.metrics.render()).body);
      expect(after).toMatchObject({ requests: 1, open: 0, shutdown: 1, closed: 0 });
      expect(lines.filter((l) => l.reqId === 'sse-shutdown-1').map((l) => [l.msg, l.reason])).toEqual([
        ['incoming request', undefined],
        ['request completed', undefined],
        ['event stream ended', 'shutdown'],
      ]);
    } finally {
      if (!closed) await t.close();
    }
  });
});
