import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { graphql } from '../generated/gql.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { publish } from './helpers.js';

const CreateWebhook = graphql(`
  mutation CreateWebhook($input: CreateWebhookInput!) {
    createWebhook(input: $input) {
      secret
      webhook { id url events active createdAt }
    }
  }
`);

const Webhooks = graphql(`
  query Webhooks($limit: Int) {
    webhooks { id url events active logs(limit: $limit) { id eventType status attempts responseCode kind } }
  }
`);

const WebhookLogs = graphql(`
  query WebhookLogs($webhookId: ID!) {
    webhookLogs(webhookId: $webhookId) { id status attempts responseCode attemptHistory { attempt responseCode } }
  }
`);

const Rotate = graphql(`
  mutation RotateWebhookSecret($id: ID!) { rotateWebhookSecret(id: $id) { id secret previousSecretExpiresAt } }
`);

const Test = graphql(`
  mutation TestWebhook($id: ID!, $eventType: String!) {
    testWebhook(id: $id, eventType: $eventType) { id status kind responseCode }
  }
`);

const Redeliver = graphql(`
  mutation Redeliver($webhookId: ID!, $deliveryId: ID!) {
    redeliverWebhookDelivery(webhookId: $webhookId, deliveryId: $deliveryId) { id status kind redeliveryOf }
  }
`);

const RedeliverSince = graphql(`
  mutation RedeliverSince($webhookId: ID!, $since: DateTime!) {
    redeliverFailedWebhookDeliveries(webhookId: $webhookId, since: $since) { count deliveries { id } }
  }
`);

const Delete = graphql(`
  mutation DeleteWebhook($id: ID!) { deleteWebhook(id: $id) { id deleted cancelledDeliveries } }
`);

describe('webhooks over GraphQL', () => {
  let t: TestApp;
  let clock: ManualClock;
  let receiver: Receiver;
  beforeAll(async () => {
    clock = new ManualClock();
    t = await startApp({ clock });
    receiver = await startReceiver(() => clock.now());
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('creates, lists with logs, tests, rotates, redelivers and deletes through the same domain rules', async () => {
    const a = await t.newAccount();
    const bad = await a.gql(CreateWebhook, { input: { url: 'https://example.com', events: ['sms.*', 'nope.*'] } });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', field: 'events.1', status: 400 });

    const created = await a.gql(CreateWebhook, { input: { url: `${receiver.url}/gql`, events: ['sms.*'] } });
    const hook = created.data!.createWebhook;
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
    expect(list.data!.webhooks).toEqual([
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
    expect(logs.data!.webhookLogs[0]!.attemptHistory.map((h) => h.attempt)).toEqual([1, 2, 3, 4, 5]);
    const failedId = logs.data!.webhookLogs[0]!.id;

    receiver.respond('/gql', () => ({ status: 204 }));
    const test = await a.gql(Test, { id: hook.webhook.id, eventType: 'sms.delivered' });
    expect(test.data!.testWebhook).toMatchObject({ status: 'delivered', kind: 'test', responseCode: 204 });

    const rotated = await a.gql(Rotate, { id: hook.webhook.id });
    expect(rotated.data!.rotateWebhookSecret.secret).not.toBe(hook.secret);
    receiver.setSecrets('/gql', [rotated.data!.rotateWebhookSecret.secret]);

    const redelivered = await a.gql(Redeliver, { webhookId: hook.webhook.id, deliveryId: failedId });
    expect(redelivered.data!.redeliverWebhookDelivery).toMatchObject({
      status: 'pending',
      kind: 'redelivery',
      redeliveryOf: failedId,
    });
    await t.drain();
    expect(receiver.on('/gql').at(-1)!.signatureValid).toBe(true);
    const since = await a.gql(RedeliverSince, { webhookId: hook.webhook.id, since: new Date(0).toISOString() });
    expect(since.data!.redeliverFailedWebhookDeliveries.count).toBe(0);

    const other = await t.newAccount();
    const hidden = await other.gql(Delete, { id: hook.webhook.id });
    expect(hidden.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const deleted = await a.gql(Delete, { id: hook.webhook.id });
    expect(deleted.data!.deleteWebhook).toEqual({ id: hook.webhook.id, deleted: true, cancelledDeliveries: 0 });
    expect((await a.gql(Webhooks, {})).data!.webhooks).toEqual([]);
  });
});
