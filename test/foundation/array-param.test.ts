import { describe, expect } from 'vitest';
import { arrayParam, jsonArrayParam } from '../../src/domain/kernel/db.js';
import { appTest } from '../helpers/fixture.js';

const it = appTest();

/**
 * The statements' array parameters (src/domain/kernel/db.ts, issue 24 round 10) are literal texts built by us rather
 * than by pg's own encoder: what the database reads back must be exactly the values given, on PGlite and PostgreSQL.
 */
describe('array parameters as literal texts (arrayParam, jsonArrayParam)', () => {
  it('a text[] reads back every string as given, quotes, backslashes, braces and NULL-like text included', async ({
    t,
  }) => {
    const values = ['plain', '', 'a,b', '{x}', 'say "hi"', 'back\\slash', '\\"', 'NULL', ' spaced ', 'ünï', null];
    const rows = await t.app.ctx.db.$queryRawUnsafe<{ v: string | null }[]>(
      'SELECT v FROM unnest($1::text[]) WITH ORDINALITY AS x(v, i) ORDER BY i',
      arrayParam(values),
    );
    expect(rows.map((r) => r.v)).toEqual(values);
  });

  it('numbers and timestamps read back as given', async ({ t }) => {
    const [row] = await t.app.ctx.db.$queryRawUnsafe<{ n: number[]; at: Date[] }[]>(
      'SELECT $1::int[] AS n, $2::timestamptz[] AS at',
      arrayParam([1, -2, 2147483647]),
      arrayParam(['2026-11-28T05:00:00.123Z', '2026-01-01T00:00:00.000Z']),
    );
    expect(row!.n).toEqual([1, -2, 2147483647]);
    expect(row!.at.map((d) => d.toISOString())).toEqual(['2026-11-28T05:00:00.123Z', '2026-01-01T00:00:00.000Z']);
  });

  it('json_array_elements gives each JSON text back byte for byte', async ({ t }) => {
    const texts = [JSON.stringify({ a: 'q"uote\\', u: '\u0000\ud800', n: [1, 2] }), '{"spaced" :  1 }', '"s"', 'null'];
    const rows = await t.app.ctx.db.$queryRawUnsafe<{ v: string }[]>(
      'SELECT v::text AS v FROM json_array_elements($1::json) WITH ORDINALITY AS x(v, i) ORDER BY i',
      jsonArrayParam(texts),
    );
    expect(rows.map((r) => r.v)).toEqual(texts);
  });
});
