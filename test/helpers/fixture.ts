import { test as base } from 'vitest';
import { type StartOptions, startApp, type TestAccount, type TestApp } from './app.js';

/** Options of a file's app: {@link StartOptions}, or a function computing them when the app starts. */
export type AppTestOptions = StartOptions | (() => StartOptions | Promise<StartOptions>);

/**
 * The test API of a file whose tests share one running app ("an app, an account, a client"; issue 23).
 *
 * Fixtures (vitest `test.extend`, set up only when a test or hook destructures them):
 * - `t` ({@link TestApp}), scope `file`: the app, started by the first test that asks for it with `options`
 *   (env, clock, …) and closed after the file's last test and `afterAll` hooks. One app per file: an app costs a
 *   database, migrations and listeners.
 * - `a`, `b` ({@link TestAccount}), scope `test`: a fresh account of that app per test (with full scopes), each
 *   a client sending its own API key. Tests that make their own accounts never see each other's rows, so they may
 *   run with `.concurrent`, unless they share mutable state (a `ManualClock`, a captured event list, logs, env).
 *
 * Call it once per file, at the top level (vitest refuses file-scoped fixtures declared inside `describe`); a file
 * that needs two apps with different options calls it twice (each call has its own app):
 *
 * ```ts
 * const it = appTest({ env: { RATE_LIMIT_MAX: '5' } });
 * it('answers 429 past the limit', async ({ t, a }) => { … });
 * it.beforeAll(({ t }) => { t.app.ctx.bus.subscribe(…) }); // file-scoped fixtures reach suite hooks
 * ```
 */
export function appTest(options: AppTestOptions = {}) {
  return (
    base
      // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern (none).
      .extend('t', { scope: 'file' }, async ({}, { onCleanup }): Promise<TestApp> => {
        const t = await startApp(typeof options === 'function' ? await options() : options);
        onCleanup(() => t.close());
        return t;
      })
      .extend('a', async ({ t }): Promise<TestAccount> => t.newAccount())
      .extend('b', async ({ t }): Promise<TestAccount> => t.newAccount())
  );
}
