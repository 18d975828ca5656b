/**
 * The app as the in-process bench scripts build it (test/bench/inproc.ts, test/bench/append-probe.ts): on a fresh
 * PostgreSQL database created for the run, workers off, production settings, no SMTP listeners, no rate limit.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

/** The app, its database's name and URL, and `close` (the app, then the database dropped). */
export interface InprocApp {
  app: Awaited<ReturnType<typeof buildApp>>;
  dbName: string;
  url: string;
  close(): Promise<void>;
}

/**
 * Creates database `<prefix>_<8 hex>` on the server of TEST_DATABASE_URL (default the local postgres) and builds the
 * app on it with `env` added to the configuration (e.g. WEBHOOK_ALLOW_PRIVATE_NETWORKS).
 * @throws what CREATE DATABASE or the app's start throws.
 */
export async function startInprocApp(prefix: string, env: Record<string, string> = {}): Promise<InprocApp> {
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
    { startWorkers: false },
  );
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
