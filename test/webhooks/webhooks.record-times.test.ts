import { describe, expect, it } from 'vitest';
import { logsOf, publish, registerWebhook, useClockedApp } from './helpers.js';

/**
 * The batched outcome record (recordAttempts) sends its times as epoch milliseconds, not ISO strings (issue 24
 * round 8): what the delivery log shows must be the very millisecond the attempt's clock read, at the edges of a
 * second and far from today.
 */
describe('webhooks: the times an attempt records', () => {
  const w = useClockedApp('2026-11-27T22:41:07.999Z');

  // Ascending: the log lists the newest delivery first.
  const instants = [
    '2026-11-27T22:41:07.999Z',
    '2026-11-27T22:41:08.001Z',
    '2026-11-27T23:59:59.500Z',
    '2030-06-15T12:00:00.123Z',
    '2099-12-31T23:59:59.999Z',
  ];

  it('shows each attempt at the millisecond it started, and a retry due 30 s after it to the millisecond', async () => {
    const a = await w.t.newAccount();
    const ok = await registerWebhook(a, w.receiver, ['sms.delivered']);
    const failing = await registerWebhook(a, w.receiver, ['sms.failed']);
    w.receiver.respond(failing.path, () => ({ status: 500 }));
    for (const [i, at] of instants.entries()) {
      w.clock.set(new Date(at));
      await publish(a, 'sms.delivered', { id: `ok${i}` });
      await publish(a, 'sms.failed', { id: `f${i}` });
      await w.t.drain();
      const [delivered] = await logsOf(a, ok.id, 1);
      expect(delivered).toMatchObject({ status: 'delivered', attempts: 1, nextAttemptAt: null });
      expect(delivered.attemptHistory.map((h: { at: string }) => h.at)).toEqual([at]);
      const [pending] = await logsOf(a, failing.id, 1);
      expect(pending).toMatchObject({ status: 'pending', attempts: 1, responseCode: 500 });
      expect(pending.attemptHistory.map((h: { at: string }) => h.at)).toEqual([at]);
      expect(pending.nextAttemptAt).toBe(new Date(Date.parse(at) + 30_000).toISOString());
    }
    expect(w.receiver.on(ok.path)).toHaveLength(instants.length);
  });
});
