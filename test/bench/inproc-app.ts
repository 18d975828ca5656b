/**
 * The app as the in-process bench scripts build it (test/bench/inproc.ts, test/bench/append-probe.ts): on a fresh
 * PostgreSQL database created for the run, workers off, production settings, no SMTP listeners, no rate limit.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createAccount } from '../../src/domain/accounts/account.service.js';
import { cpuMs } from './lib.js';

/** The app, its database's name and URL, and `close` (the app, then the database dropped). */
export interface InprocApp {
  app: Awaited<ReturnType<typeof buildApp>>;
  dbName: string;
  url: string;
  close(): Promise<void>;
}

/**
 * Creates database `<prefix>_<8 hex>` on the server of TEST_DATABASE_URL (default the local postgres) and builds the
 * app on it with `env` added to the configuration (e.g. WEBHOOK_ALLOW_PRIVATE_NETWORKS); `workers: true` starts its
 * workers (the dispatcher, the job queue) as `npm start` does, with its HTTP listener (port 0).
 * @throws what CREATE DATABASE or the app's start throws.
 */
export async function startInprocApp(
  prefix: string,
  env: Record<string, string> = {},
  opts: { workers?: boolean } = {},
): Promise<InprocApp> {
  const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${dbName}"`);
  const url = new URL(base);
  url.pathname = `/${dbName}`;
  const app = await buildApp(
    loadConfig({
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      BOOTSTRAP_ACCOUNT: 'false',
      DATABASE_URL: url.toString(),
      DATA_DIR: 'memory://',
      SMTP_PORT: '-1',
      SMTP_SUBMISSION_PORT: '-1',
      RATE_LIMIT_MAX: process.env.RATE_LIMIT_MAX ?? '0',
      SECRETS_KEY: randomBytes(32).toString('base64'),
      ...env,
    }),
    { startWorkers: opts.workers === true },
  );
  // The workers start with the listeners (buildApp's `listen`), on port 0.
  if (opts.workers) await app.listen();
  return {
    app,
    dbName,
    url: url.toString(),
    async close() {
      await app.close();
      // A pool client still idle when the database goes away reports the termination; nothing to do about it here.
      process.on('uncaughtException', (err) => {
        if (!/terminating connection/.test(String(err))) throw err;
      });
      await admin.query(`DROP DATABASE "${dbName}" WITH (FORCE)`);
      await admin.end();
    },
  };
}

/**
 * CPU ms (user + system) of database `dbName`'s backends other than `c`'s own, from /proc/<pid>/stat (clock ticks of
 * 10 ms; the PostgreSQL server must run on this machine). A backend that ended meanwhile counts 0.
 */
export async function backendCpuMs(c: pg.Client, dbName: string): Promise<number> {
  const { rows } = await c.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
    dbName,
  ]);
  let ms = 0;
  for (const { pid } of rows as { pid: number }[]) {
    try {
      ms += cpuMs(pid);
    } catch {
      // A backend that ended meanwhile.
    }
  }
  return ms;
}

/**
 * Counts the statements every pg client but `except` sends from now on (pg `Client.query` patched for the process):
 * `statements` in all and `kinds` by their first `headLength` characters (white space folded); `onQuery` sees each
 * one's text and values. `reset()` zeroes both counts.
 */
export function countStatements(
  except: pg.Client,
  headLength: number,
  onQuery?: (text: string, values: unknown[] | undefined) => void,
): { statements: number; kinds: Map<string, number>; reset(): void } {
  const counts = {
    statements: 0,
    kinds: new Map<string, number>(),
    reset() {
      counts.statements = 0;
      counts.kinds.clear();
    },
  };
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...a: unknown[]) {
    if (this !== except) {
      counts.statements++;
      const q = a[0] as string | { text?: string; values?: unknown[] };
      const text = typeof q === 'string' ? q : (q?.text ?? '');
      const head = text.replace(/\s+/g, ' ').trim().slice(0, headLength);
      counts.kinds.set(head, (counts.kinds.get(head) ?? 0) + 1);
      onQuery?.(text, (typeof q === 'string' ? a[1] : q.values) as unknown[] | undefined);
    }
    return query.apply(this, a);
  };
  return counts;
}

/**
 * The end-to-end webhook bench's accounts: 2 accounts, each with one `sms.*` webhook to `urlOf(i)`, made through
 * the app's own routes. @returns each account's request headers (API key, JSON). @throws when a webhook is refused.
 */
export async function hookAccounts(app: InprocApp['app'], prefix: string, urlOf: (i: number) => string) {
  const headers: Record<string, string>[] = [];
  for (let i = 0; i < 2; i++) {
    const { apiKey } = await createAccount(app.ctx.db, { name: `${prefix}-${i}` });
    const h = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const r = await app.http.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: h,
      payload: { url: urlOf(i), events: ['sms.*'] },
    });
    if (r.statusCode !== 201 && r.statusCode !== 200) throw new Error(`webhook: ${r.statusCode} ${r.body}`);
    headers.push(h);
  }
  return headers;
}

/** The probes' event body: one `sms.delivered` event (spec 6.2), as JSON text. */
export const PROBE_EVENT = JSON.stringify({
  eventType: 'sms.delivered',
  payload: { id: 'm1', from: '+14155550100', to: '+14155550101', status: 'delivered' },
});

/**
 * Posts `n` events ({@link PROBE_EVENT}) through `app.http.inject` with 10 in flight, alternating the accounts'
 * `headers` (as {@link hookAccounts} returns them). @throws unless every answer is 202.
 */
export async function postEvents(app: InprocApp['app'], headers: Record<string, string>[], n: number): Promise<void> {
  let next = 0;
  const worker = async (_: unknown, w: number) => {
    while (next++ < n) {
      const r = await app.http.inject({
        method: 'POST',
        url: '/api/events',
        headers: headers[w % headers.length]!,
        payload: PROBE_EVENT,
      });
      if (r.statusCode !== 202) throw new Error(`ingest: ${r.statusCode} ${r.body}`);
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
}
