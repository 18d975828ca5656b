import type { ServerResponse } from 'node:http';
import type { KeyAuthenticator } from '../domain/accounts/account.service.js';
import type { EventSubscription } from '../domain/events/event-stream.js';
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
 * The heartbeat of every SSE stream of one app (made by `eventsRoutes`, src/rest/routes/events.routes.ts): one timer writes `: heartbeat` to all open
 * streams every `intervalMs` (EVENT_STREAM_HEARTBEAT_MS) and re-checks all their API keys with ONE query
 * ({@link KeyAuthenticator.activeAmong}), ending the streams whose key was revoked or deleted, so a revoked key stops
 * receiving within one interval while 10,000 idle streams cost one query per interval, not one per stream. An
 * unreachable database keeps the streams (the next interval asks again). The timer runs only while a stream is open.
 */
export class StreamHeartbeat {
  readonly #open = new Set<OpenStream>();
  #timer: NodeJS.Timeout | undefined;
  #checking = false;

  constructor(private readonly deps: { intervalMs: number; clock: Clock; auth: KeyAuthenticator }) {}

  /** Adds an open stream; {@link remove} it when its response ends. */
  add(stream: OpenStream): void {
    this.#open.add(stream);
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#beat(), this.deps.intervalMs);
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

  #beat(): void {
    const keys = new Set<string>();
    for (const s of this.#open) {
      if (!needsDrain(s.res)) s.res.write(HEARTBEAT);
      keys.add(s.keyId);
    }
    // A stream opened with a stream token ends when the token expires, as for a revoked key.
    const now = this.deps.clock.now().getTime();
    for (const s of [...this.#open]) if (s.expiresAt && s.expiresAt.getTime() <= now) s.sub.end('revoked');
    if (this.#checking || keys.size === 0) return;
    this.#checking = true;
    this.deps.auth
      .activeAmong([...keys])
      .then(
        (active) => {
          for (const s of [...this.#open]) if (!active.has(s.keyId)) s.sub.end('revoked');
        },
        () => {}, // the database is unreachable: keep streaming; the next heartbeat asks again
      )
      .finally(() => {
        this.#checking = false;
      });
  }
}
