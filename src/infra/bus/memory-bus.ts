import { EventEmitter } from 'node:events';
import type { StoredEvent } from '../../domain/events/event.js';
import type { BusHealth, BusScope, BusSubscriber, EventBus } from '../../domain/events/event-bus.port.js';

/** The embedded default: an in-process bus (one instance). It never loses an event, so it never reports a gap. */
export class InProcessEventBus implements EventBus {
  readonly #emitter = new EventEmitter().setMaxListeners(0);
  readonly #attached = new Map<BusSubscriber, () => void>();

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

  /** Raw buses are not what streams attach to (the ordered bus is): a listener per subscriber is fine here. */
  attach(subscriber: BusSubscriber, _scope: BusScope): void {
    this.#attached.set(
      subscriber,
      this.subscribe((event) => subscriber.deliver(event)),
    );
  }

  detach(subscriber: BusSubscriber, _scope: BusScope): void {
    this.#attached.get(subscriber)?.();
    this.#attached.delete(subscriber);
  }

  /** Never: nothing is lost in-process. */
  interrupted(): boolean {
    return false;
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
