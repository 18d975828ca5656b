// webhookDeliveryAttempted over graphql-sse (embedded database, in-process PubSub): each attempt of a delivery to a
// real HTTP receiver reaches the webhook's subscriber with the delivery log entry re-read; another account's webhook
// answers NOT_FOUND.
import { afterAll, describe, expect } from 'vitest';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { collect } from './typed-subscriptions.scenario.js';

const ATTEMPTED = `subscription ($id: ID!) {
  webhookDeliveryAttempted(webhookId: $id) {
    attempt timestamp delivery { id kind status attempts responseCode attemptHistory { attempt responseCode } }
  }
}`;

const it = appTest();

describe('webhookDeliveryAttempted (one instance)', () => {
  let a: TestAccount;
  let b: TestAccount;
  let receiver: Receiver;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
    b = await t.newAccount();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('yields each attempt with the delivery re-read, tenancy-scoped', async ({ t }) => {
    const created = await a.request('POST', '/api/webhooks', { url: `${receiver.url}/subs`, events: ['sms.*'] });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    receiver.respond('/subs', () => ({ status: 503 }));

    // There is no replay for attempts, so test deliveries are sent until the subscriber has seen one: it waits for
    // the notice itself, whatever the machine's speed.
    const sent = new Set<string>();
    let seen = false;
    const trigger = async () => {
      while (!seen) {
        const res = await a.request('POST', '/graphql', {
          query:
            'mutation ($id: ID!) { testWebhook(input: { id: $id, eventType: "sms.sent" }) { ... on TestWebhookPayload { delivery { id status } } } }',
          variables: { id },
        });
        expect(res.body.errors).toBeUndefined();
        sent.add(res.body.data.testWebhook.delivery.id);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    let triggering: Promise<void> | undefined;
    const results = await collect(t.url, a.apiKey, ATTEMPTED, { id }, 1, async () => {
      triggering = trigger();
    });
    seen = true;
    await triggering; // the mutation whose attempt was seen has answered by now
    expect(results[0].errors).toBeUndefined();
    const change = results[0].data.webhookDeliveryAttempted;
    expect(sent.has(change.delivery.id)).toBe(true);
    expect(change).toMatchObject({
      attempt: 1,
      delivery: { kind: 'test', status: 'failed', attempts: 1, responseCode: 503 },
    });
    expect(change.delivery.attemptHistory).toEqual([{ attempt: 1, responseCode: 503 }]);

    const denied = await collect(t.url, b.apiKey, ATTEMPTED, { id }, 1);
    expect(denied[0].errors[0].extensions.code).toBe('NOT_FOUND');
  });
});
