import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { StoredEvent } from './event-log.js';

/**
 * Live fan-out of committed events to subscribers on this and (with Redis) other instances. The bus is never the
 * source of truth: the event log is; a subscriber that misses a live event recovers it by replay.
 */
export interface EventBus {
  /** Publishes committed events, in id order. Never throws: failures are logged. */
  publish(events: StoredEvent[]): Promise<void>;
  /** Calls `listener` for every event published on any instance; returns the unsubscribe function. */
  subscribe(listener: (event: StoredEvent) => void): () => void;
  close(): Promise<void>;
}

/** The embedded default: an in-process bus (one instance). */
export class InProcessEventBus implements EventBus {
  readonly #emitter = new EventEmitter().setMaxListeners(0);

  async publish(events: StoredEvent[]): Promise<void> {
    for (const event of events) this.#emitter.emit('event', event);
  }

  subscribe(listener: (event: StoredEvent) => void): () => void {
    this.#emitter.on('event', listener);
    return () => this.#emitter.off('event', listener);
  }

  async close(): Promise<void> {
    this.#emitter.removeAllListeners();
  }
}

/** The bus for this configuration: in-process by default (Redis when REDIS_URL is set, issue 3). */
export async function createEventBus(_config: Config, _log: Logger): Promise<EventBus> {
  return new InProcessEventBus();
}
