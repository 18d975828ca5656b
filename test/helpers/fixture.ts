import { test as base } from 'vitest';
import { type StartOptions, startApp, type TestAccount, type TestApp } from './app.js';

/**
 * Options of a file's app: {@link StartOptions}, or a function computing them when the app starts, which may start
 * the peers the app talks to (an SMTP sink, a DNS server, a webhook receiver) and register their `onCleanup`: those
 * run after the app has closed, last registered first, so a peer outlives the app that uses it.
 */
export type AppTestOptions =
  | StartOptions
  | ((peers: { onCleanup(fn: () => unknown): void }) => StartOptions | Promise<StartOptions>);

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
 *
 * let sink: SmtpSink; // a peer started with the app and closed after it
 * const it = appTest(async ({ onCleanup }) => {
 *   sink = await startSmtpSink();
 *   onCleanup(() => sink.close());
 *   return { env: { SMTP_RELAY_URL: sink.url } };
 * });
 * ```
 */
export function appTest(options: AppTestOptions = {}) {
  return (
    base
      // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern (none).
      .extend('t', { scope: 'file' }, async ({}, { onCleanup }): Promise<TestApp> => {
        const peers: (() => unknown)[] = [];
        let t: TestApp | undefined;
        onCleanup(async () => {
          await t?.close();
          for (const fn of peers.reverse()) await fn();
        });
        t = await startApp(
          typeof options === 'function' ? await options({ onCleanup: (fn) => peers.push(fn) }) : options,
        );
        return t;
      })
      .extend('a', async ({ t }): Promise<TestAccount> => t.newAccount())
      .extend('b', async ({ t }): Promise<TestAccount> => t.newAccount())
  );
}
