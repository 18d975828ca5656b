// Webhook endpoints can change and come back (issue 25 item 6, issue 22 item 2): PATCH /api/webhooks/{id} and GraphQL
// updateWebhook change url, events, description and enabled; re-enabling after a 410 auto-disable makes the
// deliveries the disable cancelled pending again (nothing pending is lost); webhook.created / updated / deleted are
// events of the `webhook` channel, in history, on the stream and to webhooks, never with a secret.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import type { TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { logsOf, publish, registerWebhook } from './helpers.js';

const clock = new ManualClock();
const it = appTest({ clock });

describe('webhooks: update, disable and re-enable, lifecycle events', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver(() => clock.now());
  });
  afterAll(async () => {
    await receiver.close();
  });

  const history = async (a: Awaited<ReturnType<TestApp['newAccount']>>) =>
    (await a.request('GET', '/api/events/history?channels=webhook&limit=1000')).body.events as {
      eventType: string;
      payload: Record<string, any>;
    }[];

  it('PATCH changes url, events and description; created/updated/deleted are events without the secret', async ({
    t,
    a,
  }) => {
    const created = await a.request('POST', '/api/webhooks', {
      url: `${receiver.url}/one`,
      events: ['sms.*'],
      description: 'billing receiver',
    });
    expect(created.status).toBe(201);
    expect(created.body.description).toBe('billing receiver');
    const id = created.body.id as string;
    const patched = await a.request('PATCH', `/api/webhooks/${id}`, {
      url: `${receiver.url}/two`,
      events: ['voice.*', 'sms.sent'],
      description: null,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      id,
      url: `${receiver.url}/two`,
      events: ['voice.*', 'sms.sent'],
      description: null,
      active: true,
    });
    expect((await a.request('GET', `/api/webhooks/${id}`)).body).toEqual(patched.body);
    // Nothing to change: 200, no event. Nothing sent at all: 400. Unknown fields: 400. Others' ids: 404 on `id`.
    expect((await a.request('PATCH', `/api/webhooks/${id}`, { description: null })).status).toBe(200);
    const empty = await a.request('PATCH', `/api/webhooks/${id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe('VALIDATION_FAILED');
    expect((await a.request('PATCH', `/api/webhooks/${id}`, { secret: 'x' })).status).toBe(400);
    const other = await t.newAccount();
    const foreign = await other.request('PATCH', `/api/webhooks/${id}`, { enabled: false });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.field).toBe('id');
    expect((await a.request('GET', `/api/webhooks/${id}`)).body.active).toBe(true);

    const rotated = await a.request('POST', `/api/webhooks/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect((await a.request('DELETE', `/api/webhooks/${id}`)).status).toBe(200);

    const events = await history(a);
    expect(events.map((e) => e.eventType)).toEqual([
      'webhook.created',
      'webhook.updated',
      'webhook.updated',
      'webhook.deleted',
    ]);
    expect(events[0]!.payload).toMatchObject({ webhookId: id, description: 'billing receiver', active: true });
    expect(events[1]!.payload).toMatchObject({ webhookId: id, changes: ['url', 'events', 'description'] });
    expect(events[2]!.payload).toMatchObject({ webhookId: id, changes: ['secret'] });
    expect(events[3]!.payload).toMatchObject({ webhookId: id, active: false });
    const text = JSON.stringify(events);
    expect(text).not.toContain(created.body.secret);
    expect(text).not.toContain(rotated.body.secret);
    expect(text).not.toMatch(/whsec_/);
  });

  it('re-enabling after a 410 auto-disable resumes deliveries: the pending ones the disable cancelled are sent', async ({
    t,
    a,
  }) => {
    const hook = await registerWebhook(a, receiver, ['sms.*']);
    const watcher = await registerWebhook(a, receiver, ['webhook.updated']);
    let calls = 0;
    receiver.respond(hook.path, () => ({ status: [500, 410][calls++] ?? 200 }));
    await publish(a, 'sms.sent');
    await t.drain(); // 500: retry in 30 s
    await publish(a, 'sms.delivered');
    await t.drain(); // 410: disabled, sms.sent cancelled
    expect((await a.request('GET', `/api/webhooks/${hook.id}`)).body).toMatchObject({
      active: false,
      disabledReason: 'the receiver answered 410 Gone',
    });
    expect((await logsOf(a, hook.id)).map((l) => [l.eventType, l.status])).toEqual([
      ['sms.delivered', 'failed'],
      ['sms.sent', 'cancelled'],
    ]);

    const enabled = await a.request('PATCH', `/api/webhooks/${hook.id}`, { enabled: true });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ active: true, disabledReason: null });
    await t.drain();
    const logs = await logsOf(a, hook.id);
    expect(logs.map((l) => [l.eventType, l.status])).toEqual([
      ['sms.delivered', 'failed'],
      ['sms.sent', 'delivered'],
    ]);
    expect(logs[1]!.attempts).toBe(2);
    await publish(a, 'sms.failed');
    await t.drain();
    expect(receiver.on(hook.path).map((r) => r.body.eventType)).toEqual([
      'sms.sent',
      'sms.delivered',
      'sms.sent',
      'sms.failed',
    ]);
    // The watcher heard the re-enable as webhook.updated, changes ["enabled"].
    expect(receiver.on(watcher.path).map((r) => [r.body.eventType, r.body.payload.changes])).toEqual([
      ['webhook.updated', ['enabled']],
    ]);
  });

  it('enabled: false stops deliveries and holds the pending ones; enabled: true sends them (GraphQL updateWebhook)', async ({
    t,
    a,
  }) => {
    const hook = await registerWebhook(a, receiver, ['sms.*']);
    let fail = true;
    receiver.respond(hook.path, () => ({ status: fail ? 503 : 200 }));
    await publish(a, 'sms.sent');
    await t.drain(); // 503: pending, retry later
    const update = `mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) {
      __typename ... on UpdateWebhookPayload { webhook { id active disabledReason description } }
      ... on Error { code field } } }`;
    const off = await a.request('POST', '/graphql', {
      query: update,
      variables: { input: { id: hook.id, enabled: false } },
    });
    expect(off.body.data.updateWebhook).toEqual({
      __typename: 'UpdateWebhookPayload',
      webhook: { id: hook.id, active: false, disabledReason: 'disabled through the API', description: null },
    });
    await publish(a, 'sms.delivered'); // not queued for a disabled endpoint
    clock.advance(60 * 60 * 1000);
    await t.drain();
    expect(receiver.on(hook.path)).toHaveLength(1);
    expect((await logsOf(a, hook.id)).map((l) => l.status)).toEqual(['cancelled']);

    fail = false;
    const on = await a.request('POST', '/graphql', {
      query: update,
      variables: { input: { id: hook.id, enabled: true, description: 'back' } },
    });
    expect(on.body.data.updateWebhook.webhook).toMatchObject({
      active: true,
      disabledReason: null,
      description: 'back',
    });
    await t.drain();
    expect((await logsOf(a, hook.id)).map((l) => [l.eventType, l.status])).toEqual([['sms.sent', 'delivered']]);

    const missing = await a.request('POST', '/graphql', {
      query: update,
      variables: { input: { id: '00000000-0000-7000-8000-000000000000', enabled: true } },
    });
    expect(missing.body.data.updateWebhook).toEqual({ __typename: 'NotFoundError', code: 'NOT_FOUND', field: 'id' });
  });
});
