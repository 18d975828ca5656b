import { afterAll, beforeAll, describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { graphql } from '../generated/gql.js';
import { appTest } from '../helpers/fixture.js';
import { payload, typedError } from '../helpers/graphql.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { publish } from './helpers.js';

const CreateWebhook = graphql(`
  mutation CreateWebhook($input: CreateWebhookInput!) {
    createWebhook(input: $input) {
      __typename
      ... on CreateWebhookPayload { secret webhook { id url events active createdAt } }
      ... on Error { code field details { field code } }
    }
  }
`);

const Webhooks = graphql(`
  query Webhooks($limit: Int) {
    webhooks { totalCount edges { node { id url events active logs(limit: $limit) { id eventType status attempts responseCode kind } } } }
  }
`);

const WebhookLogs = graphql(`
  query WebhookLogs($webhookId: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    webhookLogs(webhookId: $webhookId, first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id status attempts responseCode attemptHistory { attempt responseCode } } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

const Rotate = graphql(`
  mutation RotateWebhookSecret($input: RotateWebhookSecretInput!) {
    rotateWebhookSecret(input: $input) {
      __typename ... on RotateWebhookSecretPayload { webhookId secret previousSecretExpiresAt } ... on Error { code field details { field code } }
    }
  }
`);

const Test = graphql(`
  mutation TestWebhook($input: TestWebhookInput!) {
    testWebhook(input: $input) { __typename ... on TestWebhookPayload { delivery { id status kind responseCode } } ... on Error { code field details { field code } } }
  }
`);

const Redeliver = graphql(`
  mutation Redeliver($input: RedeliverWebhookDeliveryInput!) {
    redeliverWebhookDelivery(input: $input) {
      __typename ... on RedeliverWebhookDeliveryPayload { delivery { id status kind redeliveryOf } } ... on Error { code field details { field code } }
    }
  }
`);

const RedeliverSince = graphql(`
  mutation RedeliverSince($input: RedeliverFailedWebhookDeliveriesInput!) {
    redeliverFailedWebhookDeliveries(input: $input) {
      __typename ... on RedeliverFailedWebhookDeliveriesPayload { count deliveries { id } } ... on Error { code field details { field code } }
    }
  }
`);

const Delete = graphql(`
  mutation DeleteWebhook($input: DeleteWebhookInput!) {
    deleteWebhook(input: $input) { __typename ... on DeleteWebhookPayload { deletedWebhookId cancelledDeliveries } ... on Error { code field details { field code } } }
  }
`);

const clock = new ManualClock();
const it = appTest({ clock });

describe('webhooks over GraphQL', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver(() => clock.now());
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('creates, lists with logs, tests, rotates, redelivers and deletes through the same domain rules', async ({
    t,
    a,
  }) => {
    const bad = await a.gql(CreateWebhook, { input: { url: 'https://example.com', events: ['sms.*', 'nope.*'] } });
    expect(bad.data?.createWebhook).toMatchObject({
      __typename: 'ValidationError',
      code: 'VALIDATION_FAILED',
      field: 'events.1',
    });

    const created = await a.gql(CreateWebhook, { input: { url: `${receiver.url}/gql`, events: ['sms.*'] } });
    const hook = payload(created.data!.createWebhook, 'CreateWebhookPayload');
    expect(hook.secret).toMatch(/^whsec_/);
    expect(hook.webhook).toMatchObject({ url: `${receiver.url}/gql`, events: ['sms.*'], active: true });
    receiver.setSecrets('/gql', [hook.secret]);
    receiver.respond('/gql', () => ({ status: 500 }));

    await publish(a, 'sms.sent');
    await t.drain();
    for (const d of [30_000, 120_000, 600_000, 3_600_000]) {
      clock.advance(d);
      await t.drain();
    }
    const list = await a.gql(Webhooks, { limit: 10 });
    expect(list.data!.webhooks.totalCount).toBe(1);
    expect(list.data!.webhooks.edges.map((e) => e.node)).toEqual([
      {
        id: hook.webhook.id,
        url: `${receiver.url}/gql`,
        events: ['sms.*'],
        active: true,
        logs: [
          {
            id: expect.any(String),
            eventType: 'sms.sent',
            status: 'failed',
            attempts: 5,
            responseCode: 500,
            kind: 'event',
          },
        ],
      },
    ]);
    const logs = await a.gql(WebhookLogs, { webhookId: hook.webhook.id });
    expect(logs.data!.webhookLogs.edges[0]!.node.attemptHistory.map((h) => h.attempt)).toEqual([1, 2, 3, 4, 5]);
    const failedId = logs.data!.webhookLogs.edges[0]!.node.id;

    receiver.respond('/gql', () => ({ status: 204 }));
    const test = await a.gql(Test, { input: { id: hook.webhook.id, eventType: 'sms.delivered' } });
    expect(payload(test.data!.testWebhook, 'TestWebhookPayload').delivery).toMatchObject({
      status: 'delivered',
      kind: 'test',
      responseCode: 204,
    });

    const rotated = payload(
      (await a.gql(Rotate, { input: { id: hook.webhook.id } })).data!.rotateWebhookSecret,
      'RotateWebhookSecretPayload',
    );
    expect(rotated.secret).not.toBe(hook.secret);
    receiver.setSecrets('/gql', [rotated.secret]);

    const redelivered = await a.gql(Redeliver, { input: { webhookId: hook.webhook.id, deliveryId: failedId } });
    expect(
      payload(redelivered.data!.redeliverWebhookDelivery, 'RedeliverWebhookDeliveryPayload').delivery,
    ).toMatchObject({
      status: 'pending',
      kind: 'redelivery',
      redeliveryOf: failedId,
    });
    await t.drain();
    expect(receiver.on('/gql').at(-1)!.signatureValid).toBe(true);
    const since = await a.gql(RedeliverSince, {
      input: { webhookId: hook.webhook.id, since: new Date(0).toISOString() },
    });
    expect(payload(since.data!.redeliverFailedWebhookDeliveries, 'RedeliverFailedWebhookDeliveriesPayload').count).toBe(
      0,
    );

    const other = await t.newAccount();
    const hidden = await other.gql(Delete, { input: { id: hook.webhook.id } });
    expect(typedError(hidden.data?.deleteWebhook).code).toBe('NOT_FOUND');
    const deleted = await a.gql(Delete, { input: { id: hook.webhook.id } });
    expect(deleted.data!.deleteWebhook).toEqual({
      __typename: 'DeleteWebhookPayload',
      deletedWebhookId: hook.webhook.id,
      cancelledDeliveries: 0,
    });
    expect((await a.gql(Webhooks, {})).data!.webhooks).toEqual({ totalCount: 0, edges: [] });
  });

  it('webhookLogs is a Relay connection with the REST log cursors: first/after walk to the oldest entry', async ({
    t,
    a,
  }) => {
    const created = await a.gql(CreateWebhook, { input: { url: `${receiver.url}/paged`, events: ['sms.*'] } });
    const hook = payload(created.data!.createWebhook, 'CreateWebhookPayload');
    receiver.setSecrets('/paged', [hook.secret]);
    receiver.respond('/paged', () => ({ status: 204 }));
    for (let i = 0; i < 5; i += 1) await publish(a, 'sms.sent', { i });
    await t.drain();
    const rest = await a.request('GET', `/api/webhooks/${hook.webhook.id}/logs`);
    const newestFirst = rest.body.logs.map((l: { id: string }) => l.id);
    expect(newestFirst).toHaveLength(5);

    const walked: string[] = [];
    let after: string | null | undefined;
    for (let pages = 0; pages < 5; pages += 1) {
      const res = await a.gql(WebhookLogs, { webhookId: hook.webhook.id, first: 2, after });
      walked.push(...res.data!.webhookLogs.edges.map((e) => e.node.id));
      if (!res.data!.webhookLogs.pageInfo.hasNextPage) break;
      after = res.data!.webhookLogs.pageInfo.endCursor;
    }
    expect(walked).toEqual(newestFirst);

    // REST's nextCursor is a GraphQL cursor too, and the other way round.
    const page = await a.request('GET', `/api/webhooks/${hook.webhook.id}/logs?limit=2`);
    const fromRest = await a.gql(WebhookLogs, { webhookId: hook.webhook.id, first: 10, after: page.body.nextCursor });
    expect(fromRest.data!.webhookLogs.edges.map((e) => e.node.id)).toEqual(newestFirst.slice(2));
    const last = await a.gql(WebhookLogs, { webhookId: hook.webhook.id, last: 2 });
    expect(last.data!.webhookLogs.edges.map((e) => e.node.id)).toEqual(newestFirst.slice(3));
    const restAfter = await a.request(
      'GET',
      `/api/webhooks/${hook.webhook.id}/logs?cursor=${last.data!.webhookLogs.edges[0]!.cursor}`,
    );
    expect(restAfter.body.logs.map((l: { id: string }) => l.id)).toEqual(newestFirst.slice(4));

    const bad = await a.gql(WebhookLogs, { webhookId: hook.webhook.id, first: 2, after: '!!' });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_CURSOR' });
  });
});
