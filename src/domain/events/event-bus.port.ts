import type { StoredEvent } from './event-log.js';

/**
 * Live fan-out of committed events to subscribers on this and (with Redis) other instances. The bus is never the
 * source of truth: the event log is. The raw buses below may lose or reorder a publish; the app wraps them in
 * `OrderedEventBus` (ordered-bus.ts), which fills such gaps from the log before local subscribers see them.
 */
export interface EventBus {
  /** Publishes committed events, in id order. Never throws: failures are logged. */
  publish(events: StoredEvent[]): Promise<void>;
  /**
   * Calls `listener` for every event published on any instance; returns the unsubscribe function. `onGap` is
   * called when live delivery may have missed events (Redis connection lost or regained, a publish failed): the
   * subscriber should end its stream so the client resumes by replay (`Last-Event-ID`).
   */
  subscribe(listener: (event: StoredEvent) => void, onGap?: () => void): () => void;
  /** Calls `listener` on every gap notice (as `subscribe`'s `onGap`, without events); returns the remover. */
  onGap(listener: () => void): () => void;
  close(): Promise<void>;
}
