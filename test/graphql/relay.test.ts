// Relay: node(id:)/nodes(ids:) over the service's ids, scoped to the caller's account; totalCount on connections.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { activeBrand, brandBody, campaignBody } from '../compliance/fixtures.js';
import { startApp, type TestAccount, type TestApp } from '../helpers/app.js';

const NODES = `query ($id: ID!, $ids: [ID!]!) {
  node(id: $id) { __typename id ... on Brand { name } }
  nodes(ids: $ids) { __typename id ... on Campaign { brand { id } } ... on Brand { status } }
}`;

describe('Relay node, nodes and totalCount', () => {
  let t: TestApp;
  let a: TestAccount;
  let b: TestAccount;
  beforeAll(async () => {
    t = await startApp({ clock: new ManualClock() });
    a = await t.newAccount();
    b = await t.newAccount();
  });
  afterAll(() => t.close());

  it('reads any own object by id and gives null for another account’s or an unknown id', async () => {
    const brand = await activeBrand(t, a, { name: 'Node Brand LLC' });
    const campaign = (await a.request('POST', '/compliance/campaigns', campaignBody(brand.id))).body;
    const theirs = (await b.request('POST', '/compliance/brands', brandBody())).body;
    const unknown = '0190f7a4-0000-7000-8000-000000000000';

    const res = await a.request('POST', '/graphql', {
      query: NODES,
      variables: { id: brand.id, ids: [campaign.id, theirs.id, brand.id, unknown] },
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.node).toEqual({ __typename: 'Brand', id: brand.id, name: 'Node Brand LLC' });
    expect(res.body.data.nodes).toEqual([
      { __typename: 'Campaign', id: campaign.id, brand: { id: brand.id } },
      null,
      { __typename: 'Brand', id: brand.id, status: 'ACTIVE' },
      null,
    ]);
    const other = await b.request('POST', '/graphql', {
      query: NODES,
      variables: { id: brand.id, ids: [campaign.id] },
    });
    expect(other.body.data).toEqual({ node: null, nodes: [null] });
  });

  it('counts the whole list in totalCount, whatever the page', async () => {
    const c = await t.newAccount();
    for (let i = 0; i < 3; i++) expect((await c.request('POST', '/compliance/brands', brandBody())).status).toBe(201);
    const res = await c.request('POST', '/graphql', {
      query:
        '{ brands(first: 2) { totalCount edges { node { id } } pageInfo { hasNextPage } } campaigns { totalCount } }',
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.brands.totalCount).toBe(3);
    expect(res.body.data.brands.edges).toHaveLength(2);
    expect(res.body.data.campaigns.totalCount).toBe(0);
  });
});
