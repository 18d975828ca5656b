import { describe, expect, it } from 'vitest';
import type { TestAccount } from '../helpers/app.js';
import { logsOf, publish, registerWebhook, useClockedApp } from './helpers.js';

/** What REST and GraphQL show of one attempt. */
interface Shown {
  attempt: number;
  at: string;
  responseCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * A delivery's first attempt is recorded in the delivery's own row, later ones (and lost tries) as attempt rows
 * (issue 24 round 12, migration 20261128130000_webhook_delivery_first_attempt). The attempt history every API shows
 * is the same as when each attempt was a row: in order, with the same fields, in REST and GraphQL alike, whichever
 * path recorded it (the batched outcome, or the one with an event), and for an attempt 1 that a database from before
 * the migration holds as a row.
 */
describe('webhooks: attempt 1 in the delivery row, the history unchanged', () => {
  const w = useClockedApp('2026-11-28T10:00:00.250Z');

  /** The history of the newest delivery of webhook `id` through REST and through GraphQL (which must agree). */
  async function history(a: TestAccount, id: string): Promise<Shown[]> {
    const [rest] = await logsOf(a, id, 1);
    const res = await a.request('POST', '/graphql', {
      query: `query($id: ID!) { webhookLogs(webhookId: $id, first: 1) {
        edges { node { id attempts attemptHistory { attempt at responseCode error durationMs } } } } }`,
      variables: { id },
    });
    expect(res.status).toBe(200);
    const node = res.body.data.webhookLogs.edges[0].node;
    expect(node.id).toBe(rest.id);
    expect(node.attemptHistory).toEqual(rest.attemptHistory);
    for (const h of rest.attemptHistory as Shown[]) expect(Number.isInteger(h.durationMs)).toBe(true);
    return rest.attemptHistory;
  }

  const shape = (hs: Shown[]) => hs.map((h) => [h.attempt, h.at, h.responseCode, h.error]);

  it('shows a first attempt that delivered, and one that failed followed by the retry that delivered', async () => {
    const a = await w.t.newAccount();
    const ok = await registerWebhook(a, w.receiver, ['sms.delivered']);
    const flaky = await registerWebhook(a, w.receiver, ['sms.failed']);
    let calls = 0;
    w.receiver.respond(flaky.path, () => ({ status: ++calls === 1 ? 503 : 204 }));
    const t0 = w.clock.now().toISOString();
    await publish(a, 'sms.delivered', { id: 'm1' });
    await publish(a, 'sms.failed', { id: 'm2' });
    await w.t.drain();
    expect(shape(await history(a, ok.id))).toEqual([[1, t0, 200, null]]);
    expect(shape(await history(a, flaky.id))).toEqual([[1, t0, 503, 'receiver answered 503']]);
    w.clock.advance(30_000);
    await w.t.drain();
    const t1 = w.clock.now().toISOString();
    expect(shape(await history(a, flaky.id))).toEqual([
      [1, t0, 503, 'receiver answered 503'],
      [2, t1, 204, null],
    ]);
    const [entry] = await logsOf(a, flaky.id, 1);
    expect(entry).toMatchObject({ status: 'delivered', attempts: 2, responseCode: 204, lastError: null });
  });

  it('shows a first attempt that failed without an answer, and one recorded with its event (410 Gone)', async () => {
    const a = await w.t.newAccount();
    const refused = await registerWebhook(a, w.receiver, ['sms.delivered']);
    // Nothing listens on the path's port once the webhook points at a closed one.
    const patched = await a.request('PATCH', `/api/webhooks/${refused.id}`, { url: 'http://127.0.0.1:9/closed' });
    expect(patched.status).toBe(200);
    const gone = await registerWebhook(a, w.receiver, ['sms.failed']);
    w.receiver.respond(gone.path, () => ({ status: 410 }));
    const t0 = w.clock.now().toISOString();
    await publish(a, 'sms.delivered', { id: 'm1' });
    await publish(a, 'sms.failed', { id: 'm2' });
    await w.t.drain();
    const [failedOnce] = await history(a, refused.id);
    expect(failedOnce).toMatchObject({ attempt: 1, at: t0, responseCode: null });
    expect(failedOnce!.error).toEqual(expect.any(String));
    expect(shape(await history(a, gone.id))).toEqual([[1, t0, 410, 'receiver answered 410']]);
    const [entry] = await logsOf(a, gone.id, 1);
    expect(entry).toMatchObject({ status: 'failed', attempts: 1, responseCode: 410 });
  });

  it('shows an attempt 1 held as an attempt row (a database from before the migration) as it showed it', async () => {
    const a = await w.t.newAccount();
    const hook = await registerWebhook(a, w.receiver, ['sms.delivered']);
    await publish(a, 'sms.delivered', { id: 'm1' });
    await w.t.drain();
    const before = await history(a, hook.id);
    expect(before).toHaveLength(1);
    // What the migration found: attempt 1 as a row of webhook_delivery_attempts, the row's columns empty.
    const moved = await w.t.app.ctx.db.$executeRawUnsafe(
      `WITH d AS (
         SELECT id, first_attempt_at, first_attempt_code, first_attempt_error, first_attempt_ms
           FROM webhook_deliveries WHERE webhook_id = $1 AND first_attempt_at IS NOT NULL),
       a AS (
         INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, started_at, response_code, error, duration_ms)
         SELECT 'pre-' || d.id, d.id, 1, d.first_attempt_at, d.first_attempt_code, d.first_attempt_error, d.first_attempt_ms
           FROM d)
       UPDATE webhook_deliveries w
          SET first_attempt_at = NULL, first_attempt_code = NULL, first_attempt_error = NULL, first_attempt_ms = NULL
         FROM d WHERE w.id = d.id`,
      hook.id,
    );
    expect(moved).toBe(1);
    expect(await history(a, hook.id)).toEqual(before);
  });
});
