// Issue 26, item 7: a batched GraphQL request (a JSON array body) is held to the limits as a whole, and each of its
// operations counts against the key's rate limit.
import { describe, expect } from 'vitest';
import { brandBody } from '../compliance/fixtures.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const RATE_LIMIT_MAX = 40;

const it = appTest({ env: { RATE_LIMIT_MAX: String(RATE_LIMIT_MAX), RATE_LIMIT_WINDOW_MS: '600000' } });

describe('GraphQL batches under the request limits', () => {
  const brandCount = async (a: TestAccount) =>
    (await a.request('GET', '/compliance/brands?limit=200')).body.brands.length;
  const input = JSON.stringify(brandBody())
    .replace(/"(\w+)":/g, '$1:')
    .replace(/"(RETAIL|PRIVATE_PROFIT)"/g, '$1');

  it('refuses 10 operations of 30 aliased createBrand (300 in all) and creates nothing', async ({ a }) => {
    // With the input as a variable each document is small (about 270 tokens): only the aliases add up.
    const doc = (n: number) => ({
      query: `mutation($in: CreateBrandInput!) { ${Array.from({ length: n }, (_, i) => `b${i}: createBrand(input: $in) { __typename }`).join(' ')} }`,
      variables: { in: brandBody() },
    });
    const batch = Array.from({ length: 10 }, () => doc(30));
    const res = await a.request('POST', '/graphql', batch);
    expect(res.status).toBe(400);
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].extensions).toMatchObject({
      code: 'QUERY_TOO_COMPLEX',
      limit: 'aliases',
      max: 30,
      found: 300,
    });
    expect(await brandCount(a)).toBe(0);
    // Under the limit in all (2 × 15), the same batch runs.
    const ok = await a.request('POST', '/graphql', [doc(15), doc(15)]);
    expect(ok.status).toBe(200);
    expect(ok.body).toHaveLength(2);
    for (const r of ok.body) expect(r.errors).toBeUndefined();
    expect(await brandCount(a)).toBe(30);
  });

  it('sums the cost over the operations: two each under budget, together over, run nothing', async ({ a }) => {
    // Each `events(limit: 1000) { events { 6 fields } }` costs 7,001; 4 of them 28,004; two such operations 56,008.
    const fields = 'id channel eventType payload customerId timestamp';
    const query = `{ ${Array.from({ length: 4 }, (_, i) => `e${i}: events(limit: 1000) { events { ${fields} } }`).join(' ')} }`;
    const alone = await a.request('POST', '/graphql', { query });
    expect(alone.status).toBe(200);
    const mutation = `mutation { createBrand(input: ${input}) { __typename } }`;
    const res = await a.request('POST', '/graphql', [{ query }, { query }, { query: mutation }]);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 'cost', max: 50_000 });
    expect(res.body.errors[0].extensions.found).toBeGreaterThanOrEqual(56_008);
    expect(await brandCount(a)).toBe(0);
  });

  it('sums the tokens and holds the depth to the deepest operation', async ({ a }) => {
    const fields = Array.from({ length: 1700 }, () => '__typename').join(' '); // ~1,702 tokens, under 5,000
    const res = await a.request(
      'POST',
      '/graphql',
      Array.from({ length: 3 }, () => ({ query: `{ ${fields} }` })),
    );
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 'tokens' });
    // Depth is not summed: ten operations of depth 4 run.
    const viewer = { query: '{ campaigns(first: 1) { edges { node { id } } } }' };
    const many = await a.request(
      'POST',
      '/graphql',
      Array.from({ length: 10 }, () => viewer),
    );
    expect(many.status).toBe(200);
    expect(many.body).toHaveLength(10);
  });

  it('counts each operation of a batch against the rate limit of the key', async ({ t, a }) => {
    const viewer = { query: '{ viewer { accountId } }' };
    // 40 per window: four batches of 10 spend it...
    for (let i = 0; i < 4; i++) {
      const res = await a.request(
        'POST',
        '/graphql',
        Array.from({ length: 10 }, () => viewer),
      );
      expect(res.status, `batch ${i}`).toBe(200);
      expect(res.headers.get('ratelimit-remaining')).toBe(String(RATE_LIMIT_MAX - 10 * (i + 1)));
    }
    // ...and the next request, batched or not, is refused.
    const over = await a.request('POST', '/graphql', [viewer, viewer]);
    expect(over.status).toBe(429);
    expect(over.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await a.request('POST', '/graphql', viewer)).status).toBe(429);
    // Another key is not affected.
    const b = await t.newAccount();
    expect((await b.request('POST', '/graphql', viewer)).status).toBe(200);
  });
});
