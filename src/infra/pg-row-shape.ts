import { createHash } from 'node:crypto';
import type pg from 'pg';

/** SHA-256 of `Result.prototype.addFields.toString()` in pg 8.23.1 (pg/lib/result.js), the method replaced here. */
export const KNOWN_ADD_FIELDS_SHA256 = 'b85c0e5db5c85c53830a271ff13637f40a1a1eb92e5d8b8d8a2c360b2954ca16';

/** The parts of pg's `Result` (pg/lib/result.js, 8.x) its RowDescription handler sets and its row parsers read. */
interface ResultInternals {
  fields: unknown[];
  _parsers: unknown[] | undefined;
  _types: { getTypeParser(oid: number, format: string): unknown } | undefined;
  rowAsArray: boolean;
  _prebuiltEmptyResultObject: Record<string, null> | null;
  addFields(fieldDescriptions: FieldDescription[]): void;
  parseRow(rowData: unknown[]): unknown;
}

interface FieldDescription {
  name: string;
  dataTypeID: number;
  format?: string;
}

interface ResultClass {
  new (rowMode?: string, types?: unknown): ResultInternals;
  prototype: ResultInternals;
}

const INSTALLED = Symbol.for('switchboard.pg.rowShape');

/** A data property named `name` (own, enumerable, writable) set to null: `__proto__` too, as a key, not a prototype. */
function defineNull(row: Record<string, null>, name: string): void {
  if (name === '__proto__') {
    Object.defineProperty(row, name, { value: null, writable: true, enumerable: true, configurable: true });
  } else {
    row[name] = null;
  }
}

/**
 * pg's `Result.addFields` (the RowDescription handler, run once per query) with the same outcome and without its cost
 * per column. pg 8.23.1 builds each query's empty row template as `Object.create(null)` and then copies it with
 * `{ ...row }`; V8 copies a null-prototype (dictionary) object slowly, about 0.2 µs per column on Node 22 and 24 (on
 * this box 8.0 µs for the 30 columns of a brand read, against 0.7 µs here; issue 24 round 19). This builds the same
 * template as an ordinary object (a column named `__proto__` is defined as an own key, as pg's copy has it), and none
 * for `rowMode: 'array'` results (Prisma's adapter), whose parser never reads it. Parsers come from the query's
 * `types` or pg's global ones, as in pg's own.
 */
function addFields(
  this: ResultInternals,
  fieldDescriptions: FieldDescription[],
  types: ResultInternals['_types'],
): void {
  this.fields = fieldDescriptions;
  const parsers = new Array(fieldDescriptions.length);
  if (fieldDescriptions.length) this._parsers = parsers;
  const typeParsers = this._types ?? types!;
  const row: Record<string, null> | null = this.rowAsArray ? null : {};
  for (let i = 0; i < fieldDescriptions.length; i++) {
    const desc = fieldDescriptions[i]!;
    if (row) defineNull(row, desc.name);
    parsers[i] = typeParsers.getTypeParser(desc.dataTypeID, desc.format || 'text');
  }
  this._prebuiltEmptyResultObject = row;
}

/** Text rows covering what the replacement must keep: null-able, duplicated, numeric-looking and `__proto__` names. */
const PROBE_FIELDS: FieldDescription[] = [
  { name: 'id', dataTypeID: 25, format: 'text' },
  { name: 'n', dataTypeID: 23, format: 'text' },
  { name: '__proto__', dataTypeID: 114, format: 'text' },
  { name: '7', dataTypeID: 25, format: 'text' },
  { name: 'at', dataTypeID: 1184, format: 'text' },
  { name: 'id', dataTypeID: 25, format: 'text' },
];
const PROBE_ROW = ['a', '42', '{"polluted":true}', null, '2026-11-29 05:42:25.133+00', 'b'];

/** The rows the two handlers give for the probe, as comparable text (own keys in order, values, prototype). */
function probe(Result: ResultClass, handler: ResultInternals['addFields']): string {
  const out: unknown[] = [];
  for (const mode of [undefined, 'array']) {
    const result = new Result(mode);
    handler.call(result, PROBE_FIELDS);
    const row = result.parseRow(PROBE_ROW) as Record<string, unknown>;
    out.push(Object.getPrototypeOf(row) === Object.prototype, Reflect.ownKeys(row), row);
  }
  return JSON.stringify(out, (_k, v) => (v instanceof Date ? `date:${v.getTime()}` : v));
}

/** Whether {@link installRowShape} has replaced `pgModule`'s handler (the database opens on PostgreSQL install it). */
export function rowShapeInstalled(pgModule: typeof pg): boolean {
  const proto = (pgModule as unknown as { Result?: ResultClass }).Result?.prototype as
    | { [INSTALLED]?: boolean }
    | undefined;
  return proto?.[INSTALLED] === true;
}

/**
 * Replaces pg's `Result.prototype.addFields` with {@link addFields} for the process (every pg query: the service's
 * prepared reads, the event log's and the job queue's statements, Prisma's adapter), once. It installs only on the
 * method it was written against (source hash {@link KNOWN_ADD_FIELDS_SHA256}) and only when, on a probe of rows with
 * awkward column names, pg's own handler and the replacement give the same rows in both row modes. Another pg keeps
 * its own handler and {@link rowShapeInstalled} says false (a test fails, so an upgrade re-checks this file).
 * node_modules is never edited (production installs with `npm ci --omit=dev --ignore-scripts`).
 * @returns whether the replacement is in place.
 */
export function installRowShape(pgModule: typeof pg): boolean {
  const Result = (pgModule as unknown as { Result: ResultClass }).Result;
  const proto = Result?.prototype as (ResultInternals & { [INSTALLED]?: boolean }) | undefined;
  if (!proto || typeof proto.addFields !== 'function') return false;
  if (proto[INSTALLED]) return true;
  if (createHash('sha256').update(proto.addFields.toString()).digest('hex') !== KNOWN_ADD_FIELDS_SHA256) return false;
  const types = pgModule.types as unknown as ResultInternals['_types'];
  const replacement = function (this: ResultInternals, fieldDescriptions: FieldDescription[]) {
    addFields.call(this, fieldDescriptions, types);
  };
  let same: boolean;
  try {
    same = probe(Result, proto.addFields) === probe(Result, replacement);
  } catch {
    same = false;
  }
  if (!same) return false;
  proto.addFields = replacement;
  proto[INSTALLED] = true;
  return true;
}
