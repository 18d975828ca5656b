// Request limits and client mistakes over HTTP: every refusal is a coded 4xx GraphQL error that runs no resolver.
import { describe, expect } from 'vitest';
import { brandBody } from '../compliance/fixtures.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const it = appTest({ env: { GRAPHQL_MAX_TOKENS: '20000' } });

describe('GraphQL limits and client mistakes', () => {
  let a: TestAccount;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
  });

  const post = (body: unknown) => a.request('POST', '/graphql', body);
  const brandCount = async () => (await a.request('GET', '/compliance/brands?limit=200')).body.brands.length;

  it('refuses a 1,000-alias query with QUERY_TOO_COMPLEX before running anything', async () => {
    const aliases = Array.from({ length: 1000 }, (_, i) => `a${i}: events(limit: 1000) { events { id } }`).join(' ');
    const res = await post({ query: `{ ${aliases} }` });
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 'aliases', found: 1000 });
    // The same document on an instance with the default token limit is refused earlier, by its size.
  });

  it('refuses a 300-alias mutation and creates nothing', async () => {
    const input = JSON.stringify(brandBody())
      .replace(/"(\w+)":/g, '$1:')
      .replace(/"(RETAIL|PRIVATE_PROFIT)"/g, '$1');
    const aliases = Array.from({ length: 300 }, (_, i) => `b${i}: createBrand(input: ${input}) { __typename }`).join(
      ' ',
    );
    const res = await post({ query: `mutation { ${aliases} }` });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(await brandCount()).toBe(0);
    // One of them alone is fine, so the refusal above was the limit and not the input.
    const one = await post({ query: `mutation { createBrand(input: ${input}) { __typename } }` });
    expect(one.body.errors).toBeUndefined();
    expect(await brandCount()).toBe(1);
  });

  it('refuses a document over the token limit', async () => {
    const fields = Array.from({ length: 21000 }, () => '__typename').join(' ');
    const res = await post({ query: `{ ${fields} }` });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 'tokens' });
  });

  it('refuses a deep query and 10,000 nested fragments', async () => {
    let deep = 'id';
    for (let i = 0; i < 20; i++) deep = `brand { ${deep} }`;
    const depth = await post({ query: `{ campaigns { edges { node { ${deep} } } } }` });
    expect(depth.status).toBe(400);
    expect(depth.body.errors[0].extensions.code).toMatch(/QUERY_TOO_COMPLEX|BAD_USER_INPUT/);

    const fragments = Array.from(
      { length: 10_000 },
      (_, i) => `fragment F${i} on Query { ${i < 9999 ? `...F${i + 1}` : '__typename'} }`,
    );
    const res = await post({ query: `{ ...F0 } ${fragments.join(' ')}` });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('refuses a cost over budget where list sizes multiply, and accepts the same shape with small pages', async () => {
    const query = (n: number) =>
      `{ campaigns(first: ${n}) { edges { node { numbers { number } brand { campaigns: id } } } } events(limit: ${n * 10}) { events { id payload } } }`;
    const ok = await post({ query: query(5) });
    expect(ok.status).toBe(200);
    expect(ok.body.errors).toBeUndefined();
    const nested = Array.from(
      { length: 8 },
      (_, i) => `e${i}: events(limit: 1000) { events { id channel eventType payload customerId timestamp } }`,
    );
    const over = await post({ query: `{ ${nested.join(' ')} }` });
    expect(over.status).toBe(400);
    expect(over.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 'cost' });
    expect(over.body.errors[0].extensions.found).toBeGreaterThan(over.body.errors[0].extensions.max);
  });

  it('costs the same document again for each page size its variables ask for, whatever was asked before', async () => {
    // A document's cost is reused across requests (src/graphql/limits.ts); the page size must still count each time.
    const query =
      'query($n: Int, $m: Int!) { a: events(limit: $n) { events { id } } b: events(limit: $m) { events { id payload } } }';
    // Cost: 2 + 2n + 3m (each `events` costs 1 and its list counts `limit` times); the budget is 50,000.
    const cases: [Record<string, number>, number][] = [
      [{ n: 5, m: 5 }, 200],
      [{ n: 1000, m: 20_000 }, 400],
      [{ n: 5, m: 5 }, 200],
      [{ m: 5 }, 200],
      [{ n: 30_000, m: 5 }, 400],
      [{ n: 5, m: 5 }, 200],
    ];
    for (const [variables, status] of cases) {
      const res = await post({ query, variables });
      expect(res.status, JSON.stringify(variables)).toBe(status);
      if (status === 400)
        expect(res.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 'cost' });
      else expect(res.body.errors).toBeUndefined();
    }
    // `nodes(ids:)` weighs its own argument: 100 ids under a 100-fold selection are over budget, 1 is not.
    const nodes =
      'query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Brand { history(limit: 1000) { transitions { __typename } } } } }';
    const one = await post({ query: nodes, variables: { ids: ['00000000-0000-0000-0000-000000000000'] } });
    expect(one.status).toBe(200);
    const many = await post({
      query: nodes,
      variables: {
        ids: Array.from({ length: 100 }, (_, i) => `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`),
      },
    });
    expect(many.status).toBe(400);
    expect(many.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 'cost' });
  });

  it('bounds batched requests', async () => {
    const ok = await post(Array.from({ length: 3 }, () => ({ query: '{ viewer { accountId } }' })));
    expect(ok.status).toBe(200);
    expect(ok.body).toHaveLength(3);
    const over = await post(Array.from({ length: 11 }, () => ({ query: '{ viewer { accountId } }' })));
    expect(over.status).toBe(413);
    expect(over.body.errors[0].message).toMatch(/[Bb]atching is limited to 10/);
  });

  it('answers client mistakes with coded 4xx errors, never INTERNAL_ERROR', async () => {
    const negative = await post({ query: '{ brands(first: -1) { edges { node { id } } } }' });
    expect(negative.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(negative.body.errors[0].extensions.status).toBe(400);

    const coercionBody = {
      query: 'query($n: Int) { brands(first: $n) { edges { node { id } } } }',
      variables: { n: 'abc' },
    };
    // The legacy `application/json` (also what no Accept means) answers a request error 200 (GraphQL over HTTP);
    // `application/graphql-response+json` answers it 400.
    const coercion = await post(coercionBody);
    expect(coercion.status).toBe(200);
    expect(coercion.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(coercion.body.errors[0].extensions.status).toBe(400);
    const coercionNew = await a.request('POST', '/graphql', coercionBody, {
      accept: 'application/graphql-response+json',
    });
    expect(coercionNew.status).toBe(400);
    expect(coercionNew.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');

    const nul = await post({
      query:
        'mutation { createBrand(input: {name: "Nul\\u0000Corp", ein: "12-3456789", vertical: RETAIL, entityType: PRIVATE_PROFIT}) { __typename } }',
    });
    expect(nul.status).toBe(400);
    expect(nul.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');

    const nulVariable = await post({
      query:
        'mutation($n: String!) { createBrand(input: {name: $n, ein: "12-3456789", vertical: RETAIL, entityType: PRIVATE_PROFIT}) { __typename } }',
      variables: { n: 'Nul\u0000Corp' },
    });
    expect(nulVariable.status).toBe(400);
    expect(nulVariable.body.errors[0].extensions.code).toBe('VALIDATION_FAILED');

    // Parse and validation failures: 200 with `application/json`, 400 with `application/graphql-response+json`.
    const syntax = await post({ query: '{ viewer { ' });
    expect(syntax.status).toBe(200);
    expect(
      (await a.request('POST', '/graphql', { query: '{ viewer { ' }, { accept: 'application/graphql-response+json' }))
        .status,
    ).toBe(400);
    expect(syntax.body.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');

    const unknownField = await post({ query: '{ nope }' });
    expect(unknownField.status).toBe(200);
    expect(unknownField.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');

    const malformed = await a.request('POST', '/graphql', '{"query": ', { 'content-type': 'application/json' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].extensions.code).toBe('MALFORMED_JSON');
    expect(await brandCount()).toBe(1);
  });
});
