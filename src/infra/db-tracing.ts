// SQL spans (OpenTelemetry database client conventions), only while tracing is on (src/infra/tracing.ts): one CLIENT
// span per statement Prisma sends through its driver adapter (@prisma/adapter-pg or pglite-prisma-adapter, in and
// out of transactions) and per statement the stores send below Prisma (Database.read/statement/preparedWrite/raw).
// The statement text is recorded as sent: every statement here is parameterized, so it holds no values.
import type { Database } from '../domain/kernel/db.js';
import { inSpan, SpanKind } from './tracing.js';

/** Longest `db.query.text` recorded, in characters (the rest is cut). */
export const QUERY_TEXT_MAX = 2_000;

/** Which database a span is about: `postgresql` for both PostgreSQL and embedded PGlite. */
const DB_SYSTEM = 'postgresql';

/**
 * The span name and attributes of one statement: `SELECT email_threads` ({db.operation.name} {db.collection.name},
 * the first table named after FROM/INTO/UPDATE), `db.system.name`, `db.operation.name`, `db.query.text` (at most
 * {@link QUERY_TEXT_MAX} characters) and `db.namespace` (`pglite` or the PostgreSQL mode's `postgres`).
 */
export function sqlSpanShape(sql: string, mode: Database['kind']) {
  const text = sql.trim();
  const operation = (/^[A-Za-z]+/.exec(text)?.[0] ?? 'SQL').toUpperCase();
  const table = /\b(?:from|into|update|join)\s+(?:"?[\w$]+"?\.)?"?([\w$]+)"?/i.exec(text)?.[1];
  return {
    name: table ? `${operation} ${table}` : operation,
    attributes: {
      'db.system.name': DB_SYSTEM,
      'db.namespace': mode,
      'db.operation.name': operation,
      ...(table ? { 'db.collection.name': table } : {}),
      'db.query.text': text.length > QUERY_TEXT_MAX ? text.slice(0, QUERY_TEXT_MAX) : text,
    },
  };
}

function sqlSpan<T>(sql: string, mode: Database['kind'], fn: () => Promise<T>): Promise<T> {
  const shape = sqlSpanShape(sql, mode);
  return inSpan(shape.name, SpanKind.CLIENT, shape.attributes, fn);
}

type Queryable = {
  queryRaw(q: { sql: string }): Promise<unknown>;
  executeRaw(q: { sql: string }): Promise<unknown>;
};

/** `target` with `queryRaw`/`executeRaw` in spans, and what `connect`/`startTransaction` return wrapped the same way. */
function tracedQueryable<T extends object>(target: T, mode: Database['kind']): T {
  return new Proxy(target, {
    get(obj, prop) {
      const value = Reflect.get(obj, prop, obj) as unknown;
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => Promise<unknown>;
      if (prop === 'queryRaw' || prop === 'executeRaw') {
        return (q: Parameters<Queryable['queryRaw']>[0]) => sqlSpan(q.sql, mode, () => fn.call(obj, q));
      }
      if (prop === 'connect' || prop === 'startTransaction') {
        return async (...args: unknown[]) => tracedQueryable((await fn.apply(obj, args)) as object, mode);
      }
      return fn.bind(obj);
    },
  });
}

/**
 * A Prisma driver adapter factory whose connections and transactions record a span per statement (see the top of
 * this file). Prisma's own tracing (`@prisma/instrumentation`) needs the instrumentation package and its require
 * hooks; the adapter is where every statement already passes, for both drivers.
 */
export function tracedAdapter<F extends object>(factory: F, mode: Database['kind']): F {
  return tracedQueryable(factory, mode);
}

/** `database` with the statements sent below Prisma (read, statement, preparedWrite, raw) in spans. */
export function tracedDatabase(database: Database): Database {
  const mode = database.kind;
  return {
    ...database,
    read: (statement, params) => sqlSpan(statement.text, mode, () => database.read(statement, params)),
    statement: (query, planner) => sqlSpan(query.text, mode, () => database.statement(query, planner)),
    preparedWrite: (text, values) => sqlSpan(text, mode, () => database.preparedWrite(text, values)),
    async raw() {
      const conn = await database.raw();
      return {
        ...conn,
        exec: (sql: string) => sqlSpan(sql, mode, () => conn.exec(sql)),
        query: (sql: string, params?: unknown[]) => sqlSpan(sql, mode, () => conn.query(sql, params as never)),
      } as typeof conn;
    },
  };
}
