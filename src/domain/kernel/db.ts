import type { PrismaClient } from '../../generated/prisma/client.js';

/*
 * The database as the domain sees it: the Prisma client and transaction types, and the port of the raw runner below
 * Prisma. Opened by src/infra/db.ts (`openDatabase`), which implements {@link Database}.
 */

/** The Prisma client type used across the service. */
export type Db = PrismaClient;
/** A Prisma transaction client (what `db.$transaction(async (tx) => …)` hands out). */
export type Tx = Omit<PrismaClient, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;

/** A raw SQL runner below Prisma, for migrations and advisory locks. */
export interface RawSql {
  /** Runs one or more statements (no parameters). */
  exec(sql: string): Promise<void>;
  /** Runs one parameterised statement and returns its rows. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

/**
 * One SQL statement run as a named prepared statement: on PostgreSQL each pooled connection parses and plans it
 * once (`name` must be unique per `text`); PGlite runs it through its own extended-protocol path.
 */
export interface Statement {
  name: string;
  text: string;
}

/** An open database: the Prisma client, a raw runner on a dedicated connection, and how to close both. */
export interface Database {
  kind: 'pglite' | 'postgres';
  prisma: Db;
  /**
   * Runs one read on the pool, below Prisma, for the hottest read paths (issue 9: Prisma's per-query cost is the
   * largest item of a read's CPU profile). Columns come back under their SQL names or aliases; `timestamptz` as
   * Date, `jsonb` parsed, `bigint` as string. Not for writes: those go through Prisma transactions and the event log.
   */
  read<T>(statement: Statement, params: unknown[]): Promise<T[]>;
  /**
   * Runs one statement on its own (autocommit, unnamed) below Prisma: `text` with `$n` placeholders (a `Prisma.sql`
   * template's `.text` and `.values`). For the job queue's hot single-statement writes (claims, leases, batched
   * outcomes; issue 9), which need no transaction, and the event retention prune (run with `jit = off`). Values and
   * results convert as in {@link read}. Never for writes that must commit with others (those go through Prisma
   * transactions and the event log).
   *
   * `planner`: planner settings (`name = value`, e.g. `enable_sort = off`) local to this statement. On PostgreSQL
   * the statement then runs in a transaction of its own after `SET LOCAL` of each (one more round trip before and
   * one after; the same effects, committed as one); on PGlite (one connection, shared) they are not applied.
   */
  statement<T>(query: { text: string; values: readonly unknown[] }, planner?: readonly string[]): Promise<T[]>;
  /**
   * Runs one statement on its own (autocommit) below Prisma, `text` with `$n` placeholders: the single-statement
   * event writes (EventLog.write). On PostgreSQL a named prepared statement per distinct text (a pool connection).
   * On PGlite an unnamed statement on its one connection: `PGlite.query` takes the same lock as
   * `PGlite.transaction`, which holds it for a whole Prisma interactive transaction (pglite-prisma-adapter), so the
   * statement runs between transactions, never inside one (it cannot roll back with another's work). Must not be
   * called from inside an interactive transaction on PGlite: it would wait for that transaction's end.
   */
  preparedWrite: (text: string, values: unknown[]) => Promise<Record<string, unknown>[]>;
  /** Opens a dedicated raw connection (a pg client, or the PGlite instance itself); close it with `release`. */
  raw(): Promise<RawSql & { release(): Promise<void> }>;
  /**
   * LISTENs on `channel` (PostgreSQL NOTIFY, delivered after the notifying transaction commits): on PostgreSQL on a
   * dedicated connection outside the pool, reconnecting after 1 s when it drops (`onReconnect` is then called, since
   * notifications may have been missed); on PGlite on the instance itself (one connection, same process).
   * @returns a function that stops listening.
   */
  listen(channel: string, onNotify: (payload: string) => void, onReconnect?: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * One statement parameter carrying many JSON documents: `texts` (each a JSON text, e.g. `JSON.stringify` output)
 * joined as the text of one JSON array, for `json_array_elements($n::json)` in the statement (in `ROWS FROM (…) WITH
 * ORDINALITY` beside the `unnest` of the other columns). Each element comes back as the `json` value of exactly its
 * own text (the `json` type keeps its input text), so `::text` of it is the text given here.
 *
 * Why not a `text[]` parameter (issue 24, round 10): pg's array encoding quotes and escapes every element, two
 * regex replaces per element over a JSON text full of `"`, 4.7 KB of garbage and 3.5 µs per event for an event's
 * payload and its delivery body; this is one join (0.6 KB, 0.35 µs). No escaping is needed: a JSON text inside a JSON
 * array is JSON as it is.
 * @param texts valid JSON texts (not checked here: PostgreSQL's `json` input rejects the statement otherwise).
 * @returns `[t1,t2,…]`, `[]` for none.
 */
export function jsonArrayParam(texts: readonly string[]): string {
  return `[${texts.join(',')}]`;
}

/** Characters that must be escaped inside a quoted element of a PostgreSQL array literal. */
const ARRAY_SPECIAL = /["\\]/;

/**
 * One array parameter as the text of a PostgreSQL array literal (`{"a","b",NULL,3}`), for `$n::text[]`, `::int[]`,
 * `::float8[]`, `::timestamptz[]` and the like: strings quoted (a `"` or `\` in one escaped with `\`, tested first so
 * the common element costs one scan and one concatenation), numbers as `String(n)`, `null`/`undefined` as `NULL`.
 * What pg's own array encoding sends (lib/utils.js `arrayString`), without its two regex replaces per element, which
 * on the webhook path (about 20 elements per event+delivery) were a large share of the statements' parameter garbage
 * (issue 24, round 10).
 * @param values one-dimensional; strings, finite numbers or null (no nested arrays, Dates or Buffers).
 */
export function arrayParam(values: readonly (string | number | null | undefined)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else if (typeof v === 'number') out += String(v);
    else out += ARRAY_SPECIAL.test(v) ? `"${v.replace(/[\\"]/g, '\\$&')}"` : `"${v}"`;
  }
  return `${out}}`;
}
