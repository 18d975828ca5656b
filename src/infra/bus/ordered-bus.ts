import type { Logger } from 'pino';
import type { EventBus } from '../../domain/events/event-bus.port.js';
import { type StoredEvent, storedEventFromRow } from '../../domain/events/event-log.js';
import type { Db } from '../db.js';

/** Rows one log read fetches at most; a longer gap is read page by page, each page delivered before the next. */
const FILL_PAGE = 500;

/** Options of {@link OrderedEventBus}. */
export interface OrderedEventBusOptions {
  /** Interval of the tail check (a log read for ids above the watermark), in ms. */
  tailCheckMs: number;
  /**
   * Test-only fault injection: events for which this returns true are never handed to the underlying bus, as if
   * their publish had been lost. Unset in production.
   */
  dropPublish?: (event: StoredEvent) => boolean;
}

/**
 * The per-instance ordered, gap-filling layer between the bus (in-process or Redis) and this instance's stream
 * subscribers. The bus alone can lose an event (a publish that fails after the commit) or reorder two (instances
 * A and B commit 103 then 104, B's publish reaches Redis first), and a subscriber that has sent 104 would never
 * send 103. Event ids commit in order (EventLog's advisory lock), so once id N is seen every committed id below N
 * is in the log; this layer uses that:
 *
 * - a watermark: the highest id delivered to local subscribers (at start, `max(id)` of the log);
 * - an event from the bus with id ≤ watermark is dropped (already delivered); id = watermark + 1 is delivered at
 *   once with no log read (the common case); a higher id first triggers one read of the log for ids in
 *   (watermark, id) across all accounts (ids of rolled-back transactions are simply absent), and those are
 *   delivered in id order before it;
 * - a tail check every `tailCheckMs` reads ids above the watermark, so the last events of a lost publish arrive
 *   even when no later event follows them.
 *
 * Reads are serialised: while one runs, arriving events wait in a small pending map and are merged in id order
 * afterwards, so delivery to local subscribers is strictly increasing and each id is delivered once per instance.
 * An event this instance just committed and is about to publish may be delivered by a read first; its own publish
 * is then dropped by the watermark. With no local subscriber there is nothing to deliver: the watermark follows
 * the bus without reads and the tail check is skipped.
 *
 * Gap notices of the underlying bus (Redis connection lost or regained, failed publish) pass through unchanged.
 */
export class OrderedEventBus implements EventBus {
  readonly #listeners = new Set<(event: StoredEvent) => void>();
  readonly #pending = new Map<bigint, StoredEvent>();
  #watermark = 0n;
  /** A log read (start, fill or tail check) is running; arrivals wait in #pending. */
  #busy = true;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /** The running fill or tail check, awaited by close() so no read outlives the database. */
  #running: Promise<void> | undefined;
  readonly #unsubscribe: () => void;
  /** Log reads since start for gaps (an arrival above watermark + 1), and for tail checks; for figures. */
  #gapReads = 0;
  #tailReads = 0;
  /** Events delivered from a log read rather than from the bus. */
  #filled = 0;

  constructor(
    private readonly inner: EventBus,
    private readonly db: Db,
    private readonly log: Logger,
    private readonly options: OrderedEventBusOptions,
  ) {
    this.#unsubscribe = inner.subscribe((event) => this.#arrive(event));
  }

  /**
   * Sets the watermark to the newest id in the log and starts the tail check. Events that arrive from the bus
   * meanwhile wait and are delivered after it when newer.
   */
  async start(): Promise<void> {
    try {
      const newest = await this.db.event.findFirst({ orderBy: { id: 'desc' }, select: { id: true } });
      this.#watermark = newest?.id ?? 0n;
    } finally {
      this.#busy = false;
    }
    for (const id of [...this.#pending.keys()]) if (id <= this.#watermark) this.#pending.delete(id);
    if (this.#pending.size > 0) this.#work(false);
    this.#timer = setInterval(() => {
      if (!this.#busy && this.#listeners.size > 0) this.#work(true);
    }, this.options.tailCheckMs);
    this.#timer.unref();
  }

  /**
   * Counters since start: log reads for gaps (0 while the bus loses and reorders nothing), tail-check reads (one per
   * interval while local subscribers exist) and events delivered from the log rather than the bus.
   */
  get stats(): { watermark: string; gapReads: number; tailReads: number; filledEvents: number } {
    return {
      watermark: this.#watermark.toString(),
      gapReads: this.#gapReads,
      tailReads: this.#tailReads,
      filledEvents: this.#filled,
    };
  }

  /** Publishes on the underlying bus (minus the test-only dropped ones). Never throws. */
  publish(events: StoredEvent[]): Promise<void> {
    const drop = this.options.dropPublish;
    return this.inner.publish(drop ? events.filter((e) => !drop(e)) : events);
  }

  /** Calls `listener` with every committed event once, in strictly increasing id order; `onGap` as the bus's. */
  subscribe(listener: (event: StoredEvent) => void, onGap?: () => void): () => void {
    this.#listeners.add(listener);
    const offGap = onGap ? this.inner.onGap(onGap) : undefined;
    return () => {
      this.#listeners.delete(listener);
      offGap?.();
    };
  }

  onGap(listener: () => void): () => void {
    return this.inner.onGap(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#unsubscribe();
    this.#listeners.clear();
    await this.#running;
    await this.inner.close();
  }

  #arrive(event: StoredEvent): void {
    const id = BigInt(event.id);
    if (id <= this.#watermark || this.#closed) return;
    if (!this.#busy) {
      if (this.#listeners.size === 0) {
        this.#watermark = id; // nobody to deliver the gap to: no read
        this.#pending.clear();
        return;
      }
      if (id === this.#watermark + 1n && this.#pending.size === 0) {
        this.#deliver(id, event);
        return;
      }
    }
    this.#pending.set(id, event);
    if (!this.#busy) this.#work(false);
  }

  #deliver(id: bigint, event: StoredEvent): void {
    this.#watermark = id;
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (err) {
        this.log.error({ err, eventId: event.id }, 'event subscriber failed');
      }
    }
  }

  /** Delivers pending events with id ≤ `upTo`, in id order. */
  #deliverPending(upTo: bigint): void {
    const due = [...this.#pending.keys()].filter((id) => id <= upTo).sort((a, b) => (a < b ? -1 : 1));
    for (const id of due) {
      const event = this.#pending.get(id)!;
      this.#pending.delete(id);
      if (id > this.#watermark) this.#deliver(id, event);
    }
  }

  /** Starts the serialised fill (callers check #busy first: one runs at a time). */
  #work(tail: boolean): void {
    this.#busy = true;
    const run = this.#fill(tail);
    this.#running = run;
    void run.finally(() => {
      if (this.#running === run) this.#running = undefined;
    });
  }

  /** An optional tail read, then gap reads until nothing waits. Errors wait for the next arrival or tail check. */
  async #fill(tail: boolean): Promise<void> {
    try {
      if (tail) await this.#readLog(undefined);
      for (;;) {
        while (this.#pending.has(this.#watermark + 1n)) this.#deliverPending(this.#watermark + 1n);
        if (this.#pending.size === 0 || this.#closed) break;
        let target = this.#watermark;
        for (const id of this.#pending.keys()) if (id > target) target = id;
        await this.#readLog(target);
      }
    } catch (err) {
      // Pending events stay; the next arrival or tail check retries the read.
      if (!this.#closed) this.log.warn({ err }, 'event log read for live delivery failed; retrying');
    } finally {
      // Cleared in the same tick as the last check of #pending, so no arrival can be left waiting in it.
      this.#busy = false;
    }
  }

  /**
   * Reads committed events with id in (watermark, `before`) (no upper bound when undefined) page by page and
   * delivers them merged with the pending ones in id order. With a bound, `before` itself (pending, committed)
   * follows: every lower id has committed or rolled back, so the read is complete.
   */
  async #readLog(before: bigint | undefined): Promise<void> {
    for (;;) {
      const from = this.#watermark;
      const rows = await this.db.event.findMany({
        where: { id: before === undefined ? { gt: from } : { gt: from, lt: before } },
        orderBy: { id: 'asc' },
        take: FILL_PAGE,
      });
      if (before === undefined) this.#tailReads++;
      else this.#gapReads++;
      if (this.#closed) return;
      for (const row of rows) {
        if (!this.#pending.has(row.id)) {
          this.#pending.set(row.id, storedEventFromRow(row));
          this.#filled++;
        }
      }
      const last = rows.at(-1)?.id;
      if (rows.length < FILL_PAGE) {
        if (before !== undefined) this.#deliverPending(before);
        else if (last !== undefined) this.#deliverPending(last);
        return;
      }
      this.#deliverPending(last!);
    }
  }
}
