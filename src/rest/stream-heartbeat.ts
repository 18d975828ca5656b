import type { ServerResponse } from 'node:http';
import type { KeyAuthenticator } from '../domain/accounts/account.service.js';
import type { EventSubscription } from '../domain/events/event-stream.js';
import { CLOCK_EVERY, FANOUT_TURN_MS } from '../infra/bus/ordered-bus.js';
import type { Clock } from '../infra/clock.js';

/** One open SSE response, as the instance's heartbeat sees it. */
export interface OpenStream {
  res: ServerResponse;
  sub: EventSubscription;
  keyId: string;
  /** When the stream token that opened it expires (stream-token.ts); undefined for an API key. */
  expiresAt?: Date;
}

/** The comment, encoded once: every stream's write takes the same bytes (no string encoded per stream). */
const HEARTBEAT = Buffer.from(': heartbeat\n\n', 'utf8');

/**
 * Whether a response's buffer is full, so nothing more is written until its `drain` event: node:http's
 * `writableNeedDrain`; the HTTP/2 compatibility response (HTTP_TLS_CERT) has no such property, so there its buffered
 * bytes against its high-water mark, the same test its `write` returns false on.
 */
export function needsDrain(res: ServerResponse): boolean {
  return res.writableNeedDrain ?? res.writableLength >= res.writableHighWaterMark;
}

/**
 * The heartbeat of every SSE stream of one app (made by `eventsRoutes`, src/rest/routes/events.routes.ts): one timer
 * writes `: heartbeat` to all open streams every `intervalMs` (EVENT_STREAM_HEARTBEAT_MS) and re-checks all their API
 * keys with ONE query ({@link KeyAuthenticator.activeAmong}), ending the streams whose key was revoked or deleted, so a
 * revoked key stops receiving within one interval while 10,000 idle streams cost one query per interval, not one per
 * stream. An unreachable database keeps the streams (the next interval asks again). The timer runs only while a
 * stream is open.
 *
 * A beat writes in turns bounded in time, as the bus's fan-out does ({@link FANOUT_TURN_MS}, the clock read every
 * {@link CLOCK_EVERY} streams), and yields between them: at 50,000 HTTP/2 streams one callback writing them all held
 * the event loop up to 2 s on 2 cores, and a request or an event fan-out waited behind it (issue 24 round 15,
 * docs/performance.md).
 */
export class StreamHeartbeat {
  readonly #open = new Set<OpenStream>();
  #timer: NodeJS.Timeout | undefined;
  #checking = false;
  /** The beat still writing its turns, if any: a timer tick meanwhile does not start another. */
  #beating: Promise<void> | undefined;

  constructor(private readonly deps: { intervalMs: number; clock: Clock; auth: KeyAuthenticator }) {}

  /** Adds an open stream; {@link remove} it when its response ends. */
  add(stream: OpenStream): void {
    this.#open.add(stream);
    if (!this.#timer) {
      this.#timer = setInterval(() => void this.beat(), this.deps.intervalMs);
      this.#timer.unref();
    }
  }

  /** Removes a stream {@link add}ed before (idempotent); the timer stops with the last one. */
  remove(stream: OpenStream): void {
    if (this.#open.delete(stream) && this.#open.size === 0) this.stop();
  }

  /** Stops the timer (the last stream ended, or the app closes); a later `add` starts it again. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * One beat (the timer's tick): first ends the streams whose stream token expired and starts the re-check of the
   * keys of every open stream, then writes `: heartbeat` to every stream open when it starts and still open (and not
   * ended) when its turn comes (none whose buffer is full: it has bytes on the way), in turns that yield to other
   * work. The key check's answer ends a revoked key's streams between two turns, so at 50,000 streams a revoked key
   * stops receiving one query after the tick rather than after the beat's writes (≈ 1–2 s on 2 cores). The tick of
   * a beat still writing joins it.
   * @returns when the writes are done (the key check goes on in the background).
   */
  beat(): Promise<void> {
    if (this.#beating) return this.#beating;
    let done!: () => void;
    const beating = new Promise<void>((resolve) => {
      done = resolve;
    });
    this.#beating = beating;
    const streams = [...this.#open];
    const keys = new Set<string>();
    for (const s of streams) keys.add(s.keyId);
    this.#checkKeys(keys);
    let next = 0;
    const turn = () => {
      const deadline = performance.now() + FANOUT_TURN_MS;
      while (next < streams.length) {
        const end = Math.min(streams.length, next + CLOCK_EVERY);
        for (; next < end; next++) {
          const s = streams[next]!;
          // Ended since the beat began, or ending (its response closes in the next microtask).
          if (!this.#open.has(s) || s.sub.endReason !== undefined) continue;
          if (!needsDrain(s.res)) s.res.write(HEARTBEAT);
        }
        if (next < streams.length && performance.now() >= deadline) {
          setImmediate(turn);
          return;
        }
      }
      this.#beating = undefined;
      done();
    };
    turn();
    return beating;
  }

  /**
   * Ends the streams whose stream token expired, then, when the database answers, the open streams whose key is one
   * of `keys` and no longer active (a revoked key never becomes active again, so that includes streams opened with it
   * after the question).
   */
  #checkKeys(keys: Set<string>): void {
    // A stream opened with a stream token ends when the token expires, as for a revoked key.
    const now = this.deps.clock.now().getTime();
    for (const s of [...this.#open]) if (s.expiresAt && s.expiresAt.getTime() <= now) s.sub.end('revoked');
    if (this.#checking || keys.size === 0) return;
    this.#checking = true;
    this.deps.auth
      .activeAmong([...keys])
      .then(
        (active) => {
          // Only the keys asked about: a stream opened meanwhile with another key is not in the answer, and its
          // key is not revoked for that (ending it anyway cut fresh streams while the check was slow, under load).
          for (const s of [...this.#open]) if (keys.has(s.keyId) && !active.has(s.keyId)) s.sub.end('revoked');
        },
        () => {}, // the database is unreachable: keep streaming; the next heartbeat asks again
      )
      .finally(() => {
        this.#checking = false;
      });
  }
}
