import { Writable } from 'node:stream';
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/infra/logger.js';
import { brandBody } from '../compliance/fixtures.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { rawSse } from '../helpers/sse.js';

// docs/operations.md "Metrics" and "Logs": an SSE stream's opening is one HTTP request (counted, logged and traced
// when the stream is established, status 200); its life is switchboard_open_streams, switchboard_streams_ended_total
// by reason and the `event stream ended` line. A GraphQL subscription is counted as transport `graphql`, and
// completes within a heartbeat once its key is revoked, whichever kind of feed it is.

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
  graphql: {
    open: sample(text, 'switchboard_open_streams', { transport: 'graphql' }),
    revoked: sample(text, 'switchboard_streams_ended_total', { transport: 'graphql', reason: 'revoked' }),
    closed: sample(text, 'switchboard_streams_ended_total', { transport: 'graphql', reason: 'closed' }),
  },
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

  describe('a GraphQL subscription, ended when its key is revoked', () => {
    const graphqlCounts = async () => (await scrape()).graphql;
    /** Polls the metrics until `done` holds (at most 200 scrapes); returns the last counts. */
    const until = async (done: (c: Awaited<ReturnType<typeof graphqlCounts>>) => boolean) => {
      let c = await graphqlCounts();
      for (let i = 0; i < 200 && !done(c); i++) {
        await new Promise((r) => setTimeout(r, 25));
        c = await graphqlCounts();
      }
      return c;
    };

    // One of each kind of feed: the event stream (`events`), a typed change feed with replay (`brandUpdated`), and a
    // live-only notice feed (`webhookDeliveryAttempted`, no change made: only its end is watched). `live`: whether a
    // brand registered while the subscription is open reaches it (it does before the revocation).
    const subscriptions: [
      string,
      string,
      (admin: Awaited<ReturnType<TestApp['newAccount']>>) => Promise<unknown>,
      live: boolean,
    ][] = [
      ['events', 'subscription { events { ... on Event { id } } }', async () => ({}), true],
      ['brandUpdated', 'subscription { brandUpdated { eventId brand { id name } } }', async () => ({}), true],
      [
        'webhookDeliveryAttempted',
        'subscription ($id: ID!) { webhookDeliveryAttempted(webhookId: $id) { attempt } }',
        async (admin) => {
          const created = await admin.request('POST', '/api/webhooks', {
            url: 'https://example.com/hook',
            events: ['sms.*'],
          });
          expect(created.status).toBe(201);
          return { id: created.body.id };
        },
        false,
      ],
    ];
    for (const [name, query, variablesOf, live] of subscriptions) {
      it(`${name}: counted while open, completed within a heartbeat of the revocation, counted as revoked`, async () => {
        const admin = await t.newAccount();
        const issued = await admin.request('POST', '/graphql', {
          query:
            'mutation { issueApiKey(input: { name: "live", scopes: [EVENTS_READ, COMPLIANCE, WEBHOOKS] }) { ... on IssueApiKeyPayload { issuedApiKey { keyId apiKey } } } }',
        });
        const { keyId, apiKey } = issued.body.data.issueApiKey.issuedApiKey as { keyId: string; apiKey: string };
        const variables = (await variablesOf(admin)) as Record<string, unknown>;
        const before = await graphqlCounts();
        const client = createClient({
          url: `${t.url}/graphql/stream`,
          headers: { authorization: `Bearer ${apiKey}` },
          retryAttempts: 0,
        });
        try {
          const results: unknown[] = [];
          const iterator = client.iterate({ query, variables });
          const drained = (async () => {
            for (let r = await iterator.next(); !r.done; r = await iterator.next()) results.push(r.value);
          })();
          const during = await until((c) => c.open === before.open + 1);
          expect(during).toMatchObject({ open: before.open + 1, revoked: before.revoked });
          if (live) {
            expect((await admin.request('POST', '/compliance/brands', brandBody())).status).toBe(201);
            for (let i = 0; i < 400 && results.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
            expect(results).toHaveLength(1);
          }

          const revoked = await admin.request('POST', '/graphql', {
            query: `mutation { revokeApiKey(input: { keyId: "${keyId}" }) { ... on RevokeApiKeyPayload { revokedKeyId } } }`,
          });
          expect(revoked.body.data.revokeApiKey.revokedKeyId).toBe(keyId);
          // The server completes the subscription: nothing more reaches the holder of the revoked key.
          await drained;
          expect(results).toHaveLength(live ? 1 : 0);
          const after = await until((c) => c.open === before.open);
          expect(after).toMatchObject({ open: before.open, revoked: before.revoked + 1, closed: before.closed });
        } finally {
          client.dispose();
        }
      });
    }

    it('a subscription the client ends is counted as closed', async () => {
      const a = await t.newAccount();
      const before = await graphqlCounts();
      const client = createClient({
        url: `${t.url}/graphql/stream`,
        headers: { authorization: `Bearer ${a.apiKey}` },
        retryAttempts: 0,
      });
      try {
        const iterator = client.iterate({ query: 'subscription { brandUpdated { eventId } }' });
        const first = iterator.next();
        await until((c) => c.open === before.open + 1);
        await iterator.return?.();
        await first.catch(() => undefined);
        const after = await until((c) => c.closed === before.closed + 1);
        expect(after).toMatchObject({ open: before.open, closed: before.closed + 1, revoked: before.revoked });
      } finally {
        client.dispose();
      }
    });
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
