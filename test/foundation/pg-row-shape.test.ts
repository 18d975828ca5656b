import pg from 'pg';
import { describe, expect } from 'vitest';
import { installRowShape, rowShapeInstalled } from '../../src/infra/pg-row-shape.js';
import { usingPostgres } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const it = appTest();

/** Columns whose names an ordinary object could mistake: a duplicate, a number, `__proto__`, `constructor`. */
const AWKWARD = `SELECT 1::int AS a, 'x'::text AS "__proto__", '{"polluted":true}'::json AS j, NULL::text AS "7",
  'c'::text AS "constructor", '2026-11-29T05:42:25.133Z'::timestamptz AS at, 2::int AS a`;

/**
 * Rows read below Prisma and through it (src/infra/pg-row-shape.ts replaces pg's row template builder on
 * PostgreSQL; PGlite has its own driver): every column by name, in pg's order, as own data properties of an ordinary
 * object; a column named `__proto__` is a key, never the row's prototype, and nothing leaks into Object.prototype.
 */
describe('rows of statements with awkward column names (pg row template, issue 24 round 19)', () => {
  it('the prepared-read and statement paths give every column as an own key, __proto__ included', async ({ t }) => {
    const database = t.app.ctx.database;
    const read = await database.read<Record<string, unknown>>({ name: 'row_shape_probe', text: AWKWARD }, []);
    const [viaStatement] = await database.statement<Record<string, unknown>>({ text: AWKWARD, values: [] });
    for (const row of [read[0]!, viaStatement!]) {
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
      expect(Reflect.ownKeys(row)).toEqual(['7', 'a', '__proto__', 'j', 'constructor', 'at']);
      expect(Object.getOwnPropertyDescriptor(row, '__proto__')).toMatchObject({ value: 'x', enumerable: true });
      expect(row.a).toBe(2); // the last of two columns of one name wins, as in pg
      expect(row.j).toEqual({ polluted: true });
      expect(row['7']).toBeNull();
      expect(row.constructor).toBe('c');
      expect((row.at as Date).toISOString()).toBe('2026-11-29T05:42:25.133Z');
      // Serialised as a key (an object literal in toMatchObject would set a prototype instead).
      expect(JSON.stringify(row)).toContain('"__proto__":"x"');
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('Prisma (array rows through its adapter) reads the same values', async ({ t }) => {
    const rows = await t.app.ctx.db.$queryRawUnsafe<Record<string, unknown>[]>(
      `SELECT 1::int AS a, 'x'::text AS b, NULL::text AS c, '2026-11-29T05:42:25.133Z'::timestamptz AS at`,
    );
    expect(rows).toEqual([{ a: 1, b: 'x', c: null, at: new Date('2026-11-29T05:42:25.133Z') }]);
  });

  it.runIf(usingPostgres)('on PostgreSQL the replacement is in place once the app has opened its database', ({ t }) => {
    expect(t.app.ctx.database.kind).toBe('postgres');
    expect(rowShapeInstalled(pg)).toBe(true); // installed when the database opened
    expect(installRowShape(pg)).toBe(true); // a second call finds it in place
  });

  it("another pg (a Result whose addFields is not 8.23.1's) keeps its own handler", () => {
    // A Result that keeps its template under other names: its method's source is not the one the replacement was
    // written against, so nothing is replaced (and the probe's rows would differ too).
    class OtherResult {
      fields: unknown[] = [];
      rows: unknown[] = [];
      template: Record<string, null> = {};
      parsers: ((v: unknown) => unknown)[] = [];
      rowAsArray: boolean;
      constructor(mode?: string) {
        this.rowAsArray = mode === 'array';
      }
      addFields(fields: { name: string }[]) {
        this.fields = fields;
        this.parsers = fields.map(() => (v: unknown) => v);
        this.template = Object.fromEntries(fields.map((f) => [f.name, null]));
      }
      parseRow(data: unknown[]) {
        const values = data.map((v, i) => this.parsers[i]!(v));
        if (this.rowAsArray) return values;
        const row: Record<string, unknown> = { ...this.template };
        this.fields.forEach((f, i) => {
          row[(f as { name: string }).name] = values[i];
        });
        return row;
      }
    }
    const own = OtherResult.prototype.addFields;
    const fake = { Result: OtherResult, types: pg.types } as unknown as typeof pg;
    expect(installRowShape(fake)).toBe(false);
    expect(OtherResult.prototype.addFields).toBe(own);
  });
});
