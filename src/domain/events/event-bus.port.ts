import type { StoredEvent } from './event.js';

/**
 * Live fan-out of committed events to subscribers on this and (with Redis) other instances. The bus is never the
 * source of truth: the event log is. The raw buses below may lose or reorder a publish; the app wraps them in
 * `OrderedEventBus` (ordered-bus.ts), which fills such gaps from the log before local subscribers see them.
 */
/**
 * Which events a subscriber wants: one account's, optionally only some channels. The ordered bus indexes its
 * subscribers by it, so a publish does no work for a subscriber that does not want the event; a raw bus may ignore
 * it (subscribers still filter).
 */
export interface BusScope {
  accountId: string;
  /** Channel names; every channel when undefined. */
  channels?: readonly string[];
  /**
   * Subscribers of one scope with the same `group` are called one after another within an event's fan-out (the
   * ordered bus; a raw bus ignores it): the streams of one HTTP/2 connection, so a fan-out that yields between turns
   * leaves each connection's frames to one turn (one TLS write, one wake of the client) rather than one per turn.
   * Compared by identity; undefined: no group.
   */
  group?: object;
}

/** What /readyz reports of the bus: its kind and whether it can deliver across instances right now. */
export interface BusHealth {
  kind: 'in-process' | 'redis';
  /** false while Redis is unreachable (live delivery then degrades to replay on reconnect). */
  up: boolean;
}

/**
 * A scoped subscriber as one object (an open stream's `EventSubscription`), so a subscription costs the bus a set
 * entry and no closures (issue 24: memory per open stream). Attach with {@link EventBus.attach}, detach with the
 * same scope.
 */
export interface BusSubscriber {
  /** Each committed event of the scope (as `subscribe`'s `listener`). */
  deliver(event: StoredEvent): void;
  /** Live delivery may have missed events (as `subscribe`'s `onGap`): end the stream so the client replays. */
  gap(): void;
}

export interface EventBus {
  /** The bus's state for readiness probes (docs/configuration.md, /readyz). */
  health(): BusHealth;
  /**
   * Publishes committed events, in id order. Never throws: failures are logged. @returns a promise settled once a
   * shared transport took them (Redis), or nothing when the publish is done on return (in-process: the listeners
   * were called), so a caller waits only where there is something to wait for.
   */
  publish(events: StoredEvent[]): Promise<void> | void;
  /**
   * Calls `listener` for every event published on any instance (only those of `scope` when given); returns the
   * unsubscribe function. `onGap` is
   * called when live delivery may have missed events (Redis connection lost or regained, a publish failed): the
   * subscriber should end its stream so the client resumes by replay (`Last-Event-ID`).
   */
  subscribe(listener: (event: StoredEvent) => void, onGap?: () => void, scope?: BusScope): () => void;
  /**
   * {@link subscribe} for a subscriber object: `subscriber.deliver` gets the events of `scope`, `subscriber.gap` the
   * gap notices (at once, in a microtask, when delivery is interrupted right now). Remove it with {@link detach}.
   */
  attach(subscriber: BusSubscriber, scope: BusScope): void;
  /** Removes a subscriber attached with `scope` (idempotent). */
  detach(subscriber: BusSubscriber, scope: BusScope): void;
  /**
   * Whether live delivery is interrupted right now (Redis connection lost and not yet resubscribed): a gap
   * listener added now is told at once. Always false in-process.
   */
  interrupted(): boolean;
  /**
   * Resolves once live delivery for `accountId` is tracked: every event of the account that commits after this
   * resolves reaches the subscribers of the account. A stream awaits it before reading its replay, so the replay
   * and live delivery meet without a hole. Buses that track nothing resolve at once.
   */
  whenReady(accountId: string): Promise<void>;
  /** Calls `listener` on every gap notice (as `subscribe`'s `onGap`, without events); returns the remover. */
  onGap(listener: () => void): () => void;
  close(): Promise<void>;
}
