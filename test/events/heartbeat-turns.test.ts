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

/** A stream as the heartbeat sees it: its writes counted, each taking `writeMs` of CPU; `ended` records `end`. */
function fakeStream(keyId: string, writeMs: number, onWrite?: () => void) {
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
  const sub = { end: (reason: string) => stream.ended.push(reason) } as unknown as EventSubscription;
  stream.open = { res, sub, keyId };
  return stream;
}

/**
 * The instance heartbeat (src/rest/stream-heartbeat.ts) writes its comment to every open stream in turns bounded in
 * time, as the bus's fan-out does: a beat to many streams lets other work run between turns (issue 24 round 15: one
 * callback for 50,000 HTTP/2 streams held the loop up to 2 s), still writes each stream once, skips a stream that
 * ended meanwhile, and re-checks the keys after its writes.
 */
describe('a heartbeat longer than one turn', () => {
  it('yields to other work between turns, writes each open stream once and re-checks the keys', async () => {
    const revoked = 'key-revoked';
    const auth = {
      activeAmong: async (keys: string[]) => new Set(keys.filter((k) => k !== revoked)),
    } as unknown as KeyAuthenticator;
    const heartbeat = new StreamHeartbeat({ intervalMs: 3_600_000, clock: systemClock, auth });
    // 600 streams taking 0.25 ms a write: 256 writes (the first look at the clock) already outlast a 50 ms turn.
    const N = 600;
    let writes = 0;
    let writesWhenOtherWorkRan: number | undefined;
    const streams = Array.from({ length: N }, (_, i) =>
      fakeStream(i % 100 === 7 ? revoked : `key-${i % 3}`, 0.25, () => {
        if (writes++ === 0) setImmediate(() => (writesWhenOtherWorkRan ??= writes));
        // The stream at the end ends (its response closed) while the beat is under way.
        if (writes === 10) heartbeat.remove(streams[N - 1]!.open);
      }),
    );
    try {
      for (const s of streams) heartbeat.add(s.open);
      const beat = heartbeat.beat();
      expect(heartbeat.beat()).toBe(beat); // a tick during a beat joins it
      await beat;

      // A setImmediate queued at the first write ran before the beat had written every stream.
      expect(writesWhenOtherWorkRan).toBeLessThan(N - 1);
      for (const s of streams.slice(0, N - 1)) expect(s.writes).toEqual([': heartbeat\n\n']);
      expect(streams[N - 1]!.writes).toEqual([]);
      // After the writes, one key check ends the streams of the revoked key, and only those.
      await expect
        .poll(() => streams.filter((s) => s.ended.length > 0).length)
        .toBe(streams.filter((s, i) => i < N - 1 && s.open.keyId === revoked).length);
      for (const s of streams) expect(s.ended).toEqual(s.open.keyId === revoked ? ['revoked'] : []);

      // The next beat starts afresh.
      await heartbeat.beat();
      for (const s of streams.slice(0, N - 1)) expect(s.writes).toHaveLength(2);
    } finally {
      heartbeat.stop();
    }
  });
});
