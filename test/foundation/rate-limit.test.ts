import { describe, expect } from 'vitest';
import { accountClient } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const ping = { eventType: 'sms.sent', payload: {} };

const it = appTest({ env: { RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '600000', AUTH_FAILURE_LIMIT: '0' } });

describe('rate limit per API key (RATE_LIMIT_MAX)', () => {
  it('answers 429 RATE_LIMITED with Retry-After and RateLimit-* headers past the limit, per key', async ({ t, a }) => {
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await a.request('POST', '/api/events', ping);
      expect(res.status).toBe(202);
      expect(res.headers.get('ratelimit-limit')).toBe('5');
      remaining.push(res.headers.get('ratelimit-remaining') as string);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const limited = await a.request('POST', '/api/events', ping);
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    expect(Object.keys(limited.body)).toEqual(['error']);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(600);
    expect(limited.headers.get('ratelimit-limit')).toBe('5');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    // Nothing was stored for the refused request.
    const events = await t.app.ctx.db.event.count({ where: { accountId: a.accountId } });
    expect(events).toBe(5);

    const b = await t.newAccount();
    expect((await b.request('POST', '/api/events', ping)).status).toBe(202);
    // A wrong secret with a's key id neither counts against a's budget nor passes.
    const forged = `${a.apiKey.slice(0, 20)}${'A'.repeat(43)}`;
    expect((await accountClient(t.url, a.accountId, forged).request('GET', '/api/events/history')).status).toBe(401);
    // Public routes are not limited.
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
  });
});

const it2 = appTest({
  env: {
    AUTH_FAILURE_LIMIT: '3',
    AUTH_FAILURE_WINDOW_MS: '600000',
    ADMIN_TOKEN: 'admin-token-for-rate-limit-test',
  },
});

describe('failed authentications per client address (AUTH_FAILURE_LIMIT)', () => {
  const it = it2;

  it('answers 429 AUTH_RATE_LIMITED after the limit of 401s, for every failing credential from that address', async ({
    t,
  }) => {
    const good = await t.newAccount();
    const bad = accountClient(t.url, '', `sb_0000000000000000_${'x'.repeat(43)}`);
    for (let i = 0; i < 2; i++) expect((await bad.request('GET', '/api/events/history')).status).toBe(401);
    // Success does not reset or count.
    expect((await good.request('GET', '/api/events/history')).status).toBe(200);
    const wrongAdmin = await fetch(`${t.url}/admin/accounts`, { headers: { authorization: 'Bearer nope' } });
    expect(wrongAdmin.status).toBe(401);
    const limited = await bad.request('GET', '/api/events/history');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('AUTH_RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-limit')).toBe('3');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    // A valid key from the same address is not locked out (issue 26: one NAT or proxy, many customers).
    expect((await good.request('GET', '/api/events/history')).status).toBe(200);
    expect((await bad.request('GET', '/api/events/history')).status).toBe(429);
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
  });
});
