import { describe, expect } from 'vitest';
import type { StoredEvent } from '../../src/domain/events/event.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const it = appTest();

async function publish(a: TestAccount, eventType: string): Promise<string> {
  const res = await a.request('POST', '/api/events', { eventType, payload: {} });
  expect(res.status).toBe(202);
  return res.body.id;
}

/** Keeps the CPU for `ms` (a subscriber doing real work per event), so a fan-out outlasts one turn. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/**
 * The fan-out of one instance runs in turns bounded in time (src/infra/bus/ordered-bus.ts): other work runs between
 * turns, and each subscriber still gets each event it asked for once, in order.
 */
describe('a live fan-out longer than one turn', () => {
  it('yields to other work between turns and reaches every subscriber once, in order, per channel', async ({
    t,
    a,
  }) => {
    const bus = t.app.ctx.bus;
    // 600 sms subscribers taking 0.25 ms each: 256 calls (the first look at the clock) already outlast a turn.
    const SMS = 600;
    const sms: string[][] = Array.from({ length: SMS }, () => []);
    const voice: string[][] = [[], []];
    let calls = 0;
    let callsWhenOtherWorkRan: number | undefined;
    const offs: (() => void)[] = [];
    for (let i = 0; i < SMS; i++) {
      const listener = (e: StoredEvent) => {
        if (calls++ === 0) setImmediate(() => (callsWhenOtherWorkRan ??= calls));
        sms[i]!.push(e.id);
        busy(0.25);
      };
      offs.push(bus.subscribe(listener, undefined, { accountId: a.accountId, channels: ['sms'] }));
    }
    for (const got of voice) {
      offs.push(bus.subscribe((e) => got.push(e.id), undefined, { accountId: a.accountId, channels: ['voice'] }));
    }
    await bus.whenReady(a.accountId);

    const first = await publish(a, 'sms.sent');
    const other = await publish(a, 'voice.ai.completed');
    const rest = [await publish(a, 'sms.delivered'), await publish(a, 'sms.sent')];
    await expect.poll(() => sms.every((got) => got.length >= 3), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => voice.every((got) => got.length >= 1)).toBe(true);

    for (const got of sms) expect(got).toEqual([first, ...rest]);
    for (const got of voice) expect(got).toEqual([other]);
    // A setImmediate queued by the first subscriber call ran before the first event had reached every subscriber.
    expect(callsWhenOtherWorkRan).toBeLessThan(SMS);
    for (const off of offs) off();
  });
});
