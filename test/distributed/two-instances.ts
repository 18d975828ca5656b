import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { type StartOptions, startApp, type TestApp } from '../helpers/app.js';

/** Two instances of the app on one PostgreSQL and one Redis, and the environment both were started with. */
export interface TwoInstances {
  one: TestApp;
  two: TestApp;
  /** `REDIS_URL` (TEST_REDIS_URL), a `REDIS_KEY_PREFIX` of this block's own, and the caller's `env` on top. */
  env: Record<string, string>;
}

/**
 * For one describe block: starts two instances sharing PostgreSQL (TEST_DATABASE_URL) and Redis (TEST_REDIS_URL) in
 * `beforeAll` and closes both in `afterAll`. The Redis key prefix is new per call, so suites sharing this Redis never
 * see (or send) each other's events. `opts` (clock, workers, extra env) apply to both instances. `one` and `two` are
 * set once `beforeAll` has run (read them inside tests); `env` is set at once.
 */
export function useTwoInstances(opts: StartOptions = {}): TwoInstances {
  const env = {
    REDIS_URL: process.env.TEST_REDIS_URL!,
    REDIS_KEY_PREFIX: `sb-test-${randomUUID()}:`,
    ...opts.env,
  };
  const fixture = { env } as Partial<TwoInstances> as TwoInstances;
  beforeAll(async () => {
    fixture.one = await startApp({ ...opts, env });
    fixture.two = await startApp({ ...opts, env });
  });
  afterAll(async () => {
    await fixture.one?.close();
    await fixture.two?.close();
  });
  return fixture;
}
