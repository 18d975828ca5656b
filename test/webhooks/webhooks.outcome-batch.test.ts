import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTCOMES_IN_FLIGHT } from '../../src/domain/webhooks/webhook.dispatcher.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { logsOf, publish, registerWebhook } from './helpers.js';

/** Resolves once `predicate` holds (checked every 10 ms), or fails after 10 s. */
async function until(predicate: () => boolean, what: string): Promise<void> {
  const t = Date.now();
  while (!predicate()) {
    if (Date.now() - t > 10_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * How many delivery ids an outcome statement's first parameter holds: an array, or the text of a PostgreSQL array
 * literal (`{"id1","id2"}`, kernel/db.ts `arrayParam`; the ids have no commas).
 */
const elements = (param: unknown) =>
  Array.isArray(param)
    ? param.length
    : String(param)
        .slice(1, -1)
        .split(',')
        .filter((s) => s !== '').length;
/** The sum of `rows` (outcomes written over the statements seen). */
const total = (rows: number[]) => rows.reduce((a, b) => a + b, 0);

/**
 * The attempts' outcomes are written in group commit (issue 24 round 9): at most OUTCOMES_IN_FLIGHT outcome statements
 * run at once, and outcomes that finish meanwhile wait and are written together by the next one. Every outcome is
 * still written, and a statement that fails does not hold up the ones after it.
 */
describe('webhooks: outcome statements in group commit', () => {
  let t: TestApp;
  let receiver: Receiver;
  /** Outcome statements seen, how many ran at once at most, and the hold on the next one. */
  const seen = { statements: 0, running: 0, maxRunning: 0, rows: [] as number[] };
  let hold: { release: () => void; fail: boolean } | undefined;
  let gate: Promise<void> | undefined;

  beforeAll(async () => {
    t = await startApp();
    receiver = await startReceiver();
    const database = t.app.ctx.database;
    const write = database.preparedWrite.bind(database);
    database.preparedWrite = async (text, values) => {
      if (!text.includes('INSERT INTO webhook_delivery_attempts')) return write(text, values);
      seen.statements++;
      seen.rows.push(elements(values[0]));
      seen.running++;
      seen.maxRunning = Math.max(seen.maxRunning, seen.running);
      try {
        const g = gate;
        const h = hold;
        gate = undefined;
        hold = undefined;
        if (g) await g;
        if (h?.fail) throw new Error('outcome statement refused (test)');
        return await write(text, values);
      } finally {
        seen.running--;
      }
    };
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  /** Holds the next outcome statement until `release()`; with `fail` it then fails instead of writing. */
  const holdNext = (fail = false) => {
    let release!: () => void;
    gate = new Promise<void>((r) => {
      release = r;
    });
    hold = { release, fail };
    return hold;
  };

  it('writes the outcomes that finish while a statement runs together in the next one', async () => {
    expect(OUTCOMES_IN_FLIGHT).toBe(1);
    const a = await t.newAccount();
    const hook = await registerWebhook(a, receiver, ['sms.delivered']);
    seen.statements = 0;
    seen.rows = [];
    const h = holdNext();
    await publish(a, 'sms.delivered', { id: 'first' });
    await until(() => seen.statements === 1, 'the first outcome statement');
    // Five more deliveries reach the receiver while the first outcome statement is held.
    for (let i = 0; i < 5; i++) await publish(a, 'sms.delivered', { id: `next${i}` });
    await until(() => receiver.on(hook.path).length === 6, 'six deliveries');
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.statements).toBe(1); // none starts while one is in flight
    h.release();
    await until(() => total(seen.rows) === 6 && seen.running === 0, 'every outcome written');
    // Outcomes that finished while the first statement was held share statements (all 5 in one, unless the machine
    // is so slow that some finished only after the release: the count, not the split, is what it guarantees).
    expect(seen.rows[0]).toBe(1);
    expect(seen.rows.length).toBeLessThan(6);
    expect(seen.maxRunning).toBe(1);
    const logs = await logsOf(a, hook.id);
    expect(logs).toHaveLength(6);
    for (const log of logs) expect(log).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('writes the waiting outcomes after a statement that failed', async () => {
    const a = await t.newAccount();
    const hook = await registerWebhook(a, receiver, ['sms.delivered']);
    seen.statements = 0;
    seen.rows = [];
    const h = holdNext(true);
    await publish(a, 'sms.delivered', { id: 'refused' });
    await until(() => seen.statements === 1, 'the first outcome statement');
    for (let i = 0; i < 3; i++) await publish(a, 'sms.delivered', { id: `after${i}` });
    await until(() => receiver.on(hook.path).length === 4, 'four deliveries');
    h.release();
    await until(() => total(seen.rows) === 4 && seen.running === 0, 'the statements after the failed one');
    expect(seen.rows[0]).toBe(1);
    expect(seen.rows.length).toBeLessThan(4);
    const logs = await logsOf(a, hook.id);
    // The refused outcome's delivery stays claimed (its lease runs out and it is tried again); the others are written.
    expect(logs.filter((l: { status: string }) => l.status === 'delivered')).toHaveLength(3);
  });
});
