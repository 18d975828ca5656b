import { EventEmitter } from 'node:events';
import type { StoredEvent } from '../../domain/events/event.js';
import type { BusHealth, EventBus } from '../../domain/events/event-bus.port.js';

/** The embedded default: an in-process bus (one instance). It never loses an event, so it never reports a gap. */
export class InProcessEventBus implements EventBus {
  readonly #emitter = new EventEmitter().setMaxListeners(0);

  /** Always up: it lives in this process. */
  health(): BusHealth {
    return { kind: 'in-process', up: true };
  }

  /** Calls the listeners with each event before it returns (no promise: issue 24). */
  publish(events: StoredEvent[]): void {
    for (const event of events) this.#emitter.emit('event', event);
  }

  subscribe(listener: (event: StoredEvent) => void): () => void {
    this.#emitter.on('event', listener);
    return () => this.#emitter.off('event', listener);
  }

  /** Tracks nothing: every publish reaches every subscriber. */
  async whenReady(_accountId: string): Promise<void> {}

  onGap(): () => void {
    return () => {};
  }

  async close(): Promise<void> {
    this.#emitter.removeAllListeners();
  }
}
