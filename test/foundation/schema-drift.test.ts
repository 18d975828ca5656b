import { readFile } from 'node:fs/promises';
import { describe, expect } from 'vitest';
import { getDatamodel } from '../../src/generated/pothos-types.js';
import { printSortedSchema } from '../../src/graphql/schema.js';
import { listMigrations, migrate } from '../../src/infra/migrate.js';
import { appTest } from '../helpers/fixture.js';

/** information_schema data_type values each Prisma scalar may map to. */
const COLUMN_TYPES: Record<string, string[]> = {
  String: ['text', 'character varying', 'character', 'uuid'],
  Int: ['integer', 'smallint'],
  BigInt: ['bigint'],
  Float: ['double precision', 'real'],
  Decimal: ['numeric'],
  Boolean: ['boolean'],
  DateTime: ['timestamp with time zone', 'timestamp without time zone', 'date'],
  Json: ['jsonb', 'json'],
  Bytes: ['bytea'],
};

interface RuntimeModel {
  dbName: string | null;
  fields: { name: string; kind: string; dbName?: string }[];
}

const it = appTest();

describe.concurrent('the hand-written migrations match prisma/schema (PGlite, or PostgreSQL with TEST_DATABASE_URL)', () => {
  let columns: {
    table_name: string;
    column_name: string;
    data_type: string;
    udt_name: string;
    is_nullable: string;
    column_default: string | null;
  }[];
  it.beforeAll(async ({ t }) => {
    columns = await t.app.ctx.db.$queryRawUnsafe(
      `SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default
         FROM information_schema.columns WHERE table_schema = current_schema()`,
    );
  });

  const datamodel = getDatamodel().datamodel.models;
  const modelNames = Object.keys(datamodel);

  it('has at least the foundation models', () => {
    expect(modelNames).toEqual(expect.arrayContaining(['Account', 'ApiKey', 'IdempotencyRecord', 'Event']));
  });

  it.for(modelNames)('model %s: every field has a column of a compatible type and nullability', (name, { t }) => {
    const runtime = (t.app.ctx.db as unknown as { _runtimeDataModel: { models: Record<string, RuntimeModel> } })
      ._runtimeDataModel.models[name]!;
    const table = runtime.dbName ?? name;
    const tableColumns = columns.filter((c) => c.table_name === table);
    expect(tableColumns.length, `table ${table} exists`).toBeGreaterThan(0);
    const known = new Set<string>();
    for (const field of datamodel[name]!.fields) {
      if (field.kind !== 'scalar' && field.kind !== 'enum') continue;
      const dbName = runtime.fields.find((f) => f.name === field.name)?.dbName ?? field.name;
      known.add(dbName);
      const column = tableColumns.find((c) => c.column_name === dbName);
      expect(column, `${table}.${dbName} exists`).toBeDefined();
      if (!column) continue;
      if (field.isList) {
        expect(column.data_type, `${table}.${dbName} is an array`).toBe('ARRAY');
      } else if (field.kind === 'enum') {
        expect(column.data_type, `${table}.${dbName} is an enum`).toBe('USER-DEFINED');
      } else {
        expect(COLUMN_TYPES[field.type], `${table}.${dbName} is ${field.type}`).toContain(column.data_type);
        expect(column.is_nullable === 'NO', `${table}.${dbName} nullability`).toBe(field.isRequired);
      }
    }
    const unknownRequired = tableColumns.filter(
      (c) => !known.has(c.column_name) && c.is_nullable === 'NO' && c.column_default === null,
    );
    expect(
      unknownRequired.map((c) => c.column_name),
      `${table} has no required column Prisma does not know`,
    ).toEqual([]);
  });

  it.for(modelNames)('model %s: the client reads it (every column it selects exists)', async (name, { t }) => {
    const delegate = name.charAt(0).toLowerCase() + name.slice(1);
    const client = t.app.ctx.db as unknown as Record<string, { findFirst(): Promise<unknown> }>;
    // Rejects (and fails the test) when the client selects a column the table lacks.
    const row = await client[delegate]!.findFirst();
    expect(row === null || typeof row === 'object').toBe(true);
  });

  it('applies nothing twice: a second migrate finds every migration applied', async ({ t }) => {
    const report = await migrate(t.app.ctx.database);
    expect(report.applied).toEqual([]);
    expect(report.alreadyApplied).toEqual((await listMigrations()).map((m) => m.name));
  });
});

describe('schema.graphql', () => {
  it('is the SDL printed from the Pothos schema (run `npm run schema:print` when this fails)', async () => {
    const committed = await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(printSortedSchema());
  });
});
