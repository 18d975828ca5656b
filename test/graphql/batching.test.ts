// Nested fields are resolved per request, not per parent: the number of SQL statements of a campaigns page with
// brand, numbers and carriers is the same for 2 campaigns as for 20 (the DataLoader plugin batches every parent's
// key into one account-scoped domain read).
import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { activeBrand, campaignBody, freshNumbers } from '../compliance/fixtures.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const QUERY = `query Page($first: Int!) {
  campaigns(first: $first) { edges { node { id brand { id vettings { status } feedback { status } } numbers { number } carriers { carrier status } } } }
}`;

const it = appTest({ clock: new ManualClock(), logQueries: true });

describe('GraphQL nested fields without a query per parent', () => {
  let a: TestAccount;
  const statements: string[] = [];
  let counting = false;
  it.beforeAll(async ({ t }) => {
    (t.app.ctx.db as any).$on('query', (e: { query: string }) => {
      if (counting) statements.push(e.query);
    });
    a = await t.newAccount();
    const brands = [];
    for (let i = 0; i < 4; i++) brands.push(await activeBrand(t, a, { name: `Brand ${i} LLC` }));
    const numbers = freshNumbers(40);
    expect((await a.request('POST', '/api/numbers', { numbers })).status).toBe(201);
    for (let i = 0; i < 20; i++) {
      const c = await a.request('POST', '/compliance/campaigns', campaignBody(brands[i % 4]!.id));
      expect(c.status).toBe(201);
      const assigned = await a.request('POST', `/compliance/campaigns/${c.body.id}/numbers/assign`, {
        numbers: numbers.slice(2 * i, 2 * i + 2),
      });
      expect(assigned.status).toBe(200);
    }
  });

  const countFor = async (first: number) => {
    statements.length = 0;
    counting = true;
    const res = await a.request('POST', '/graphql', { query: QUERY, variables: { first } });
    counting = false;
    expect(res.body.errors).toBeUndefined();
    const edges = res.body.data.campaigns.edges;
    expect(edges).toHaveLength(first);
    for (const { node } of edges) {
      expect(node.numbers).toHaveLength(2);
      expect(node.carriers.length).toBeGreaterThan(0);
      expect(node.brand.id).toBeTruthy();
    }
    return statements.length;
  };

  it('runs as many SQL statements for 20 campaigns as for 2', async () => {
    const two = await countFor(2);
    const twenty = await countFor(20);
    console.log(`SQL statements: first 2 -> ${two}, first 20 -> ${twenty}`);
    expect(two).toBeGreaterThan(0);
    expect(twenty).toBe(two);
    // And it is a handful: the page (with carriers, brand status, number counts), brands, vettings, numbers, auth.
    expect(twenty).toBeLessThanOrEqual(12);
  });
});
