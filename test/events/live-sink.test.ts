import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/domain/events/event.js';
import type { Channel } from '../../src/domain/events/event-catalog.js';
import { EventSubscription, type StreamItem, sseFrame, sseFrameBytes } from '../../src/domain/events/event-stream.js';
import { InProcessEventBus } from '../../src/infra/bus/memory-bus.js';

/** An event of account `a`; `channel` sms unless given. */
function event(id: number, channel = 'sms'): StoredEvent {
  return {
    id: String(id),
    seq: String(id),
    accountId: 'a',
    channel: channel as Channel,
    eventType: `${channel}.sent`,
    payload: { n: id },
    timestamp: '2026-11-28T00:00:00.000Z',
  };
}

/** A subscription in push mode with a sink that takes events while `accepting`, recording what it took. */
function pushSubscription(queueLimit = 5, channels?: Channel[]) {
  const bus = new InProcessEventBus();
  const sub = new EventSubscription(bus, { accountId: 'a', ...(channels ? { channels } : {}) }, queueLimit);
  const state = { accepting: true, offered: [] as string[], taken: [] as string[] };
  sub.setReadableListener(() => {});
  sub.setLiveSink({
    offer(e) {
      state.offered.push(e.id);
      if (!state.accepting) return false;
      state.taken.push(e.id);
      return true;
    },
  });
  /** Reads everything readable now (what the writer's flush does). */
  const drain = (): string[] => {
    const ids: string[] = [];
    for (let r = sub.read(); r && !r.done; r = sub.read()) ids.push((r.value as StreamItem & { id: string }).id);
    return ids;
  };
  return { bus, sub, state, drain };
}

describe('an SSE subscription’s live sink (the fast path of push mode)', () => {
  it('queues live events until the replay is handed over, then offers only while nothing waits before them', () => {
    const { bus, sub, state, drain } = pushSubscription();
    bus.publish([event(1)]);
    expect(state.offered).toEqual([]); // the replay is not read yet: buffered, never offered
    sub.setReplayFrames('', 0n);
    expect(drain()).toEqual(['1']);
    bus.publish([event(2)]);
    expect(state.taken).toEqual(['2']);
    expect(drain()).toEqual([]);

    state.accepting = false; // the response is not drained
    bus.publish([event(3)]);
    state.accepting = true;
    bus.publish([event(4)]); // 3 waits in the queue: 4 goes behind it, not past it
    expect(state.offered).toEqual(['2', '3']);
    expect(drain()).toEqual(['3', '4']);
    bus.publish([event(5)]);
    expect(state.taken).toEqual(['2', '5']);
  });

  it('offers no event at or below the last one sent (replay seam, a gap filled twice)', () => {
    const { sub, state, drain } = pushSubscription();
    sub.setReplayFrames('', 10n);
    sub.deliver(event(9));
    sub.deliver(event(10));
    sub.deliver(event(11));
    sub.deliver(event(11));
    expect(state.offered).toEqual(['11']);
    expect(drain()).toEqual([]);
  });

  it('offers only the channels asked for', () => {
    const { bus, sub, state } = pushSubscription(5, ['sms' as Channel]);
    sub.setReplayFrames('', 0n);
    bus.publish([event(1, 'email'), event(2)]);
    expect(state.offered).toEqual(['2']);
  });

  it('ends with overflow when the sink keeps declining past the queue limit, and offers nothing after the end', () => {
    const { bus, sub, state } = pushSubscription(3);
    sub.setReplayFrames('', 0n);
    state.accepting = false;
    bus.publish([1, 2, 3, 4, 5].map((n) => event(n)));
    expect(sub.endReason).toBe('overflow');
    state.accepting = true;
    bus.publish([event(6)]);
    expect(state.offered).toEqual(['1']);
  });

  it('shares one frame Buffer per event, the bytes of its SSE frame', () => {
    const e = event(7);
    expect(sseFrameBytes(e)).toBe(sseFrameBytes(e));
    expect(sseFrameBytes(e).toString('utf8')).toBe(sseFrame(e));
    expect(sseFrameBytes(event(8)).toString('utf8')).toBe(sseFrame(event(8)));
  });
});
