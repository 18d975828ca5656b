import pg from 'pg';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { claimDue } from '../../src/domain/webhooks/webhook.dispatcher.js';
import { ManualClock } from '../../src/infra/clock.js';
import { testDatabaseUrl, usingPostgres } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import {
  type HoldingReceiver,
  logsOf,
  publish,
  registerHeldWebhook,
  registerWebhook,
  startHoldingReceiver,
} from './helpers.js';

const clock = new ManualClock();
const it = appTest({ clock, env: { WEBHOOK_TIMEOUT_MS: '2000' } });

/** EventLog's advisory lock key ("sb-evts"), which every event-writing transaction takes first. */

describe('webhooks: attempts in flight (slow receivers, deletion mid-attempt)', () => {
  let receiver: Receiver;
  let holder: HoldingReceiver;
  beforeAll(async () => {
    receiver = await startReceiver(() => clock.now());
    holder = await startHoldingReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await holder.close();
  });

  it("a receiver that never answers does not hold back another account's delivery", async ({ t }) => {
    const b = await t.newAccount();
    const a = await t.newAccount();
    const stuck = await registerHeldWebhook(b, holder, ['sms.sent']);
    const fine = await registerWebhook(a, receiver, ['sms.sent']);
    // More of B's deliveries are due first than one batch used to claim; A's comes last.
    for (let i = 0; i < 25; i++) await publish(b, 'sms.sent', { n: i });
    clock.advance(1);
    await publish(a, 'sms.sent', { n: 'a' });
    const drained = t.drain();
    const first = await Promise.race([
      receiver.waitFor(fine.path, 1).then(() => 'A delivered'),
      holder.until(() => holder.requests.some((r) => r.path === stuck.path && r.closed)).then(() => 'B timed out'),
    ]);
    expect(first).toBe('A delivered');
    // B's 25 attempts were all started in that same round; end them rather than wait for their timeout.
    await holder.until(() => holder.requests.filter((r) => r.path === stuck.path).length === 25);
    for (const r of holder.requests) if (r.path === stuck.path) r.drop();
    await drained;
    expect((await logsOf(a, fine.id))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    const bLogs = await logsOf(b, stuck.id);
    expect(bLogs).toHaveLength(25);
    expect(bLogs.every((l) => l.status === 'pending' && l.attempts === 1 && l.responseCode === null)).toBe(true);
  });

  it('keeps at most 50 attempts in flight per instance, and attempts the rest as slots free up', async ({ t, a }) => {
    const stuck = await registerHeldWebhook(a, holder, ['sms.sent']);
    for (let i = 0; i < 55; i++) await publish(a, 'sms.sent', { n: i });
    holder.maxOpen = 0;
    await t.drain(); // every attempt times out (WEBHOOK_TIMEOUT_MS 2 s)
    expect(holder.requests.filter((r) => r.path === stuck.path)).toHaveLength(55);
    expect(holder.maxOpen).toBe(50);
    const logs = await logsOf(a, stuck.id, 100);
    expect(logs.map((l) => [l.status, l.attempts, l.lastError])).toEqual(
      Array(55).fill(['pending', 1, 'timeout after 2000 ms']),
    );
  });

  it('deleting a webhook cancels its claimed deliveries too, and the attempt in flight does not revive them', async ({
    t,
    a,
  }) => {
    const hook = await registerHeldWebhook(a, holder, ['sms.*']);
    await publish(a, 'sms.sent', { n: 1 });
    const drained = t.drain();
    await holder.until(() => holder.open(hook.path) === 1); // attempt 1 of delivery 1 is in flight
    await publish(a, 'sms.sent', { n: 2 });
    const crashed = await claimDue(t.app.ctx); // an instance claims delivery 2 and dies
    expect(crashed.ids).toHaveLength(1);
    await publish(a, 'sms.delivered', { n: 3 }); // delivery 3 is not claimed
    const res = await a.request('DELETE', `/api/webhooks/${hook.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: hook.id, deleted: true, cancelledDeliveries: 3 });
    // The attempt in flight ends with a retryable answer; it must not put the delivery back to pending.
    holder.requests.find((r) => r.path === hook.path)!.answer(500);
    await drained;
    clock.advance(24 * 60 * 60 * 1000);
    await t.drain();
    expect(holder.requests.filter((r) => r.path === hook.path)).toHaveLength(1);
    // Nothing was written over the cancellation (the deleted webhook's log is not readable through the API).
    const rows = await t.app.ctx.db.webhookDelivery.findMany({ where: { webhookId: hook.id } });
    expect(rows.map((r) => [r.status, r.nextAttemptAt, r.lockedBy])).toEqual(Array(3).fill(['cancelled', null, null]));
  });

  // PGlite has a single connection, so another session cannot hold the lock there.
  it.skipIf(!usingPostgres)(
    'records an attempt that emits nothing without waiting for event-writing transactions (PostgreSQL)',
    async ({ t, a }) => {
      const hook = await registerWebhook(a, receiver, ['sms.sent']);
      await publish(a, 'sms.sent');
      // Another session holds the account's event-order row (docs/events.md), as a long or queued event transaction
      // of the same account does under load.
      const other = new pg.Client({ connectionString: await testDatabaseUrl() });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query('SELECT last_seq FROM event_account_seqs WHERE account_id = $1 FOR UPDATE', [a.accountId]);
        await t.drain();
        expect(receiver.on(hook.path)).toHaveLength(1);
        const [entry] = await logsOf(a, hook.id);
        expect(entry).toMatchObject({ status: 'delivered', attempts: 1, responseCode: 200 });
        expect(entry.attemptHistory).toHaveLength(1);
      } finally {
        await other.end();
      }
    },
  );
});
