import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { KeyAuthenticator } from '../../src/domain/accounts/account.service.js';
import type { EventSubscription } from '../../src/domain/events/event-stream.js';
import { systemClock } from '../../src/infra/clock.js';
import { type OpenStream, StreamHeartbeat } from '../../src/rest/stream-heartbeat.js';

/** Keeps the CPU for `ms` (a write with real work behind it: framing, TLS), so a beat outlasts one turn. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/**
 * A stream as the heartbeat sees it: its writes counted, each taking `writeMs` of CPU; `ended` records `end`, which
 * sets `endReason` and calls `onEnd` in the next microtask (the real SSE response leaves the heartbeat there,
 * src/rest/routes/events.routes.ts).
 */
function fakeStream(keyId: string, writeMs: number, onWrite?: () => void, onEnd?: (open: OpenStream) => void) {
  const stream = {
    writes: [] as string[],
    ended: [] as string[],
    open: undefined as unknown as OpenStream,
  };
  const res = {
    writableNeedDrain: false,
    write(chunk: Buffer) {
      stream.writes.push(chunk.toString('utf8'));
      busy(writeMs);
      onWrite?.();
      return true;
    },
  } as unknown as ServerResponse;
  const sub = {
    endReason: undefined as string | undefined,
    end(reason: string) {
      if (sub.endReason !== undefined) return;
      sub.endReason = reason;
      stream.ended.push(reason);
      queueMicrotask(() => onEnd?.(stream.open));
    },
  };
  stream.open = { res, sub: sub as unknown as EventSubscription, keyId };
  return stream;
}

/**
 * The instance heartbeat (src/rest/stream-heartbeat.ts) writes its comment to every open stream in turns bounded in
 * time, as the bus's fan-out does: a beat to many streams lets other work run between turns (issue 24 round 15: one
 * callback for 50,000 HTTP/2 streams held the loop up to 2 s), still writes each stream once, skips a stream that
 * ended meanwhile, and starts the key check before its writes, so a revoked key's streams end between two turns
 * instead of after the whole beat.
 */
describe('a heartbeat longer than one turn', () => {
  it('yields to other work between turns, writes each open stream once and ends revoked streams mid-beat', async () => {
    const revoked = 'key-revoked';
    const auth = {
      activeAmong: async (keys: string[]) => new Set(keys.filter((k) => k !== revoked)),
    } as unknown as KeyAuthenticator;
    const heartbeat = new StreamHeartbeat({ intervalMs: 3_600_000, clock: systemClock, auth });
    // 600 streams taking 0.25 ms a write: 256 writes (the first look at the clock) already outlast a 50 ms turn.
    const N = 600;
    let writes = 0;
    let writesWhenOtherWorkRan: number | undefined;
    /** Per stream index: how many heartbeat writes the beat had made when the stream ended. */
    const writesAtEnd = new Map<number, number>();
    const streams = Array.from({ length: N }, (_, i) =>
      fakeStream(
        i % 100 === 7 ? revoked : `key-${i % 3}`,
        0.25,
        () => {
          if (writes++ === 0) setImmediate(() => (writesWhenOtherWorkRan ??= writes));
          // The stream at the end ends (its response closed) while the beat is under way.
          if (writes === 10) heartbeat.remove(streams[N - 1]!.open);
        },
        (open) => {
          writesAtEnd.set(
            streams.findIndex((s) => s.open === open),
            writes,
          );
          heartbeat.remove(open);
        },
      ),
    );
    const revokedAt = streams.flatMap((s, i) => (s.open.keyId === revoked ? [i] : []));
    try {
      for (const s of streams) heartbeat.add(s.open);
      const beat = heartbeat.beat();
      expect(heartbeat.beat()).toBe(beat); // a tick during a beat joins it
      await beat;

      // A setImmediate queued at the first write ran before the beat had written every stream.
      expect(writesWhenOtherWorkRan).toBeLessThan(N - 1);
      // The key check's answer ended the revoked key's streams, and only those, before the beat's last write.
      for (const s of streams) expect(s.ended).toEqual(s.open.keyId === revoked ? ['revoked'] : []);
      expect([...writesAtEnd.keys()].sort((a, b) => a - b)).toEqual(revokedAt);
      for (const i of revokedAt) expect(writesAtEnd.get(i)).toBeLessThan(N - 1 - revokedAt.length);
      // A revoked stream whose turn came after that got no heartbeat; one whose turn came before got one.
      const spared = revokedAt.filter((i) => i >= writesAtEnd.get(i)!);
      expect(spared.length).toBeGreaterThan(0);
      for (const i of revokedAt) expect(streams[i]!.writes).toHaveLength(spared.includes(i) ? 0 : 1);
      for (const [i, s] of streams.entries()) {
        if (i < N - 1 && s.open.keyId !== revoked) expect(s.writes).toEqual([': heartbeat\n\n']);
      }
      expect(streams[N - 1]!.writes).toEqual([]);

      // The next beat starts afresh, without the ended streams.
      await heartbeat.beat();
      for (const [i, s] of streams.entries()) {
        if (i < N - 1 && s.open.keyId !== revoked) expect(s.writes).toHaveLength(2);
      }
      for (const i of revokedAt) expect(streams[i]!.writes).toHaveLength(spared.includes(i) ? 0 : 1);
    } finally {
      heartbeat.stop();
    }
  });
});

/**
 * The key check asks about the keys of the streams open when a beat starts; its answer comes back later (a slow
 * query under load). A stream opened meanwhile with another key is not in that answer, and was ended as `revoked`
 * for it: a CI run on a loaded box cut a fresh stream this way and its test waited for events that never came.
 */
describe('the key check of a beat', () => {
  it('ends only streams of keys it asked about and found inactive, not streams opened while it ran', async () => {
    const asked: string[][] = [];
    const answers: ((active: Set<string>) => void)[] = [];
    const auth = {
      activeAmong: (keys: string[]) => {
        asked.push([...keys].sort());
        return new Promise<Set<string>>((resolve) => answers.push(resolve));
      },
    } as unknown as KeyAuthenticator;
    const heartbeat = new StreamHeartbeat({ intervalMs: 3_600_000, clock: systemClock, auth });
    const leave = (open: OpenStream) => heartbeat.remove(open);
    const first = fakeStream('key-a', 0, undefined, leave);
    const doomed = fakeStream('key-b', 0, undefined, leave);
    try {
      heartbeat.add(first.open);
      heartbeat.add(doomed.open);
      await heartbeat.beat();
      expect(asked).toEqual([['key-a', 'key-b']]);

      // Opened while the question is out: one with a key it did not ask about, one with the key being revoked.
      const newcomer = fakeStream('key-c', 0, undefined, leave);
      const lateDoomed = fakeStream('key-b', 0, undefined, leave);
      heartbeat.add(newcomer.open);
      heartbeat.add(lateDoomed.open);
      answers[0]!(new Set(['key-a'])); // key-b was revoked
      await new Promise((resolve) => setImmediate(resolve));

      expect(first.ended).toEqual([]);
      expect(newcomer.ended).toEqual([]);
      expect(doomed.ended).toEqual(['revoked']);
      expect(lateDoomed.ended).toEqual(['revoked']);

      // The next beat asks about the newcomer's key too, and writes to the streams still open.
      await heartbeat.beat();
      expect(asked[1]).toEqual(['key-a', 'key-c']);
      expect(first.writes).toHaveLength(2);
      expect(newcomer.writes).toHaveLength(1);
      expect(lateDoomed.writes).toEqual([]);
      answers[1]!(new Set(['key-a', 'key-c']));
      await new Promise((resolve) => setImmediate(resolve));
      expect(newcomer.ended).toEqual([]);
    } finally {
      heartbeat.stop();
    }
  });
});
