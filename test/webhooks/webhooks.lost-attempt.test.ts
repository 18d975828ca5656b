import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOST_ATTEMPT_ERROR, leaseMs } from '../../src/domain/webhooks/webhook.dispatcher.js';
import { ManualClock } from '../../src/infra/clock.js';
import { accountClient, startApp, type TestApp, usingPostgres } from '../helpers/app.js';
import { type HoldingReceiver, logsOf, publish, registerHeldWebhook, startHoldingReceiver } from './helpers.js';

// Two apps on one database at once: PostgreSQL only (an embedded PGlite directory has one owner; the PGlite side of
// a lost claim is covered by webhooks.restart.test.ts).
describe.skipIf(!usingPostgres)('webhooks: an attempt lost with its instance (issue 13, PostgreSQL)', () => {
  let holder: HoldingReceiver;
  let first: TestApp | undefined;
  let second: TestApp | undefined;
  const env = { SECRETS_KEY: randomBytes(32).toString('hex'), WEBHOOK_TIMEOUT_MS: '30000' };
  beforeAll(async () => {
    holder = await startHoldingReceiver();
  });
  afterAll(async () => {
    for (const r of holder.requests) if (!r.closed) r.drop();
    await first?.close();
    await second?.close();
    await holder.close();
  });

  it('is retried once its lease ends, counts as an attempt in the log and keeps its webhook-id', async () => {
    const clock1 = new ManualClock();
    first = await startApp({ clock: clock1, env });
    const a = await first.newAccount();
    const hook = await registerHeldWebhook(a, holder, ['sms.sent']);
    const start = clock1.now().getTime();
    await publish(a, 'sms.sent', { id: 'lost' });
    // Attempt 1 is in flight on the first instance, which then stops working (never settles, records nothing).
    const stalled = first.drain();
    await holder.until(() => holder.requests.length === 1);

    const clock2 = new ManualClock(clock1.now());
    second = await startApp({ clock: clock2, env });
    await second.drain();
    expect(holder.requests).toHaveLength(1); // the lease still holds it
    clock2.advance(leaseMs(second.app.ctx)); // the documented bound: WEBHOOK_TIMEOUT_MS + 10 s
    const drained = second.drain();
    await holder.until(() => holder.requests.length === 2);
    holder.requests[1]!.answer(200);
    await drained;

    const [lost, retry] = holder.requests;
    expect(retry!.headers['webhook-id']).toBe(lost!.headers['webhook-id']);
    expect(lost!.headers['x-switchboard-attempt']).toBe('1');
    expect(retry!.headers['x-switchboard-attempt']).toBe('2');
    const again = accountClient(second.url, a.accountId, a.apiKey);
    const [entry] = await logsOf(again, hook.id);
    expect(entry).toMatchObject({ status: 'delivered', attempts: 2, responseCode: 200 });
    expect(
      entry.attemptHistory.map((h: any) => [h.attempt, Date.parse(h.at) - start, h.responseCode, h.error]),
    ).toEqual([
      [1, 0, null, LOST_ATTEMPT_ERROR],
      [2, leaseMs(second.app.ctx), 200, null],
    ]);

    // The first instance's attempt ends late: its result is fenced out and changes nothing.
    lost!.answer(500);
    await stalled;
    const [after] = await logsOf(again, hook.id);
    expect(after).toEqual(entry);
  });
});
