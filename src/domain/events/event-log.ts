import type { Clock } from '../../infra/clock.js';
import type { Db, Tx } from '../../infra/db.js';
import type { EventBus } from './event-bus.port.js';
import { type Channel, channelOf } from './event-catalog.js';

/** An event as stored in the log. `id` is the global monotonic log id as a decimal string (SSE `id:`). */
export interface StoredEvent {
  id: string;
  accountId: string;
  channel: Channel;
  eventType: string;
  payload: Record<string, unknown>;
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string;
}

/** The envelope of spec 2.11: the webhook body and the SSE `data:` line. */
export interface EventEnvelope {
  channel: string;
  eventType: string;
  payload: Record<string, unknown>;
  customerId: string;
  timestamp: string;
}

/** Spec 2.11 envelope of a stored event. */
export function toEnvelope(e: StoredEvent): EventEnvelope {
  return {
    channel: e.channel,
    eventType: e.eventType,
    payload: e.payload,
    customerId: e.accountId,
    timestamp: e.timestamp,
  };
}

/** Records one event inside the caller's transaction and returns it. */
export type Emit = (accountId: string, eventType: string, payload: Record<string, unknown>) => Promise<StoredEvent>;

/**
 * Runs inside the transaction that records an event, after its row is written (e.g. the webhook fan-out that
 * writes one delivery row per matching webhook, so an event and its deliveries commit together or not at all).
 */
export type EventHook = (tx: Tx, event: StoredEvent) => Promise<void>;

/** Converts a Prisma `Event` row. */
export function storedEventFromRow(row: {
  id: bigint;
  accountId: string;
  channel: string;
  eventType: string;
  payload: unknown;
  createdAt: Date;
}): StoredEvent {
  return {
    id: row.id.toString(),
    accountId: row.accountId,
    channel: row.channel as Channel,
    eventType: row.eventType,
    payload: (row.payload ?? {}) as Record<string, unknown>,
    timestamp: row.createdAt.toISOString(),
  };
}

/** Key of the advisory lock that orders event-writing transactions (an arbitrary constant, "sb-evts"). */
const EVENT_ORDER_LOCK = 0x73622d65767473n;

/**
 * "Events are facts in the database first" (ARCHITECTURE.md): a domain change and the events it causes commit in
 * one transaction; after the commit the events are published on the bus for live subscribers.
 */
export class EventLog {
  readonly #hooks: EventHook[] = [];

  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly clock: Clock,
  ) {}

  /** Adds a hook that runs in the recording transaction of every event. */
  addHook(hook: EventHook): void {
    this.#hooks.push(hook);
  }

  /**
   * Runs `fn` in one database transaction, handing it `emit` to record events in that same transaction. Such
   * transactions are serialised (advisory lock) so event ids commit in order. After the commit, every recorded
   * event is published on the bus (a publish failure is logged by the bus, never thrown: the events are already
   * durable, and each instance's OrderedEventBus delivers a lost publish from the log).
   * @returns what `fn` returns. Throws whatever `fn` throws, after rolling back the change and its events.
   */
  async transaction<T>(fn: (tx: Tx, emit: Emit) => Promise<T>): Promise<T> {
    const recorded: StoredEvent[] = [];
    const result = await this.db.$transaction(async (tx) => {
      // Event-writing transactions take one transaction-scoped advisory lock first, so ids are allocated and
      // committed in the same order: a reader that has seen id N can never later find a committed id below N.
      // That makes `id > cursor` (replay, history, webhooks) gap-free. Taken first, so it cannot deadlock.
      await tx.$queryRaw`SELECT 1 AS locked FROM pg_advisory_xact_lock(${EVENT_ORDER_LOCK}::bigint)`;
      const emit: Emit = async (accountId, eventType, payload) => {
        const event = await this.record(tx, accountId, eventType, payload);
        recorded.push(event);
        return event;
      };
      return fn(tx, emit);
    });
    if (recorded.length > 0) await this.bus.publish(recorded);
    return result;
  }

  /** Records events outside any other change (e.g. the ingest endpoint). @returns the stored events. */
  async append(
    items: { accountId: string; eventType: string; payload: Record<string, unknown> }[],
  ): Promise<StoredEvent[]> {
    return this.transaction(async (_tx, emit) => {
      const out: StoredEvent[] = [];
      for (const item of items) out.push(await emit(item.accountId, item.eventType, item.payload));
      return out;
    });
  }

  private async record(
    tx: Tx,
    accountId: string,
    eventType: string,
    payload: Record<string, unknown>,
  ): Promise<StoredEvent> {
    const channel = channelOf(eventType);
    if (!channel) throw new Error(`event type ${eventType} is not in the event catalog`);
    const row = await tx.event.create({
      data: { accountId, channel, eventType, payload: payload as object, createdAt: this.clock.now() },
    });
    const event = storedEventFromRow(row);
    for (const hook of this.#hooks) await hook(tx, event);
    return event;
  }
}
