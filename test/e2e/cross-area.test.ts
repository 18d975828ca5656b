import { afterAll, describe, expect } from 'vitest';
import { brandBody, freshNumbers } from '../compliance/fixtures.js';
import { appTest } from '../helpers/fixture.js';
import { smtpSend } from '../helpers/mail-peers.js';
import { openSse, type SseClient } from '../helpers/sse.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

let receiver: Receiver;
const it = appTest(async ({ onCleanup }) => {
  receiver = await startReceiver();
  onCleanup(() => receiver.close());
  return { env: { REGISTRY_TIME_SCALE: '1000' } };
});

/**
 * One account's events from three areas (10DLC registry, number provisioning, inbound SMTP) reach the SSE stream,
 * a signed webhook and the history list with the same ids and the same envelope; another account sees none.
 */
describe('every area’s events reach SSE, webhooks and history alike', () => {
  const sse: SseClient[] = [];

  afterAll(async () => {
    for (const c of sse) c.close();
  });

  it('delivers 10dlc, did and email events with one cursor and one envelope', async ({ t, a }) => {
    const b = await t.newAccount();
    const hook = await a.request('POST', '/api/webhooks', {
      url: `${receiver.url}/e2e`,
      events: ['10dlc.*', 'did.*', 'email.*'],
    });
    expect(hook.status).toBe(201);
    receiver.setSecrets('/e2e', [hook.body.secret]);

    const types = [
      '10dlc.brand.registered',
      '10dlc.brand.status_changed',
      'did.purchased',
      'email.received',
      'sms.sent',
    ];
    const streamA = openSse(`${t.url}/api/events?token=${a.apiKey}&channels=10dlc,did,email`, types);
    const streamB = openSse(`${t.url}/api/events?token=${b.apiKey}`, types);
    sse.push(streamA, streamB);
    await streamA.opened();
    await streamB.opened();

    const brand = await a.request('POST', '/compliance/brands', brandBody());
    expect(brand.status).toBe(201);
    const [number] = freshNumbers(1);
    expect((await a.request('POST', '/api/numbers', { numbers: [number] })).status).toBe(201);
    const identity = await a.request('POST', '/api/email/identities', { localPart: `e2e${Date.now()}` });
    expect(identity.status).toBe(201);
    await smtpSend(t.app.smtpPort()!, {
      from: 'customer@example.org',
      to: identity.body.address,
      subject: 'Hello',
      text: 'Is my order on its way?',
    });
    // On another channel than the stream asked for, and not matched by the webhook: must reach neither.
    expect((await a.request('POST', '/api/events', { eventType: 'sms.sent', payload: { id: 'x' } })).status).toBe(202);

    const wanted = ['10dlc.brand.registered', '10dlc.brand.status_changed', 'did.purchased', 'email.received'];
    const hasAll = (got: string[]) => wanted.every((w) => got.includes(w));
    await streamA.waitFor((m) => hasAll(m.map((x) => x.type)));
    await receiver.waitFor('/e2e', wanted.length);

    const history = await a.request('GET', '/api/events/history?channels=10dlc,did,email&limit=100');
    expect(history.status).toBe(200);
    const byId = new Map<string, any>(history.body.events.map((e: any) => [String(e.id), e]));

    for (const message of streamA.messages) {
      expect(message.type).not.toBe('sms.sent');
      expect(message.data.customerId).toBe(a.accountId);
      expect(byId.has(message.id), `history has SSE id ${message.id}`).toBe(true);
    }
    const ids = streamA.messages.map((m) => BigInt(m.id));
    expect([...ids].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))).toEqual(ids);

    const deliveries = receiver.on('/e2e');
    expect(deliveries.every((d) => d.signatureValid && d.standardValid)).toBe(true);
    expect(deliveries.map((d) => d.body.eventType)).not.toContain('sms.sent');
    for (const type of wanted) {
      const viaSse = streamA.messages.find((m) => m.type === type)!;
      const viaHook = deliveries.find((d) => d.body.eventType === type)!;
      expect(viaHook.body, `${type}: webhook body is the SSE envelope`).toEqual(viaSse.data);
    }
    const received = streamA.messages.find((m) => m.type === 'email.received')!;
    expect(received.data.payload).toMatchObject({
      event: 'email.received',
      data: { identityId: identity.body.id, from: 'customer@example.org', subject: 'Hello' },
    });

    expect(streamB.messages).toEqual([]);
  });
});
