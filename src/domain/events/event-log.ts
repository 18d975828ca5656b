import type { Clock } from '../../infra/clock.js';
import type { Db, Tx } from '../../infra/db.js';
import { type ChangeNotices, topicsOfEvent } from './change-notices.port.js';
import type { EventBus } from './event-bus.port.js';
import { type Channel, channelOf } from './event-catalog.js';

/**
 * An event as stored in the log. `id` is the log id as a decimal string (SSE `id:`): globally unique, and
 * committed in increasing order within an account (not across accounts; docs/events.md). `seq` is the event's
 * position in its account's log (1, 2, 3, ... without holes), which the ordered bus uses to see a lost publish.
 */
export interface StoredEvent {
  id: string;
  seq: string;
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
  seq: bigint;
  accountId: string;
  channel: string;
  eventType: string;
  payload: unknown;
  createdAt: Date;
}): StoredEvent {
  return {
    id: row.id.toString(),
    seq: row.seq.toString(),
    accountId: row.accountId,
    channel: row.channel as Channel,
    eventType: row.eventType,
    payload: (row.payload ?? {}) as Record<string, unknown>,
    timestamp: row.createdAt.toISOString(),
  };
}

/** Most ingests one group-commit transaction takes (the rest wait for the next one). */
export const INGEST_BATCH_MAX = 500;

/** One event to record: its account, catalog type and JSON object payload. */
export interface NewEvent {
  accountId: string;
  eventType: string;
  payload: Record<string, unknown>;
}

interface WaitingIngest {
  item: NewEvent;
  resolve: (event: StoredEvent) => void;
  reject: (err: unknown) => void;
}

/**
 * "Events are facts in the database first" (ARCHITECTURE.md): a domain change and the events it causes commit in
 * one transaction; after the commit the events are published on the bus for live subscribers.
 *
 * Ordering (docs/events.md): every reader reads one account at a time, so the guarantee is per account: a reader
 * that has seen id N of an account never later finds a committed id below N in that account. The statement that
 * inserts an account's events first bumps the account's row in `event_account_seqs`; its row lock, held to COMMIT,
 * orders the event transactions of that one account (ids are drawn after it is taken), and transactions of other
 * accounts never wait for it. The same row numbers the account's events (`seq`) without holes.
 */
export class EventLog {
  readonly #hooks: EventHook[] = [];
  /** Group commit: per account, the ingests waiting while that account's ingest transaction runs. */
  readonly #ingests = new Map<string, WaitingIngest[]>();

  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    private readonly notices?: ChangeNotices,
  ) {}

  /** After the commit: publishes each event on the change-notice topics of the objects it is about (never throws). */
  async #notify(events: StoredEvent[]): Promise<void> {
    if (!this.notices) return;
    for (const event of events) for (const topic of topicsOfEvent(event)) await this.notices.publish(topic, event);
  }

  /** Adds a hook that runs in the recording transaction of every event. */
  addHook(hook: EventHook): void {
    this.#hooks.push(hook);
  }

  /**
   * Runs `fn` in one database transaction, handing it `emit` to record events in that same transaction. The first
   * `emit` for an account takes that account's event-order row lock until COMMIT (other accounts are not held
   * up). After the commit, every recorded event is published on the bus (a publish failure is logged by the bus,
   * never thrown: the events are already durable, and each instance's OrderedEventBus delivers a lost publish
   * from the log). A transaction that emits for two accounts takes their locks in emit order; two such
   * transactions emitting in opposite orders can deadlock, which PostgreSQL resolves by failing one of them.
   * @returns what `fn` returns. Throws whatever `fn` throws, after rolling back the change and its events.
   */
  async transaction<T>(fn: (tx: Tx, emit: Emit) => Promise<T>): Promise<T> {
    const recorded: StoredEvent[] = [];
    const result = await this.db.$transaction(async (tx) => {
      const emit: Emit = async (accountId, eventType, payload) => {
        const [event] = await this.record(tx, [{ accountId, eventType, payload }]);
        recorded.push(event!);
        return event!;
      };
      return fn(tx, emit);
    });
    if (recorded.length > 0) {
      await this.bus.publish(recorded);
      await this.#notify(recorded);
    }
    return result;
  }

  /**
   * Records events outside any other change, all in one transaction (one insert statement per account), and
   * publishes them after the commit. @returns the stored events, in the order of `items`.
   */
  async append(items: NewEvent[]): Promise<StoredEvent[]> {
    const byAccount = new Map<string, NewEvent[]>();
    for (const item of items) {
      const list = byAccount.get(item.accountId);
      if (list) list.push(item);
      else byAccount.set(item.accountId, [item]);
    }
    const stored = new Map<NewEvent, StoredEvent>();
    await this.db.$transaction(async (tx) => {
      // Accounts in a fixed order, so two multi-account appends cannot deadlock on their row locks.
      for (const accountId of [...byAccount.keys()].sort()) {
        const list = byAccount.get(accountId)!;
        const events = await this.record(tx, list);
        list.forEach((item, i) => {
          stored.set(item, events[i]!);
        });
      }
    });
    const result = items.map((item) => stored.get(item)!);
    const ordered = [...result].sort((x, y) => (BigInt(x.id) < BigInt(y.id) ? -1 : 1));
    await this.bus.publish(ordered);
    await this.#notify(ordered);
    return result;
  }

  /**
   * Ingest with group commit: records one event and resolves once it has committed (so a 2xx is only ever sent for
   * a durable event). While an ingest transaction of the same account runs, further ingests of that account wait
   * and are then written together in one transaction (up to {@link INGEST_BATCH_MAX}), so concurrent ingests of one
   * account share a commit instead of queueing on its row lock one by one. Ingests of other accounts run in
   * parallel. A failed transaction rejects every ingest it carried.
   * @returns the stored event. @throws what the transaction throws (database errors).
   */
  ingest(item: NewEvent): Promise<StoredEvent> {
    return new Promise<StoredEvent>((resolve, reject) => {
      const entry: WaitingIngest = { item, resolve, reject };
      const waiting = this.#ingests.get(item.accountId);
      if (waiting) {
        waiting.push(entry);
        return;
      }
      this.#ingests.set(item.accountId, []);
      void this.#runIngests(item.accountId, [entry]);
    });
  }

  async #runIngests(accountId: string, first: WaitingIngest[]): Promise<void> {
    let batch = first;
    while (batch.length > 0) {
      try {
        const events = await this.append(batch.map((w) => w.item));
        for (const [i, w] of batch.entries()) w.resolve(events[i]!);
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
      batch = this.#ingests.get(accountId)!.splice(0, INGEST_BATCH_MAX);
    }
    this.#ingests.delete(accountId);
  }

  /**
   * Inserts events of ONE account in one statement that first bumps the account's `event_account_seqs` row (the
   * per-account order lock, held to COMMIT), then runs the hooks for each event in order.
   * @returns the stored events in `items` order (increasing id and seq).
   * @throws Error for an event type outside the catalog (a programming error: inputs are validated before).
   */
  private async record(tx: Tx, items: NewEvent[]): Promise<StoredEvent[]> {
    const accountId = items[0]!.accountId;
    const channels: string[] = [];
    const types: string[] = [];
    const payloads: string[] = [];
    for (const item of items) {
      const channel = channelOf(item.eventType);
      if (!channel) throw new Error(`event type ${item.eventType} is not in the event catalog`);
      if (item.accountId !== accountId) throw new Error('record() takes the events of one account');
      channels.push(channel);
      types.push(item.eventType);
      payloads.push(JSON.stringify(item.payload));
    }
    const at = this.clock.now();
    const n = items.length;
    // The CTE runs first (the insert reads its row), so ids are drawn after the row lock is held; rows are inserted
    // in ordinality order, so ids increase with seq.
    const rows = await tx.$queryRaw<{ id: bigint; seq: bigint }[]>`
      WITH s AS (
        INSERT INTO event_account_seqs (account_id, last_seq) VALUES (${accountId}, ${n}::bigint)
        ON CONFLICT (account_id) DO UPDATE SET last_seq = event_account_seqs.last_seq + EXCLUDED.last_seq
        RETURNING last_seq
      )
      INSERT INTO events (account_id, channel, event_type, payload, created_at, seq)
      SELECT ${accountId}, i.channel, i.event_type, i.payload::json, ${at}::timestamptz, s.last_seq - ${n}::bigint + i.ord
        FROM s, unnest(${channels}::text[], ${types}::text[], ${payloads}::text[]) WITH ORDINALITY AS i(channel, event_type, payload, ord)
      RETURNING id, seq`;
    rows.sort((a, b) => (a.seq < b.seq ? -1 : 1));
    for (let i = 1; i < rows.length; i++) {
      // A guard on the invariant the ordered bus and replay rely on (rolls the transaction back if ever broken).
      if (rows[i]!.id <= rows[i - 1]!.id) throw new Error('event ids must increase with seq within an account');
    }
    const timestamp = at.toISOString();
    const events = rows.map((row, i) => ({
      id: row.id.toString(),
      seq: row.seq.toString(),
      accountId,
      channel: channels[i] as Channel,
      eventType: types[i]!,
      payload: JSON.parse(payloads[i]!) as Record<string, unknown>,
      timestamp,
    }));
    for (const event of events) for (const hook of this.#hooks) await hook(tx, event);
    return events;
  }
}
