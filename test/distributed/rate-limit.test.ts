import { describe, expect, it } from 'vitest';
import { accountClient } from '../helpers/app.js';
import { useTwoInstances } from './two-instances.js';

/** Two instances sharing PostgreSQL and Redis: the rate limits are counted in Redis, so they hold across both. */
describe('rate limits across two instances (Redis store)', () => {
  const apps = useTwoInstances({
    env: {
      RATE_LIMIT_MAX: '4',
      RATE_LIMIT_WINDOW_MS: '600000',
      AUTH_FAILURE_LIMIT: '2',
      AUTH_FAILURE_WINDOW_MS: '600000',
    },
  });

  it('counts one key over both instances, and failed authentications of one address over both', async () => {
    const { one, two } = apps;
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
