import type { Logger } from 'pino';
import { type StoredEvent, storedEventFromRow } from '../../domain/events/event.js';
import type { BusHealth, BusScope, BusSubscriber, EventBus } from '../../domain/events/event-bus.port.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { Database, Db } from '../db.js';

/** Rows one log read fetches at most; a longer gap is read page by page, each page delivered before the next. */
const FILL_PAGE = 500;

/**
 * How long one turn of the fan-out calls subscribers before yielding to I/O (setImmediate), in ms of the event-loop
 * thread's CPU time ({@link FANOUT_TURN_WALL_MS} caps it in wall clock): the fan-out holds the event loop about this
 * long at a time, and other requests (a publish, a REST call, another stream) run between turns; what they wait in
 * all also includes the streams' own I/O (170–630 ms for a `GET /healthz` during a 50,000-stream fan-out on 2
 * cores, issue 24 round 14). A trade between their wait and the fan-out's tail, measured with `npm run bench` sse-10k
 * (docs/performance.md, issue 24 rounds 13–16):
 * turns of 5,000 calls left the last of 50,000 HTTP/2 streams up to 2.8x later than the bare broadcaster's single
 * loop (20 client processes read the first turns' frames on the same cores meanwhile), one turn for all held the
 * loop 128–232 ms. A bound in time rather than in calls holds the same for any per-call cost (a slow machine, frames
 * that need more work).
 */
export const FANOUT_TURN_MS = 50;

/**
 * The fan-out's turn counts {@link FANOUT_TURN_MS} of the event-loop thread's own CPU time
 * (`process.threadCpuUsage`, µs), not of the wall clock, and ends at the latest after this many ms of wall clock. On a
 * shared box the service is descheduled while other processes (the clients reading earlier turns' frames) run: a turn
 * of 50 ms wall clock then held 10–30 ms of CPU, and a 50,000-stream fan-out took up to 18 turns, each followed by
 * node:http2's sending of its frames (issue 24 round 16: p99 publish → received ≤ 1.5x the bare broadcaster in 4 of
 * 7 alternated runs against 2 of 7, the gain in the loaded pairs).
 */
export const FANOUT_TURN_WALL_MS = 200;

/** The event-loop thread's CPU time so far, µs (user + system). */
function threadCpuUs(): number {
  const used = process.threadCpuUsage();
  return used.user + used.system;
}

/** Subscriber calls between two reads of the clock within a turn (a read costs about as much as a call). */
export const CLOCK_EVERY = 256;

/** The channel key of subscribers without a channel list. */
const ALL_CHANNELS: readonly string[] = ['*'];

/** The group key of subscribers without a fan-out group (`BusScope.group`): one set for all of them. */
const NO_GROUP: object = Object.freeze({});

/** Options of {@link OrderedEventBus}. */
export interface OrderedEventBusOptions {
  /** Interval of the tail check (one read of the tracked accounts' positions), in ms. */
  tailCheckMs: number;
  /**
   * Test-only fault injection: events for which this returns true are never handed to the underlying bus, as if
   * their publish had been lost. Unset in production.
   */
  dropPublish?: (event: StoredEvent) => boolean;
  /**
   * Runs the start read (the positions of accounts whose first local subscriber arrived) below Prisma, on the pool
   * (`Database.statement`): a stream that resumes waits for this read before its replay (issue 24). Through Prisma's
   * `$queryRaw` when unset.
   */
  statement?: Database['statement'];
}

/** A row of the start read: int8 columns as bigint (Prisma, PGlite) or as a decimal string (pg). */
interface StartRow {
  account_id: string;
  last_seq: bigint | string;
  last_id: bigint | string | null;
}

type Listener = (event: StoredEvent) => void;
/** What the fan-out calls: a listener function (`subscribe`) or a subscriber object (`attach`, an open stream). */
type Receiver = Listener | BusSubscriber;

/** Live-delivery state of one account with local subscribers. */
interface AccountState {
  accountId: string;
  /** Position (`seq`) and id of the last event delivered; unknown (undefined) until the start read is back. */
  seq: bigint | undefined;
  id: bigint;
  /** Arrivals above seq + 1, waiting for the events before them. */
  pending: Map<bigint, StoredEvent>;
  /** A log read for this account runs; arrivals wait in `pending`. */
  busy: boolean;
  /**
   * Subscribers by channel ('*' for every channel), then by fan-out group (`BusScope.group`, {@link NO_GROUP} for
   * none): a group's members are called one after another.
   */
  listeners: Map<string, Map<object, Set<Receiver>>>;
  size: number;
  ready: Promise<void>;
  markReady: () => void;
}

/**
 * The per-instance ordered, gap-filling layer between the bus (in-process or Redis) and this instance's stream
 * subscribers, per account (docs/events.md). The bus alone can lose an event (a publish that fails after the
 * commit) or reorder two (instances A and B commit 103 then 104 of one account, B's publish reaches Redis first),
 * and a subscriber that has sent 104 would never send 103. Event ids commit in order within an account, and each
 * event carries its position `seq` in the account's log (1, 2, 3, ... without holes; EventLog). So, per account with
 * local subscribers:
 *
 * - a watermark: the position (and id) of the last event delivered; it starts at the account's position when the
 *   first local subscriber arrives ({@link whenReady}, one read for all accounts starting in the same tick);
 * - an arrival at or below the watermark is dropped (already delivered); watermark + 1 is delivered at once with no
 *   log read (the common case); a higher one first triggers one read of that account's log after the watermark
 *   (every lower position has committed, since the arrival has), and those are delivered in order before it;
 * - a tail check every `tailCheckMs` reads the positions of all tracked accounts in ONE query and reads the log
 *   of any account behind, so the last events of a lost publish arrive even when no later event follows them.
 *
 * Reads are serialised per account: while one runs, arrivals wait in that account's pending map and are merged in
 * order afterwards, so delivery is strictly increasing per account and each id is delivered once per instance.
 * Events of accounts without local subscribers cost nothing. Subscribers are indexed by account and channel, and
 * the fan-out runs outside the publisher's call (setImmediate, in turns bounded in time), so a publish does no
 * per-connection work for connections that do not want the event and never waits for subscribers. Subscribers
 * without a scope (tests) see every account's events, each account in order.
 *
 * Gap notices of the underlying bus (Redis connection lost or regained, failed publish) pass through unchanged.
 */
export class OrderedEventBus implements EventBus {
  readonly #accounts = new Map<string, AccountState>();
  /** Subscribers of every account (no scope). */
  readonly #everything = new Set<Listener>();
  /** Events delivered in order, with their subscribers, waiting for the fan-out turn. */
  readonly #outbox: { event: StoredEvent; listeners: Receiver[]; next: number }[] = [];
  #outboxHead = 0;
  #fanoutScheduled = false;
  /** Accounts whose start position is to be read (batched per tick). */
  #starting = new Set<AccountState>();
  #timer: NodeJS.Timeout | undefined;
  #tailRunning = false;
  #closed = false;
  /** Running reads, awaited by close() so no read outlives the database. */
  readonly #running = new Set<Promise<void>>();
  readonly #unsubscribe: () => void;
  /** Attached subscribers, told of the raw bus's gaps by one listener of this bus (no closure per subscriber). */
  readonly #gapSubscribers = new Set<BusSubscriber>();
  readonly #offGap: () => void;
  #gapReads = 0;
  #tailReads = 0;
  #filled = 0;

  constructor(
    private readonly inner: EventBus,
    private readonly db: Db,
    private readonly log: Logger,
    private readonly options: OrderedEventBusOptions,
  ) {
    this.#unsubscribe = inner.subscribe((event) => this.#arrive(event));
    this.#offGap = inner.onGap(() => {
      for (const subscriber of this.#gapSubscribers) subscriber.gap();
    });
  }

  /** Starts the tail check. */
  async start(): Promise<void> {
    this.#timer = setInterval(() => this.#tailCheck(), this.options.tailCheckMs);
    this.#timer.unref();
  }

  /**
   * Counters since start: log reads for gaps (0 while the bus loses and reorders nothing), tail checks that found
   * an account behind, events delivered from the log rather than the bus, and accounts tracked now.
   */
  get stats(): { accounts: number; gapReads: number; tailReads: number; filledEvents: number } {
    return {
      accounts: this.#accounts.size,
      gapReads: this.#gapReads,
      tailReads: this.#tailReads,
      filledEvents: this.#filled,
    };
  }

  /** Publishes on the underlying bus (minus the test-only dropped ones). Never throws. */
  publish(events: StoredEvent[]): Promise<void> | void {
    const drop = this.options.dropPublish;
    return this.inner.publish(drop ? events.filter((e) => !drop(e)) : events);
  }

  /**
   * Calls `listener` with every committed event of `scope` (every account when omitted) once, in strictly
   * increasing id order per account; `onGap` as the bus's. A scoped subscriber should await {@link whenReady}.
   */
  subscribe(listener: Listener, onGap?: () => void, scope?: BusScope): () => void {
    const offGap = onGap ? this.inner.onGap(onGap) : undefined;
    if (!scope) {
      this.#everything.add(listener);
      return () => {
        this.#everything.delete(listener);
        offGap?.();
      };
    }
    const state = this.#add(listener, scope);
    let done = false;
    return () => {
      offGap?.();
      if (done) return;
      done = true;
      this.#remove(state, listener, scope);
    };
  }

  /**
   * {@link subscribe} for a subscriber object (an open stream): the account's sets and this bus's gap set hold it,
   * no closure per subscriber. A subscriber attached while the raw bus is interrupted is told at once (microtask),
   * as the raw bus's `onGap` does.
   */
  attach(subscriber: BusSubscriber, scope: BusScope): void {
    this.#add(subscriber, scope);
    this.#gapSubscribers.add(subscriber);
    if (this.inner.interrupted()) queueMicrotask(() => subscriber.gap());
  }

  /** Removes a subscriber attached with `scope` (idempotent). */
  detach(subscriber: BusSubscriber, scope: BusScope): void {
    if (!this.#gapSubscribers.delete(subscriber)) return;
    const state = this.#accounts.get(scope.accountId);
    if (state) this.#remove(state, subscriber, scope);
  }

  /** The raw bus's: whether its live delivery is interrupted right now. */
  interrupted(): boolean {
    return this.inner.interrupted();
  }

  /** Adds `receiver` to the account's sets of `scope` (tracking the account when new). @returns the account state. */
  #add(receiver: Receiver, scope: BusScope): AccountState {
    const state = this.#track(scope.accountId);
    const group = scope.group ?? NO_GROUP;
    for (const key of scope.channels ?? ALL_CHANNELS) {
      let groups = state.listeners.get(key);
      if (!groups) {
        groups = new Map();
        state.listeners.set(key, groups);
      }
      let set = groups.get(group);
      if (!set) {
        set = new Set();
        groups.set(group, set);
      }
      set.add(receiver);
    }
    state.size++;
    return state;
  }

  /** Removes `receiver` from the account's sets of `scope`; forgets the account after its last subscriber. */
  #remove(state: AccountState, receiver: Receiver, scope: BusScope): void {
    const group = scope.group ?? NO_GROUP;
    for (const key of scope.channels ?? ALL_CHANNELS) {
      const groups = state.listeners.get(key);
      const set = groups?.get(group);
      set?.delete(receiver);
      if (set?.size === 0) groups!.delete(group);
      if (groups?.size === 0) state.listeners.delete(key);
    }
    if (--state.size === 0 && this.#everything.size === 0 && this.#accounts.get(state.accountId) === state) {
      this.#accounts.delete(state.accountId);
      this.#starting.delete(state);
    }
  }

  /** Resolves once the account's start position is known (see the class comment). */
  whenReady(accountId: string): Promise<void> {
    return this.#accounts.get(accountId)?.ready ?? Promise.resolve();
  }

  onGap(listener: () => void): () => void {
    return this.inner.onGap(listener);
  }

  /** The raw bus's health (this layer adds no connection of its own). */
  health(): BusHealth {
    return this.inner.health();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#unsubscribe();
    this.#offGap();
    this.#gapSubscribers.clear();
    this.#accounts.clear();
    this.#everything.clear();
    this.#outbox.length = 0;
    await Promise.allSettled([...this.#running]);
    await this.inner.close();
  }

  /**
   * The state of `accountId`, created when missing: from `start` when given (an arrival for subscribers of every
   * account, which start at it), else from a read of the account's position (batched per tick).
   */
  #track(accountId: string, start?: { seq: bigint; id: bigint }): AccountState {
    const existing = this.#accounts.get(accountId);
    if (existing) return existing;
    let markReady = () => {};
    const ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    const state: AccountState = {
      accountId,
      seq: undefined,
      id: 0n,
      pending: new Map(),
      busy: true,
      listeners: new Map(),
      size: 0,
      ready,
      markReady,
    };
    this.#accounts.set(accountId, state);
    if (start) {
      state.seq = start.seq;
      state.id = start.id;
      state.busy = false;
      markReady();
      return state;
    }
    this.#starting.add(state);
    if (this.#starting.size === 1) setImmediate(() => this.#run(this.#readStarts()));
    return state;
  }

  #run(work: Promise<void>): void {
    this.#running.add(work);
    void work.finally(() => this.#running.delete(work));
  }

  /** Reads the start positions of every account that started tracking since the last read, in one query. */
  async #readStarts(): Promise<void> {
    const states = [...this.#starting];
    this.#starting.clear();
    if (states.length === 0 || this.#closed) return;
    try {
      const query = Prisma.sql`
        SELECT s.account_id, s.last_seq,
               (SELECT e.id FROM events e WHERE e.account_id = s.account_id ORDER BY e.id DESC LIMIT 1) AS last_id
          FROM event_account_seqs s
         WHERE s.account_id = ANY(${states.map((s) => s.accountId)}::text[])`;
      const statement = this.options.statement;
      const rows = statement
        ? await statement<StartRow>({ text: query.text, values: query.values })
        : await this.db.$queryRaw<StartRow[]>(query);
      const found = new Map(rows.map((r) => [r.account_id, r]));
      for (const state of states) {
        const row = found.get(state.accountId);
        state.seq = row ? BigInt(row.last_seq) : 0n;
        state.id = row?.last_id !== null && row?.last_id !== undefined ? BigInt(row.last_id) : 0n;
        for (const seq of [...state.pending.keys()]) if (seq <= state.seq) state.pending.delete(seq);
        state.busy = false;
        state.markReady();
        if (state.pending.size > 0) this.#work(state, undefined);
      }
    } catch (err) {
      if (this.#closed) return;
      // Try again shortly: subscribers wait in whenReady meanwhile.
      this.log.warn({ err }, 'reading event positions for live delivery failed; retrying');
      for (const state of states) if (this.#accounts.get(state.accountId) === state) this.#starting.add(state);
      setTimeout(() => this.#run(this.#readStarts()), 200).unref();
    }
  }

  #arrive(event: StoredEvent): void {
    if (this.#closed) return;
    let state = this.#accounts.get(event.accountId);
    if (!state) {
      if (this.#everything.size === 0) return; // nobody here wants it
      state = this.#track(event.accountId, { seq: BigInt(event.seq) - 1n, id: 0n });
    }
    const seq = BigInt(event.seq);
    if (state.seq !== undefined && seq <= state.seq) return;
    if (!state.busy && seq === state.seq! + 1n && state.pending.size === 0) {
      this.#deliver(state, event);
      return;
    }
    state.pending.set(seq, event);
    if (!state.busy) this.#work(state, undefined);
  }

  /** Advances the watermark and queues the event for its subscribers' fan-out turn. */
  #deliver(state: AccountState, event: StoredEvent): void {
    state.seq = BigInt(event.seq);
    state.id = BigInt(event.id);
    const listeners: Receiver[] = [];
    const all = state.listeners.get('*');
    if (all) for (const set of all.values()) for (const l of set) listeners.push(l);
    const byChannel = state.listeners.get(event.channel);
    if (byChannel) for (const set of byChannel.values()) for (const l of set) listeners.push(l);
    for (const l of this.#everything) listeners.push(l);
    if (listeners.length === 0) return;
    this.#outbox.push({ event, listeners, next: 0 });
    if (!this.#fanoutScheduled) {
      this.#fanoutScheduled = true;
      setImmediate(() => this.#fanOut());
    }
  }

  /**
   * Calls subscribers in delivery order, for about {@link FANOUT_TURN_MS} of the loop's CPU per turn (at most
   * {@link FANOUT_TURN_WALL_MS} of wall clock, at least {@link CLOCK_EVERY} calls, so every turn makes progress), then
   * yields and goes on where it stopped.
   */
  #fanOut(): void {
    this.#fanoutScheduled = false;
    if (this.#closed) return;
    const cpuDeadline = threadCpuUs() + FANOUT_TURN_MS * 1000;
    const wallDeadline = performance.now() + FANOUT_TURN_WALL_MS;
    let budget = CLOCK_EVERY;
    while (this.#outboxHead < this.#outbox.length) {
      const item = this.#outbox[this.#outboxHead]!;
      const { event, listeners } = item;
      // The turn continues where the last one stopped (an index, not a copy of the rest of the list).
      const end = Math.min(listeners.length, item.next + budget);
      for (let i = item.next; i < end; i++) {
        try {
          const receiver = listeners[i]!;
          if (typeof receiver === 'function') receiver(event);
          else receiver.deliver(event);
        } catch (err) {
          this.log.error({ err, eventId: event.id }, 'event subscriber failed');
        }
      }
      budget -= end - item.next;
      item.next = end;
      if (end === listeners.length) this.#outboxHead++;
      if (budget === 0) {
        if (threadCpuUs() >= cpuDeadline || performance.now() >= wallDeadline || this.#closed) break;
        budget = CLOCK_EVERY;
      }
    }
    if (this.#outboxHead === this.#outbox.length) {
      this.#outbox.length = 0;
      this.#outboxHead = 0;
    } else if (!this.#fanoutScheduled && !this.#closed) {
      this.#fanoutScheduled = true;
      setImmediate(() => this.#fanOut());
    }
  }

  /** Delivers pending events of the account with seq ≤ `upTo`, in order. */
  #deliverPending(state: AccountState, upTo: bigint): void {
    const due = [...state.pending.keys()].filter((seq) => seq <= upTo).sort((a, b) => (a < b ? -1 : 1));
    for (const seq of due) {
      const event = state.pending.get(seq)!;
      state.pending.delete(seq);
      if (seq > state.seq!) this.#deliver(state, event);
    }
  }

  /** Starts the serialised fill of one account (callers check `busy` first). */
  #work(state: AccountState, tailTo: bigint | undefined): void {
    state.busy = true;
    this.#run(this.#fill(state, tailTo));
  }

  /** A tail read up to `tailTo`, then gap reads until nothing waits. Errors wait for the next arrival or tail check. */
  async #fill(state: AccountState, tailTo: bigint | undefined): Promise<void> {
    try {
      if (tailTo !== undefined && tailTo > state.seq!) {
        this.#tailReads++;
        await this.#readLog(state, tailTo + 1n);
      }
      for (;;) {
        while (state.pending.has(state.seq! + 1n)) this.#deliverPending(state, state.seq! + 1n);
        if (state.pending.size === 0 || this.#closed) break;
        let target = state.seq!;
        for (const seq of state.pending.keys()) if (seq > target) target = seq;
        this.#gapReads++;
        await this.#readLog(state, target);
      }
    } catch (err) {
      if (!this.#closed) this.log.warn({ err, accountId: state.accountId }, 'event log read for live delivery failed');
    } finally {
      // Cleared in the same tick as the last check of pending, so no arrival can be left waiting in it.
      state.busy = false;
    }
  }

  /**
   * Reads the account's committed events after the watermark with seq below `before`, page by page in id order
   * (which is seq order within an account), and delivers them merged with the pending ones. Every position below
   * `before` has committed (a later one of the same account has), so the read is complete; `before` itself, when
   * pending, follows.
   */
  async #readLog(state: AccountState, before: bigint): Promise<void> {
    for (;;) {
      const rows = await this.db.event.findMany({
        where: { accountId: state.accountId, id: { gt: state.id }, seq: { gt: state.seq!, lt: before } },
        orderBy: { id: 'asc' },
        take: FILL_PAGE,
      });
      if (this.#closed || this.#accounts.get(state.accountId) !== state) return;
      for (const row of rows) {
        if (!state.pending.has(row.seq)) {
          state.pending.set(row.seq, storedEventFromRow(row));
          this.#filled++;
        }
      }
      const last = rows.at(-1);
      if (rows.length < FILL_PAGE) {
        this.#deliverPending(state, before);
        return;
      }
      this.#deliverPending(state, last!.seq);
      // biome-ignore lint/complexity/useMathMinMax: bigint ids; Math.max throws on a BigInt
      state.id = last!.id > state.id ? last!.id : state.id;
    }
  }

  /** The tail check: one query for the positions of every tracked account; reads the log of those behind. */
  #tailCheck(): void {
    if (this.#tailRunning || this.#closed) return;
    const states = [...this.#accounts.values()].filter((s) => s.seq !== undefined);
    if (states.length === 0) return;
    this.#tailRunning = true;
    const work = (async () => {
      try {
        const rows = await this.db.$queryRaw<{ account_id: string; last_seq: bigint }[]>`
          SELECT account_id, last_seq FROM event_account_seqs
           WHERE account_id = ANY(${states.map((s) => s.accountId)}::text[])`;
        for (const row of rows) {
          const state = this.#accounts.get(row.account_id);
          if (!state || state.busy || state.seq === undefined || row.last_seq <= state.seq) continue;
          this.#work(state, row.last_seq);
        }
      } catch (err) {
        if (!this.#closed) this.log.warn({ err }, 'event tail check failed; retrying');
      } finally {
        this.#tailRunning = false;
      }
    })();
    this.#run(work);
  }
}
