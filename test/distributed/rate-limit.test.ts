import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountClient, startApp, type TestApp } from '../helpers/app.js';

/** Two instances sharing PostgreSQL and Redis: the rate limits are counted in Redis, so they hold across both. */
describe('rate limits across two instances (Redis store)', () => {
  let one: TestApp;
  let two: TestApp;
  const env = {
    REDIS_URL: process.env.TEST_REDIS_URL!,
    REDIS_KEY_PREFIX: `sb-test-${randomUUID()}:`,
    RATE_LIMIT_MAX: '4',
    RATE_LIMIT_WINDOW_MS: '600000',
    AUTH_FAILURE_LIMIT: '2',
    AUTH_FAILURE_WINDOW_MS: '600000',
  };
  beforeAll(async () => {
    one = await startApp({ env });
    two = await startApp({ env });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  it('counts one key over both instances, and failed authentications of one address over both', async () => {
    const a = await one.newAccount();
    const onTwo = accountClient(two.url, a.accountId, a.apiKey);
    expect((await a.request('GET', '/api/events/history')).status).toBe(200);
    expect((await onTwo.request('GET', '/api/events/history')).status).toBe(200);
    expect((await a.request('GET', '/api/events/history')).status).toBe(200);
    const last = await onTwo.request('GET', '/api/events/history');
    expect(last.status).toBe(200);
    expect(last.headers.get('ratelimit-remaining')).toBe('0');
    const limited = await a.request('GET', '/api/events/history');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    const bad = `sb_0000000000000000_${'y'.repeat(43)}`;
    expect((await accountClient(one.url, '', bad).request('GET', '/api/events/history')).status).toBe(401);
    expect((await accountClient(two.url, '', bad).request('GET', '/api/events/history')).status).toBe(401);
    const blocked = await accountClient(one.url, '', bad).request('GET', '/api/events/history');
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe('AUTH_RATE_LIMITED');
  });
});
