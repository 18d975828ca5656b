import { describe, expect } from 'vitest';
import type { StoredEvent } from '../../src/domain/events/event.js';
import type { BusSubscriber } from '../../src/domain/events/event-bus.port.js';
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

  it("counts the event loop's own CPU in a turn, not time the process waited, up to a cap in wall time", async ({
    t,
    a,
  }) => {
    const bus = t.app.ctx.bus;
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    /** Publishes one event to `n` subscribers that each wait 0.2 ms without the CPU; the calls when a yield came. */
    const fanOutToSleepers = async (n: number): Promise<number | undefined> => {
      const got: string[][] = Array.from({ length: n }, () => []);
      let calls = 0;
      let callsWhenOtherWorkRan: number | undefined;
      const offs = got.map((mine) =>
        bus.subscribe(
          (e: StoredEvent) => {
            if (calls++ === 0) setImmediate(() => (callsWhenOtherWorkRan ??= calls));
            mine.push(e.id);
            Atomics.wait(sleeper, 0, 0, 0.2);
          },
          undefined,
          { accountId: a.accountId, channels: ['sms'] },
        ),
      );
      await bus.whenReady(a.accountId);
      const id = await publish(a, 'sms.sent');
      await expect.poll(() => got.every((x) => x.length === 1), { timeout: 10_000 }).toBe(true);
      for (const x of got) expect(x).toEqual([id]);
      await expect.poll(() => callsWhenOtherWorkRan).toBeDefined();
      for (const off of offs) off();
      return callsWhenOtherWorkRan;
    };
    // 300 such calls: 256 (the first look at the clock) take at least 51 ms of wall clock (a wait never ends early)
    // but almost no CPU, as when other processes hold the cores, so one turn reaches all 300; a wall-clock turn of
    // 50 ms yielded after 256 calls. The wall-clock cap (200 ms) leaves room for waits 3.9 times as long as asked.
    expect(await fanOutToSleepers(300)).toBe(300);
    // 1,500 of them (at least 256 ms of wall clock by the 1,280th call) yield after FANOUT_TURN_WALL_MS, CPU or not.
    expect(await fanOutToSleepers(1500)).toBeLessThan(1500);
  });

  it('calls the subscribers of one fan-out group one after another, each in order', async ({ t, a }) => {
    const bus = t.app.ctx.bus;
    // Streams of two connections (groups) open interleaved, plus two without a group.
    const groups = [{}, {}];
    const calls: string[] = [];
    const got = new Map<string, string[]>();
    const scopes: { subscriber: BusSubscriber; scope: Parameters<typeof bus.attach>[1] }[] = [];
    for (let i = 0; i < 6; i++) {
      const name = i < 4 ? `g${i % 2}-${i}` : `none-${i}`;
      got.set(name, []);
      const subscriber: BusSubscriber = {
        deliver: (e) => {
          calls.push(name);
          got.get(name)!.push(e.id);
        },
        gap: () => {},
      };
      const scope = { accountId: a.accountId, channels: ['sms'], ...(i < 4 ? { group: groups[i % 2]! } : {}) };
      bus.attach(subscriber, scope);
      scopes.push({ subscriber, scope });
    }
    await bus.whenReady(a.accountId);
    const ids = [await publish(a, 'sms.sent'), await publish(a, 'sms.sent')];
    await expect.poll(() => [...got.values()].every((x) => x.length === 2)).toBe(true);

    for (const x of got.values()) expect(x).toEqual(ids);
    // Per event: group 0's members, then group 1's, then the ungrouped ones (groups in order of their first member).
    const perEvent = ['g0-0', 'g0-2', 'g1-1', 'g1-3', 'none-4', 'none-5'];
    expect(calls).toEqual([...perEvent, ...perEvent]);

    // A member that leaves is no longer called; its group's others still are.
    bus.detach(scopes[0]!.subscriber, scopes[0]!.scope);
    const third = await publish(a, 'sms.sent');
    await expect.poll(() => got.get('g0-2')!.length).toBe(3);
    expect(calls.slice(12)).toEqual(['g0-2', 'g1-1', 'g1-3', 'none-4', 'none-5']);
    expect(got.get('g0-0')).toEqual(ids);
    expect(got.get('none-5')).toEqual([...ids, third]);
    for (const { subscriber, scope } of scopes) bus.detach(subscriber, scope);
  });
});
