import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import type { Database, Statement } from '../domain/kernel/db.js';
import { PrismaClient } from '../generated/prisma/client.js';
import { lockDataDir } from './data-dir-lock.js';
import { tracedAdapter, tracedDatabase } from './db-tracing.js';
import { installRowShape } from './pg-row-shape.js';
import { tracingEnabled } from './tracing.js';

/** The rows of a driver's result (pg's and PGlite's have the same `rows`). */
function rowsOf<T>(result: { rows: T[] }): T[] {
  return result.rows;
}
/**
 * A fresh PGlite data directory with every migration applied, as a gzipped tar made by `npm run build`
 * (scripts/build.mjs, from src/build-template.ts) next to the bundled code. A first start unpacks it instead of
 * running initdb, which is most of a first start's time (measured in docs/operations.md). Absent when running
 * from sources (tsx, vitest): those run initdb as before.
 */
export const PGLITE_TEMPLATE = fileURLToPath(new URL('./pglite-template.tgz', import.meta.url));

export type { Database, Db, RawSql, Statement, Tx } from '../domain/kernel/db.js';

/**
 * Interactive-transaction limits, in ms. Prisma's defaults (wait 2 s for a connection, 5 s to finish) turned a burst
 * of 200 concurrent event writes into 94 answers of 500, because event-writing transactions queue on one advisory
 * lock (src/domain/events/event-log.ts); a burst now waits its turn instead.
 */
export const TRANSACTION_OPTIONS = { maxWait: 15_000, timeout: 30_000 } as const;

/** PostgreSQL's type oid of `bytea`. */
const BYTEA_OID = 17;

/**
 * `bytea` values to and from PGlite's text protocol through Node's native hex codec. PGlite's own (0.4) turns every
 * byte into a JS number and a two-character string (`Array.from(bytes).map(…).join('')`, and back with `parseInt`
 * per byte): a 256 KiB chunk of a raw message made about 10 MB of garbage in the JS heap and took ~0.3 s of CPU, so
 * a burst of large inbound mail grew the heap by hundreds of MB (issue 26 item 3; docs/operations.md "Inbound memory
 * under a burst"). Same text on the wire (`\x` + hex), so nothing changes for the database.
 */
export const PGLITE_BYTEA = {
  serializers: {
    [BYTEA_OID]: (x: unknown) => {
      if (!(x instanceof Uint8Array)) throw new Error('Invalid input for bytea type');
      return `\\x${Buffer.from(x.buffer, x.byteOffset, x.byteLength).toString('hex')}`;
    },
  },
  parsers: {
    [BYTEA_OID]: (x: string) => {
      const bytes = Buffer.from(x.slice(2), 'hex');
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
  },
};

/**
 * Runs `query` in a transaction of its own on a pool connection, after `SET LOCAL` of each of `planner` (trusted
 * `name = value` text from the code, never from a request): BEGIN and the settings in one round trip, the statement,
 * COMMIT. Rolled back and rethrown when any of them fails, so rows are returned only when their writes committed.
 */
async function withPlannerSettings<T>(
  pool: pg.Pool,
  planner: readonly string[],
  query: { text: string; values: readonly unknown[] },
): Promise<T[]> {
  const client = await pool.connect();
  try {
    await client.query(`BEGIN; ${planner.map((s) => `SET LOCAL ${s}`).join('; ')}`);
    const rows = (await client.query(query.text, query.values as unknown[])).rows as T[];
    await client.query('COMMIT');
    client.release();
    return rows;
  } catch (err) {
    // A connection that cannot roll back is dropped from the pool, not reused.
    const broken = await client.query('ROLLBACK').then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    );
    client.release(broken);
    throw err;
  }
}

/** Most distinct statement texts {@link Database.statement} prepares (named); others run unnamed. */
const PREPARED_TEXTS_MAX = 200;

/**
 * Opens PostgreSQL when `databaseUrl` is set (pool through @prisma/adapter-pg), otherwise embedded PGlite in
 * `dataDir/pglite` (or in memory when `dataDir` is `memory://`), holding `dataDir/switchboard.lock` until closed.
 * A new PGlite directory starts from {@link PGLITE_TEMPLATE} when the build made one.
 * @throws DataDirLockedError (src/infra/data-dir-lock.ts) when another live process has `dataDir` open.
 */
export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  // With tracing on (decided here, once), every statement is a span: src/infra/db-tracing.ts.
  if (!tracingEnabled()) return open(opts, (adapter) => adapter);
  return tracedDatabase(await open(opts, tracedAdapter));
}

/** What {@link openDatabase} takes. */
export interface OpenDatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  /** Emit Prisma `query` events (one per SQL statement) for tests that count statements. */
  logQueries?: boolean;
}

async function open(
  opts: OpenDatabaseOptions,
  wrap: <F extends object>(adapter: F, mode: Database['kind']) => F,
): Promise<Database> {
  const log = opts.logQueries ? ([{ emit: 'event', level: 'query' }] as const) : undefined;
  // Each mode loads only its own driver (docs/operations.md "Start-up").
  if (opts.databaseUrl) {
    const [{ PrismaPg }, { default: pg }] = await Promise.all([import('@prisma/adapter-pg'), import('pg')]);
    // Every row of every statement without pg's slow copy of its row template (src/infra/pg-row-shape.ts).
    installRowShape(pg);
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10 });
    const preparedNames = new Map<string, string>();
    const prisma = new PrismaClient({
      adapter: wrap(new PrismaPg(pool), 'postgres'),
      transactionOptions: TRANSACTION_OPTIONS,
      ...(log ? { log: [...log] } : {}),
    }) as PrismaClient;
    return {
      kind: 'postgres',
      prisma,
      // `.then`, not an async function: one promise per read instead of two (the hot reads, issue 24).
      read<T>(statement: Statement, params: unknown[]) {
        return pool.query({ name: statement.name, text: statement.text, values: params }).then(rowsOf) as Promise<T[]>;
      },
      async statement<T>(query: { text: string; values: readonly unknown[] }, planner?: readonly string[]) {
        if (!planner?.length) return (await pool.query(query.text, query.values as unknown[])).rows as T[];
        return await withPlannerSettings(pool, planner, query);
      },
      async preparedWrite(text: string, values: unknown[]) {
        // A named prepared statement per distinct text (a write's shape: which hooks write, how many writes share
        // it), so PostgreSQL parses and plans it once per connection; past PREPARED_TEXTS_MAX shapes, unnamed.
        let name = preparedNames.get(text);
        if (name === undefined && preparedNames.size < PREPARED_TEXTS_MAX) {
          name = `w_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
          preparedNames.set(text, name);
        }
        return (await pool.query(name ? { name, text, values } : { text, values })).rows;
      },
      async raw() {
        const client = await pool.connect();
        return {
          async exec(sql) {
            await client.query(sql);
          },
          async query(sql, params) {
            return (await client.query(sql, params as unknown[])).rows;
          },
          async release() {
            client.release();
          },
        };
      },
      async listen(channel, onNotify, onReconnect) {
        let client: pg.Client | undefined;
        let stopped = false;
        let retry: NodeJS.Timeout | undefined;
        const connect = async (again: boolean): Promise<void> => {
          const c = new pg.Client({ connectionString: opts.databaseUrl });
          c.on('notification', (n) => {
            if (n.channel === channel) onNotify(n.payload ?? '');
          });
          c.on('error', () => reconnect());
          c.on('end', () => reconnect());
          await c.connect();
          await c.query(`LISTEN "${channel.replace(/"/g, '')}"`);
          client = c;
          if (again) onReconnect?.();
        };
        const reconnect = () => {
          if (stopped || retry) return;
          client?.removeAllListeners();
          client?.end().catch(() => {});
          client = undefined;
          retry = setTimeout(() => {
            retry = undefined;
            connect(true).catch(() => reconnect());
          }, 1000);
          retry.unref();
        };
        await connect(false);
        return async () => {
          stopped = true;
          if (retry) clearTimeout(retry);
          const c = client;
          client = undefined;
          c?.removeAllListeners();
          c?.on('error', () => {});
          await c?.end().catch(() => {});
        };
      },
      async close() {
        await prisma.$disconnect();
        await pool.end();
      },
    };
  }
  const memory = opts.dataDir === 'memory://' || opts.dataDir.startsWith('memory://');
  let dataDir: string | undefined;
  let release = () => {};
  let loadDataDir: Blob | undefined;
  if (!memory) {
    dataDir = path.resolve(opts.dataDir, 'pglite');
    mkdirSync(dataDir, { recursive: true });
    release = await lockDataDir(path.resolve(opts.dataDir));
    if (!existsSync(path.join(dataDir, 'PG_VERSION')) && existsSync(PGLITE_TEMPLATE)) {
      loadDataDir = new Blob([readFileSync(PGLITE_TEMPLATE)]);
    }
  }
  let lite: PGlite;
  const [{ PGlite }, { PrismaPGlite }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('pglite-prisma-adapter'),
  ]);
  try {
    lite = await PGlite.create({
      ...(dataDir ? { dataDir, ...(loadDataDir ? { loadDataDir } : {}) } : {}),
      ...PGLITE_BYTEA,
    });
  } catch (err) {
    release();
    throw err;
  }
  const shared = yieldingPGlite(lite);
  const prisma = new PrismaClient({
    adapter: wrap(new PrismaPGlite(shared), 'pglite'),
    transactionOptions: TRANSACTION_OPTIONS,
    ...(log ? { log: [...log] } : {}),
  }) as PrismaClient;
  return {
    kind: 'pglite',
    prisma,
    read<T>(statement: Statement, params: unknown[]) {
      return shared.query<T>(statement.text, params).then(rowsOf) as Promise<T[]>;
    },
    async statement<T>(query: { text: string; values: readonly unknown[] }) {
      return (await shared.query<T>(query.text, query.values as unknown[])).rows;
    },
    async preparedWrite(text: string, values: unknown[]) {
      return (await shared.query<Record<string, unknown>>(text, values)).rows;
    },
    async raw() {
      return {
        async exec(sql) {
          await shared.exec(sql);
        },
        async query(sql, params) {
          return (await shared.query(sql, params as unknown[])).rows as never;
        },
        async release() {},
      };
    },
    async listen(channel, onNotify) {
      const unsubscribe = await lite.listen(channel, onNotify);
      return async () => {
        await unsubscribe().catch(() => {});
      };
    },
    async close() {
      try {
        await prisma.$disconnect();
        await lite.close();
      } finally {
        release();
      }
    },
  };
}

/**
 * `lite` with `query`, `exec` and `transaction` taken in turn, each from a macrotask (setImmediate) after the one
 * before has finished: everything that uses PGlite's one connection (Prisma through its adapter, and the statements
 * below Prisma) lets waiting I/O run between two database operations. PGlite runs SQL in process and resolves
 * through microtasks alone, and its own lock hands over through microtasks too, so without this a run of database
 * operations (a batch of jobs, in turn or at once) was one unbroken microtask chain that held every HTTP request
 * until it ended: brand registrations stalled for ~0.7 s per batch of registry decisions (docs/performance.md;
 * test/jobs/job-queue.test.ts). The turn is held for a whole `transaction`, as PGlite's lock is, so a call made on
 * this object from inside a transaction's callback would wait for that transaction (use the callback's `tx`).
 * Every other member is `lite`'s own, bound to it (PGlite keeps private fields, so calls must reach it as `this`).
 */
function yieldingPGlite(lite: PGlite): PGlite {
  const inTurn = new Set<PropertyKey>(['query', 'exec', 'transaction']);
  let last: Promise<unknown> = Promise.resolve();
  return new Proxy(lite, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (!inTurn.has(prop)) return fn.bind(target);
      return (...args: unknown[]) => {
        const run = last.then(nextMacrotask).then(() => fn.apply(target, args));
        last = run.catch(() => {});
        return run;
      };
    },
  });
}
