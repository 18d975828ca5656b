import fc from 'fast-check';
import {
  buildClientSchema,
  type GraphQLField,
  type GraphQLSchema,
  getIntrospectionQuery,
  getNamedType,
  isLeafType,
} from 'graphql';
import { afterAll, describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import type { TestAccount, TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { accountFingerprint, FIXED_SEED, hostileString, hostileValue, RANDOM_SEED, RUNS } from './helpers.js';

/**
 * Bad-input fuzzing of every GraphQL query and mutation, read from the schema by introspection (issue 13):
 * arguments are passed as variables with hostile values (or left out, or of the wrong type). The answer must be
 * below 500 with no INTERNAL_ERROR (an unexpected server error masked as such), and a mutation that failed must
 * leave every row of the account as it was.
 */

interface Target {
  kind: 'query' | 'mutation';
  field: GraphQLField<unknown, unknown>;
}

function documentFor(target: Target, present: boolean[]): string {
  const args = target.field.args.filter((_, i) => present[i]);
  const defs = args.map((a, i) => `$v${i}: ${a.type.toString()}`).join(', ');
  const call = args.map((a, i) => `${a.name}: $v${i}`).join(', ');
  const selection = isLeafType(getNamedType(target.field.type)) ? '' : ' { __typename }';
  return `${target.kind}${defs ? `(${defs})` : ''} { ${target.field.name}${call ? `(${call})` : ''}${selection} }`;
}

const it = appTest({ clock: new ManualClock(), env: { AUTH_FAILURE_LIMIT: '0', RATE_LIMIT_MAX: '0' } });

describe('GraphQL bad-input fuzzing through the schema', () => {
  let a: TestAccount;
  let schema: GraphQLSchema;
  let targets: Target[];
  const ids: string[] = [];
  const figures = { requests: 0, withErrors: 0, internalErrors: 0, fiveHundreds: 0 };

  /** The file's app, for the helpers below (tests get it as the `t` fixture). */
  let t: TestApp;
  it.beforeAll(async ({ t: app }) => {
    t = app;
    a = await t.newAccount();
    const introspection = await a.request('POST', '/graphql', { query: getIntrospectionQuery() });
    schema = buildClientSchema(introspection.body.data);
    targets = [
      ...Object.values(schema.getQueryType()?.getFields() ?? {}).map((field) => ({ kind: 'query' as const, field })),
      ...Object.values(schema.getMutationType()?.getFields() ?? {}).map((field) => ({
        kind: 'mutation' as const,
        field,
      })),
    ];
    expect(targets.length).toBeGreaterThanOrEqual(30);
    const brand = await a.request('POST', '/compliance/brands', {
      name: 'Fuzz LLC',
      ein: '12-3456789',
      vertical: 'RETAIL',
      entityType: 'PRIVATE_PROFIT',
    });
    const hook = await a.request('POST', '/api/webhooks', { url: 'https://example.com/h', events: ['sms.*'] });
    for (const r of [brand, hook]) if (typeof r.body?.id === 'string') ids.push(r.body.id);
  });
  afterAll(async () => {
    console.log(`GraphQL fuzz: ${JSON.stringify(figures)} (seeds ${FIXED_SEED} and ${RANDOM_SEED})`);
  });

  const generated = () =>
    fc.record({
      target: fc.nat({ max: targets.length - 1 }),
      present: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
      values: fc.array(
        fc.oneof(
          fc.constantFrom(...ids),
          hostileString,
          hostileValue,
          // Input objects with plausible field names and hostile values.
          fc.dictionary(
            fc.constantFrom('name', 'ein', 'url', 'events', 'eventType', 'payload', 'nudgeIntent', 'numbers', 'limit'),
            hostileValue,
            { maxKeys: 4 },
          ),
        ),
        { minLength: 8, maxLength: 8 },
      ),
    });

  async function check(g: { target: number; present: boolean[]; values: unknown[] }): Promise<void> {
    const target = targets[g.target]!;
    const present = target.field.args.map((arg, i) => g.present[i]! || arg.type.toString().endsWith('!'));
    const query = documentFor(target, present);
    const variables: Record<string, unknown> = {};
    let n = 0;
    for (const [i] of target.field.args.entries()) if (present[i]) variables[`v${n++}`] = g.values[i];
    const before = target.kind === 'mutation' ? await accountFingerprint(t, a.accountId) : '';
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const text = await res.text();
    figures.requests++;
    const label = `${query} ${text.slice(0, 200)} vars=${JSON.stringify(variables).slice(0, 300)} -> ${res.status} ${text.slice(0, 400)}`;
    if (res.status >= 500) figures.fiveHundreds++;
    expect(res.status, label).toBeLessThan(500);
    const body = JSON.parse(text) as {
      data?: Record<string, unknown> | null;
      errors?: { extensions?: { code?: string } }[];
    };
    if (body.errors?.length) figures.withErrors++;
    const internal = (body.errors ?? []).filter((e) => e.extensions?.code === 'INTERNAL_ERROR');
    figures.internalErrors += internal.length;
    expect(internal, label).toEqual([]);
    // Refused: top-level errors and no result, or a typed error (`<Verb><Noun>Result` answered with an `…Error`).
    const result = body.data?.[target.field.name] as { __typename?: string } | null | undefined;
    const typedError = result?.__typename?.endsWith('Error') ?? false;
    if (target.kind === 'mutation' && (((body.errors?.length ?? 0) > 0 && result == null) || typedError)) {
      expect(await accountFingerprint(t, a.accountId), `a refused mutation changed rows: ${label}`).toBe(before);
    }
  }

  it(`answers every query and mutation with mutated arguments without a server error, changing nothing when refused (seed ${FIXED_SEED})`, async () => {
    await fc.assert(fc.asyncProperty(generated(), check), { seed: FIXED_SEED, numRuns: RUNS, endOnFailure: true });
  }, 600_000);

  it(`the same with a random seed (${RANDOM_SEED}; replay with FUZZ_SEED=${RANDOM_SEED})`, async () => {
    await fc.assert(fc.asyncProperty(generated(), check), { seed: RANDOM_SEED, numRuns: RUNS, endOnFailure: true });
  }, 600_000);
});
