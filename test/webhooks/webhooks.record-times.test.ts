import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { logsOf, publish, registerWebhook } from './helpers.js';

/**
 * The batched outcome record (recordAttempts) sends its times as epoch milliseconds, not ISO strings (issue 24
 * round 8): what the delivery log shows must be the very millisecond the attempt's clock read, at the edges of a
 * second and far from today.
 */
describe('webhooks: the times an attempt records', () => {
  let t: TestApp;
  let clock: ManualClock;
  let receiver: Receiver;
  beforeAll(async () => {
    clock = new ManualClock(new Date('2026-11-27T22:41:07.999Z'));
    t = await startApp({ clock });
    receiver = await startReceiver(() => clock.now());
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  // Ascending: the log lists the newest delivery first.
  const instants = [
    '2026-11-27T22:41:07.999Z',
    '2026-11-27T22:41:08.001Z',
    '2026-11-27T23:59:59.500Z',
    '2030-06-15T12:00:00.123Z',
    '2099-12-31T23:59:59.999Z',
  ];

  it('shows each attempt at the millisecond it started, and a retry due 30 s after it to the millisecond', async () => {
    const a = await t.newAccount();
    const ok = await registerWebhook(a, receiver, ['sms.delivered']);
    const failing = await registerWebhook(a, receiver, ['sms.failed']);
    receiver.respond(failing.path, () => ({ status: 500 }));
    for (const [i, at] of instants.entries()) {
      clock.set(new Date(at));
      await publish(a, 'sms.delivered', { id: `ok${i}` });
      await publish(a, 'sms.failed', { id: `f${i}` });
      await t.drain();
      const [delivered] = await logsOf(a, ok.id, 1);
      expect(delivered).toMatchObject({ status: 'delivered', attempts: 1, nextAttemptAt: null });
      expect(delivered.attemptHistory.map((h: { at: string }) => h.at)).toEqual([at]);
      const [pending] = await logsOf(a, failing.id, 1);
      expect(pending).toMatchObject({ status: 'pending', attempts: 1, responseCode: 500 });
      expect(pending.attemptHistory.map((h: { at: string }) => h.at)).toEqual([at]);
      expect(pending.nextAttemptAt).toBe(new Date(Date.parse(at) + 30_000).toISOString());
    }
    expect(receiver.on(ok.path)).toHaveLength(instants.length);
  });
});
