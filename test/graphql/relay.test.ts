// Relay: node(id:)/nodes(ids:) over the service's ids, scoped to the caller's account; totalCount on connections.
import { afterAll, describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { activeBrand, brandBody, campaignBody } from '../compliance/fixtures.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

const NODES = `query ($id: ID!, $ids: [ID!]!) {
  node(id: $id) { __typename id ... on Brand { name } }
  nodes(ids: $ids) { __typename id ... on Campaign { brand { id } } ... on Brand { status } }
}`;

const clock = new ManualClock();
const it = appTest({ clock });

describe('Relay node, nodes and totalCount', () => {
  let a: TestAccount;
  let b: TestAccount;
  let receiver: Receiver;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
    b = await t.newAccount();
    receiver = await startReceiver(() => clock.now());
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('reads any own object by id and gives null for another account’s or an unknown id', async ({ t }) => {
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

  it('reads agents, identities, threads, webhooks and deliveries by id, and nothing of another account or scope', async () => {
    const agent = (await a.request('POST', '/api/agents', { name: 'Node Desk', textModel: 'm' })).body;
    const identity = (await a.request('POST', '/api/email/identities', { localPart: `node${Date.now().toString(36)}` }))
      .body;
    const sent = await a.request('POST', `/api/email/identities/${identity.id}/send`, {
      to: 'x@example.com',
      subject: 'Node thread',
      body: 'b',
    });
    expect(sent.status).toBe(202);
    receiver.respond('/node', () => ({ status: 204 }));
    const hook = (await a.request('POST', '/api/webhooks', { url: `${receiver.url}/node`, events: ['sms.*'] })).body;
    const delivery = (await a.request('POST', `/api/webhooks/${hook.id}/test`, { eventType: 'sms.sent' })).body;
    expect(delivery.id).toEqual(expect.any(String));
    const ids = [agent.id, identity.id, sent.body.threadId, hook.id, delivery.id];
    const query = `query ($ids: [ID!]!) { nodes(ids: $ids) {
      __typename id
      ... on Agent { name }
      ... on EmailIdentity { address }
      ... on EmailThread { subject messageCount }
      ... on Webhook { url }
      ... on WebhookDelivery { kind status }
    } }`;

    const res = await a.request('POST', '/graphql', { query, variables: { ids } });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.nodes).toEqual([
      { __typename: 'Agent', id: agent.id, name: 'Node Desk' },
      { __typename: 'EmailIdentity', id: identity.id, address: identity.address },
      { __typename: 'EmailThread', id: sent.body.threadId, subject: 'Node thread', messageCount: 1 },
      { __typename: 'Webhook', id: hook.id, url: `${receiver.url}/node` },
      { __typename: 'WebhookDelivery', id: delivery.id, kind: 'test', status: 'delivered' },
    ]);
    // Another account: null for each. A key of the same account without the email and webhooks scopes: null too.
    const other = await b.request('POST', '/graphql', { query, variables: { ids } });
    expect(other.body).toEqual({ data: { nodes: [null, null, null, null, null] } });
    const issued = await a.request('POST', '/graphql', {
      query:
        'mutation { issueApiKey(input: { name: "c", scopes: [COMPLIANCE] }) { ... on IssueApiKeyPayload { issuedApiKey { apiKey } } } }',
    });
    const narrow = await a.request(
      'POST',
      '/graphql',
      { query, variables: { ids } },
      {
        authorization: `Bearer ${issued.body.data.issueApiKey.issuedApiKey.apiKey}`,
      },
    );
    expect(narrow.body).toEqual({ data: { nodes: [null, null, null, null, null] } });
    // A deleted webhook is no longer a node.
    expect((await a.request('DELETE', `/api/webhooks/${hook.id}`)).status).toBe(200);
    const gone = await a.request('POST', '/graphql', {
      query: 'query ($id: ID!) { node(id: $id) { id } }',
      variables: { id: hook.id },
    });
    expect(gone.body).toEqual({ data: { node: null } });
  });

  it('counts the whole list in totalCount, whatever the page', async ({ t }) => {
    const c = await t.newAccount();
    for (let i = 0; i < 3; i++) expect((await c.request('POST', '/compliance/brands', brandBody())).status).toBe(201);
    for (const name of ['One', 'Two']) expect((await c.request('POST', '/api/agents', { name })).status).toBe(201);
    const res = await c.request('POST', '/graphql', {
      query:
        '{ brands(first: 2) { totalCount edges { node { id } } pageInfo { hasNextPage } } campaigns { totalCount } ' +
        'agents(first: 1) { totalCount edges { node { name } } } emailIdentities { totalCount } webhooks { totalCount } }',
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.brands.totalCount).toBe(3);
    expect(res.body.data.brands.edges).toHaveLength(2);
    expect(res.body.data.campaigns.totalCount).toBe(0);
    expect(res.body.data.agents).toEqual({ totalCount: 2, edges: [{ node: { name: 'One' } }] });
    expect(res.body.data.emailIdentities.totalCount).toBe(0);
    expect(res.body.data.webhooks.totalCount).toBe(0);
  });
});
