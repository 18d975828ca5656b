// Issue 26, item 8: the failed-authentication limiter slows failing credentials without locking out valid keys from
// the same address (as Stripe and GitHub do), and counts the client address TRUST_PROXY names.
import { request as httpRequest } from 'node:http';
import { describe, expect } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const LIMIT = 20;
const BAD = `sb_0000000000000000_${'x'.repeat(43)}`;

/** One request from `localAddress` (a loopback address of this host) with extra headers: status and body. */
function send(
  t: TestApp,
  path: string,
  opts: { key?: string; localAddress?: string; forwardedFor?: string; method?: string; body?: unknown } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }> {
  const url = new URL(path, t.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: opts.method ?? 'GET',
        localAddress: opts.localAddress ?? '127.0.0.1',
        headers: {
          ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
          ...(opts.forwardedFor ? { 'x-forwarded-for': opts.forwardedFor } : {}),
          ...(opts.body ? { 'content-type': 'application/json' } : {}),
          connection: 'close',
        },
      },
      (res) => {
        if ((res.headers['content-type'] ?? '').includes('text/event-stream')) {
          // A stream opened: that is the answer; close it.
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: undefined });
          req.destroy();
          return;
        }
        let text = '';
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => {
          let body: any = text;
          try {
            body = JSON.parse(text);
          } catch {}
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.on('error', reject);
    req.end(opts.body ? JSON.stringify(opts.body) : undefined);
  });
}

const it = appTest({
  env: { AUTH_FAILURE_LIMIT: String(LIMIT), AUTH_FAILURE_WINDOW_MS: '600000', TRUST_PROXY: '127.0.0.1' },
});

describe('failed authentications per client address', () => {
  it('answers 429 to failing credentials past the limit while a valid key from the same address keeps working', async ({
    t,
  }) => {
    const good = await t.newAccount();
    const client = '203.0.113.7';
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++)
      statuses.push((await send(t, '/api/events/history', { key: BAD, forwardedFor: client })).status);
    expect(statuses.slice(0, LIMIT).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(LIMIT).every((s) => s === 429)).toBe(true);
    const limited = await send(t, '/api/events/history', { key: 'garbage', forwardedFor: client });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('AUTH_RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // No credential at all counts as a failure too.
    expect((await send(t, '/api/events/history', { forwardedFor: client })).status).toBe(429);

    // The valid key from that very address: REST, GraphQL and an event stream all work.
    const opts = { key: good.apiKey, forwardedFor: client };
    expect((await send(t, '/api/events/history', opts)).status).toBe(200);
    const gql = await send(t, '/graphql', { ...opts, method: 'POST', body: { query: '{ viewer { accountId } }' } });
    expect(gql.status).toBe(200);
    expect(gql.body.data.viewer.accountId).toBe(good.accountId);
    expect((await send(t, '/api/events', opts)).status).toBe(200);

    // Another client behind the same proxy has its own budget.
    expect((await send(t, '/api/events/history', { key: BAD, forwardedFor: '203.0.113.8' })).status).toBe(401);
  });

  it('counts the socket address when the request does not come through a trusted proxy', async ({ t }) => {
    // 127.0.0.3 is not a trusted proxy: its X-Forwarded-For is ignored, so rotating it does not reset the count.
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 5; i++) {
      const forwardedFor = `198.51.100.${i}`;
      statuses.push(
        (await send(t, '/api/events/history', { key: BAD, localAddress: '127.0.0.3', forwardedFor })).status,
      );
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(LIMIT);
    expect(statuses.slice(LIMIT).every((s) => s === 429)).toBe(true);
    const good = await t.newAccount();
    expect((await send(t, '/api/events/history', { key: good.apiKey, localAddress: '127.0.0.3' })).status).toBe(200);
  });
});
