import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { logsOf, publish, registerWebhook } from './helpers.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** Spec 8: attempt 1 at once, then after 30 s, 2 min, 10 min and 1 h. */
const DELAYS = [30 * SECOND, 2 * MINUTE, 10 * MINUTE, 60 * MINUTE];

describe('webhooks: retry schedule, failure, receiver etiquette, redelivery', () => {
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

  it('retries at exactly 30 s, 2 min, 10 min, 1 h, then marks the delivery failed and emits webhook.delivery.failed', async () => {
    const a = await t.newAccount();
    const hook = await registerWebhook(a, receiver, ['sms.failed']);
    const health = await registerWebhook(a, receiver, ['webhook.*']);
    receiver.respond(hook.path, () => ({ status: 500 }));
    const start = clock.now().getTime();
    const eventId = await publish(a, 'sms.failed', { id: 'm1' });
    await t.drain();
    expect(receiver.on(hook.path)).toHaveLength(1);
    for (const [i, delay] of DELAYS.entries()) {
      clock.advance(delay - 1);
      await t.drain();
      expect(receiver.on(hook.path), `no attempt ${i + 2} 1 ms early`).toHaveLength(i + 1);
      const [pending] = await logsOf(a, hook.id);
      expect(pending).toMatchObject({ status: 'pending', attempts: i + 1, responseCode: 500 });
      expect(pending.nextAttemptAt).toBe(new Date(clock.now().getTime() + 1).toISOString());
      clock.advance(1);
      await t.drain();
      expect(receiver.on(hook.path), `attempt ${i + 2}`).toHaveLength(i + 2);
    }
    const got = receiver.on(hook.path);
    expect(got.every((r) => r.signatureValid && r.standardValid)).toBe(true);
    expect(got.map((r) => Number(r.headers['webhook-timestamp']) * 1000 - Math.floor(start / 1000) * 1000)).toEqual([
      0, 30_000, 150_000, 750_000, 4_350_000,
    ]);
    expect(got.map((r) => r.headers['x-switchboard-attempt'])).toEqual(['1', '2', '3', '4', '5']);
    expect(new Set(got.map((r) => r.headers['x-switchboard-delivery'])).size).toBe(1);
    const [failed] = await logsOf(a, hook.id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 5, responseCode: 500, nextAttemptAt: null });
    expect(failed.attemptHistory.map((h: any) => Date.parse(h.at) - start)).toEqual([
      0, 30_000, 150_000, 750_000, 4_350_000,
    ]);
    // Nothing more, ever.
    clock.advance(24 * 60 * MINUTE);
    await t.drain();
    expect(receiver.on(hook.path)).toHaveLength(5);
    // The health event reached the other webhook, and only once.
    const healthGot = receiver.on(health.path);
    expect(healthGot.map((r) => r.body.eventType)).toEqual(['webhook.delivery.failed']);
    expect(healthGot[0]!.body).toMatchObject({
      channel: 'webhook',
      payload: {
        webhookId: hook.id,
        deliveryId: failed.id,
        eventId,
        eventType: 'sms.failed',
        attempts: 5,
        responseCode: 500,
      },
    });
  });

  it('does not loop: a failing catch-all webhook never receives its own health events, and health failures emit none', async () => {
    const a = await t.newAccount();
    const loud = await registerWebhook(a, receiver, ['*']);
    const other = await registerWebhook(a, receiver, ['webhook.*']);
    receiver.respond(loud.path, () => ({ status: 500 }));
    receiver.respond(other.path, () => ({ status: 500 }));
    await publish(a, 'voice.failed');
    await t.drain();
    for (let round = 0; round < 3; round++) {
      for (const d of DELAYS) {
        clock.advance(d);
        await t.drain();
      }
    }
    // loud: 5 attempts of voice.failed only. other: 5 attempts of the one health event; its failure emits nothing.
    // (loud also gets `other`'s webhook.created, 5 attempts of it; a lifecycle event, not a health event.)
    const loudTypes = receiver.on(loud.path).map((r) => r.body.eventType);
    expect(loudTypes.filter((x) => x !== 'webhook.created')).toEqual(Array(5).fill('voice.failed'));
    expect(loudTypes.filter((x) => x.startsWith('webhook.') && x !== 'webhook.created')).toEqual([]);
    expect(receiver.on(other.path).map((r) => r.body.eventType)).toEqual(Array(5).fill('webhook.delivery.failed'));
    const events = await t.app.ctx.db.event.findMany({
      where: { accountId: a.accountId, channel: 'webhook', eventType: { not: 'webhook.created' } },
    });
    expect(events).toHaveLength(1);
  });

  it('treats 3xx as a failure without following the redirect', async () => {
    const a = await t.newAccount();
    const hook = await registerWebhook(a, receiver, ['sms.sent']);
    const target = await registerWebhook(a, receiver, ['did.purchased']);
    receiver.respond(hook.path, () => ({ status: 302, headers: { location: `${receiver.url}${target.path}` } }));
    await publish(a, 'sms.sent');
    await t.drain();
    expect(receiver.on(target.path)).toHaveLength(0);
    expect((await logsOf(a, hook.id))[0]).toMatchObject({ status: 'pending', attempts: 1, responseCode: 302 });
  });

  it('410 Gone disables the webhook, cancels its other pending deliveries and emits webhook.disabled', async () => {
    const a = await t.newAccount();
    const hook = await registerWebhook(a, receiver, ['sms.*']);
    const health = await registerWebhook(a, receiver, ['webhook.disabled']);
    let calls = 0;
    receiver.respond(hook.path, () => ({ status: calls++ === 0 ? 500 : 410 }));
    await publish(a, 'sms.sent');
    await t.drain(); // 500: retry in 30 s
    await publish(a, 'sms.delivered');
    await t.drain(); // 410
    const list = (await a.request('GET', '/api/webhooks')).body.webhooks;
    expect(list.find((w: any) => w.id === hook.id)).toMatchObject({
      active: false,
      disabledReason: 'the receiver answered 410 Gone',
    });
    const logs = await logsOf(a, hook.id);
    expect(logs.map((l) => [l.eventType, l.status, l.responseCode])).toEqual([
      ['sms.delivered', 'failed', 410],
      ['sms.sent', 'cancelled', 500],
    ]);
    expect(receiver.on(health.path).map((r) => r.body.payload)).toEqual([
      expect.objectContaining({ webhookId: hook.id, responseCode: 410 }),
    ]);
    clock.advance(MINUTE);
    await publish(a, 'sms.sent');
    await t.drain();
    expect(receiver.on(hook.path)).toHaveLength(2);
  });

  it('honours Retry-After on 429/503 when longer than the scheduled delay, never shorter, within five attempts', async () => {
    const a = await t.newAccount();
    const hook = await registerWebhook(a, receiver, ['sms.sent']);
    const answers = [
      { status: 429, headers: { 'retry-after': '300' } }, // 5 min > 30 s: wait 5 min
      { status: 503, headers: { 'retry-after': '10' } }, // 10 s < 2 min: keep 2 min
      { status: 500, headers: { 'retry-after': '7200' } }, // not 429/503: ignored, 10 min
      { status: 503, headers: { 'retry-after': new Date(clock.now().getTime() + 4 * 3600 * 1000).toUTCString() } },
      { status: 429, headers: { 'retry-after': '1' } },
    ];
    let n = 0;
    receiver.respond(hook.path, () => answers[n++]!);
    const start = clock.now().getTime();
    await publish(a, 'sms.sent');
    await t.drain();
    const waits = [5 * MINUTE, 2 * MINUTE, 10 * MINUTE];
    for (const w of waits) {
      clock.advance(w - 1);
      await t.drain();
      const before = receiver.on(hook.path).length;
      clock.advance(1);
      await t.drain();
      expect(receiver.on(hook.path)).toHaveLength(before + 1);
    }
    // The 4th answer asked for an HTTP-date 4 h after the start (longer than 1 h).
    const [entry] = await logsOf(a, hook.id);
    expect(Date.parse(entry.nextAttemptAt)).toBe(Math.floor((start + 4 * 3600 * 1000) / 1000) * 1000);
    clock.set(new Date(Date.parse(entry.nextAttemptAt)));
    await t.drain();
    expect(receiver.on(hook.path)).toHaveLength(5);
    expect((await logsOf(a, hook.id))[0]).toMatchObject({ status: 'failed', attempts: 5, responseCode: 429 });
  });

  it('redelivers one failed delivery, and everything failed since T', async () => {
    const a = await t.newAccount();
    const hook = await registerWebhook(a, receiver, ['voice.*']);
    receiver.respond(hook.path, () => ({ status: 500 }));
    const t0 = clock.now();
    for (const type of ['voice.initiated', 'voice.answered', 'voice.completed']) {
      await publish(a, type);
      clock.advance(SECOND);
    }
    await t.drain();
    for (const d of DELAYS) {
      clock.advance(d);
      await t.drain();
    }
    const failed = await logsOf(a, hook.id);
    expect(failed.map((l) => l.status)).toEqual(['failed', 'failed', 'failed']);
    receiver.respond(hook.path, () => ({ status: 200 }));
    const notFailed = await a.request('POST', `/api/webhooks/${hook.id}/logs/${failed[0].id}/redeliver`);
    expect(notFailed.status).toBe(202);
    expect(notFailed.body).toMatchObject({
      kind: 'redelivery',
      status: 'pending',
      redeliveryOf: failed[0].id,
      attempts: 0,
    });
    await t.drain();
    const redelivered = receiver.on(hook.path).at(-1)!;
    expect(redelivered.body.eventType).toBe('voice.completed');
    expect(redelivered.signatureValid).toBe(true);
    const again = await a.request('POST', `/api/webhooks/${hook.id}/logs/${notFailed.body.id}/redeliver`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('DELIVERY_NOT_FAILED');
    // Bulk: the two failed originals not yet redelivered.
    const bulk = await a.request('POST', `/api/webhooks/${hook.id}/redeliver`, { since: t0.toISOString() });
    expect(bulk.status).toBe(202);
    expect(bulk.body.count).toBe(2);
    expect(bulk.body.deliveries.map((d: any) => d.eventType)).toEqual(['voice.initiated', 'voice.answered']);
    await t.drain();
    const logs = await logsOf(a, hook.id);
    expect(logs.filter((l) => l.kind === 'redelivery').map((l) => l.status)).toEqual([
      'delivered',
      'delivered',
      'delivered',
    ]);
    const none = await a.request('POST', `/api/webhooks/${hook.id}/redeliver`, { since: t0.toISOString() });
    expect(none.body.count).toBe(0);
    const bad = await a.request('POST', `/api/webhooks/${hook.id}/redeliver`, { since: 'yesterday' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('since');
  });

  it('records a timeout as a failed attempt with its reason', async () => {
    const slow = await startApp({ clock: new ManualClock(), env: { WEBHOOK_TIMEOUT_MS: '200' } });
    try {
      const a = await slow.newAccount();
      const http = await import('node:http');
      const server = http.createServer(() => {}); // never answers
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as { port: number }).port;
      const res = await a.request('POST', '/api/webhooks', { url: `http://127.0.0.1:${port}/`, events: ['sms.sent'] });
      await a.request('POST', '/api/events', { eventType: 'sms.sent', payload: {} });
      await slow.drain();
      const [entry] = await logsOf(a, res.body.id);
      expect(entry).toMatchObject({
        status: 'pending',
        attempts: 1,
        responseCode: null,
        lastError: 'timeout after 200 ms',
      });
      server.closeAllConnections();
      server.close();
    } finally {
      await slow.close();
    }
  });
});
