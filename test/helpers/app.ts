import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import pg from 'pg';
import type { Logger } from 'pino';
import { type App, type BuildOptions, buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createAccount, type Scope } from '../../src/domain/accounts/account.service.js';
import { type Clock, ManualClock } from '../../src/infra/clock.js';

/** A JSON HTTP answer. */
export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** One GraphQL answer. */
export interface GqlResult<T> {
  status: number;
  data?: T;
  errors?: { message: string; path?: string[]; extensions?: Record<string, any> }[];
}

/** An account of a running test app, with helpers that send its API key. */
export interface TestAccount {
  accountId: string;
  apiKey: string;
  /** Sends a JSON request with `Authorization: Bearer <apiKey>` (unless `headers.authorization` is given). */
  request<T = any>(
    method: string,
    urlPath: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<HttpResult<T>>;
  /** Runs a typed GraphQL document (from test/generated `graphql()`). */
  gql<TData, TVars>(
    doc: TypedDocumentNode<TData, TVars>,
    variables?: TVars,
    headers?: Record<string, string>,
  ): Promise<GqlResult<TData>>;
}

/** A running app on an ephemeral port. */
export interface TestApp {
  app: App;
  url: string;
  clock: Clock;
  /** Creates a fresh account (every test isolates itself by using its own). */
  newAccount(scopes?: readonly Scope[]): Promise<TestAccount>;
  /** Runs every background worker until nothing is due (use after moving a ManualClock). */
  drain(): Promise<number>;
  close(): Promise<void>;
}

/** Whether this run targets PostgreSQL (TEST_DATABASE_URL) rather than embedded PGlite. */
export const usingPostgres = Boolean(process.env.TEST_DATABASE_URL);

let fileDatabase: Promise<string> | undefined;

/**
 * Starts the next test file on a database of its own. Test files share loaded modules within a worker
 * (`isolate: false` in test/vitest.config.ts), so test/helpers/per-file.ts calls this before each file.
 */
export function forgetFileDatabase(): void {
  fileDatabase = undefined;
}

/**
 * On PostgreSQL, each test file gets its own database (`<TEST_DATABASE_URL's name>_<random>`, created on first use
 * and shared by every app the file starts), so one file's background workers never act on another file's rows
 * while files run in parallel. .ci/run drops them all at the end.
 */
export function testDatabaseUrl(): Promise<string> | undefined {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) return undefined;
  fileDatabase ??= (async () => {
    const url = new URL(base);
    const name = `${url.pathname.slice(1)}_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${name}"`);
    } finally {
      await admin.end();
    }
    url.pathname = `/${name}`;
    return url.toString();
  })();
  return fileDatabase;
}

/** Options of {@link startApp}. */
export interface StartOptions {
  clock?: Clock;
  env?: Record<string, string>;
  dataDir?: string;
  startWorkers?: boolean;
  /** A logger to capture log lines (default: the app's own, at TEST_LOG_LEVEL or silent). */
  logger?: Logger;
  /** Events whose bus publish is dropped (BuildOptions.dropPublish: a lost publish, for live-delivery tests). */
  dropPublish?: BuildOptions['dropPublish'];
  /** Prisma `query` events on `app.ctx.db` (BuildOptions.logQueries), to count SQL statements. */
  logQueries?: boolean;
}

/**
 * Starts the app on 127.0.0.1:0. Database: PostgreSQL when TEST_DATABASE_URL is set, else PGlite in memory (or in
 * `dataDir` to test restarts). With a {@link ManualClock}, background polling is off and tests call `drain()`.
 */
export async function startApp(opts: StartOptions = {}): Promise<TestApp> {
  const config = loadConfig({
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    BOOTSTRAP_ACCOUNT: 'false',
    DATA_DIR: opts.dataDir ?? 'memory://',
    DATABASE_URL: await testDatabaseUrl(),
    SMTP_PORT: '0',
    SMTP_SUBMISSION_PORT: '0',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WORKER_POLL_MS: '50',
    // No test asks the network: by default DNS goes to a closed loopback port (answers ECONNREFUSED at once, so
    // sender authentication yields temperror quickly); tests of DNS start a server (test/helpers/dns-server.ts).
    DNS_SERVERS: '127.0.0.1:9',
    ...opts.env,
  });
  const manual = opts.clock instanceof ManualClock;
  const app = await buildApp(config, {
    clock: opts.clock,
    logger: opts.logger,
    startWorkers: opts.startWorkers ?? !manual,
    dropPublish: opts.dropPublish,
    logQueries: opts.logQueries,
  });
  const url = await app.listen();
  return {
    app,
    url,
    clock: app.ctx.clock,
    newAccount: async (scopes) => {
      const { accountId, apiKey } = await createAccount(app.ctx.db, { name: `test-${Date.now()}`, scopes });
      return accountClient(url, accountId, apiKey);
    },
    drain: () => app.ctx.workers.drain(),
    close: () => app.close(),
  };
}

/** Helpers bound to one API key. */
export function accountClient(url: string, accountId: string, apiKey: string): TestAccount {
  const request = async (method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${urlPath}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {}
    return { status: res.status, headers: res.headers, body: parsed as any };
  };
  return {
    accountId,
    apiKey,
    request,
    async gql(doc, variables, headers) {
      const res = await request('POST', '/graphql', { query: print(doc), variables }, headers);
      return { status: res.status, ...(res.body as object) } as GqlResult<any>;
    },
  };
}

/** A temporary directory, removed by the returned cleanup. */
export async function tempDir(prefix = 'switchboard-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
