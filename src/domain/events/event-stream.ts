import type { AppContext } from '../../app-context.js';
import type { EventBus } from './event-bus.port.js';
import type { Channel } from './event-catalog.js';
import { type StoredEvent, storedEventFromRow } from './event-log.js';

/** Spec 8: replay sends up to the last 1000 matching events after the given `Last-Event-ID`. */
export const REPLAY_LIMIT = 1000;

/**
 * The in-band notice sent before a replay that cannot be complete (SSE `event: stream.truncated`, GraphQL
 * `StreamTruncated`):
 * - `pruned`: retention removed events after `lastEventId` (the cursor is older than what the log keeps);
 * - `limit`: more than {@link REPLAY_LIMIT} matching events followed `lastEventId`; only the newest are replayed;
 * - `unknown_id`: `lastEventId` is not an id this service issued (malformed or newer than every event).
 * `firstAvailableId` is the id of the first replayed event (null when nothing is replayed); events between
 * `lastEventId` and it may be missing, so a client re-syncs from its own source of truth or the history list.
 */
export interface TruncationNotice {
  kind: 'truncated';
  reason: 'pruned' | 'limit' | 'unknown_id';
  lastEventId: string;
  firstAvailableId: string | null;
  replayLimit: number;
}

/** What a stream yields: events (replayed, then live) and at most one truncation notice, first. */
export type StreamItem = StoredEvent | TruncationNotice;

/** Whether `item` is the truncation notice rather than an event. */
export function isTruncation(item: StreamItem): item is TruncationNotice {
  return (item as TruncationNotice).kind === 'truncated';
}

/** Why a stream ended: the consumer left, it fell too far behind, live delivery had a gap, or shutdown. */
export type StreamEndReason = 'closed' | 'overflow' | 'interrupted' | 'shutdown';

/** Which events a stream carries: one account, and the given channels (every channel when undefined). */
export interface StreamFilter {
  accountId: string;
  channels?: readonly Channel[];
}

/** Whether `event` passes `filter`. */
export function matches(filter: StreamFilter, event: StoredEvent): boolean {
  return event.accountId === filter.accountId && (!filter.channels || filter.channels.includes(event.channel));
}

/**
 * One live subscriber, as an async iterator of {@link StreamItem}s. It subscribes to the bus when constructed and
 * buffers matching live events while the replay is read from the log, then yields the replay and then the buffer
 * and later live events, skipping every id not above the last one yielded (or the client's cursor), so ids only
 * increase (ARCHITECTURE.md: subscribe first, then replay, then de-duplicate by id; no event lost or doubled at the
 * seam). A live event at or below the cursor can come when this instance's ordered bus fills a gap the client
 * already received through another instance; one below the last replayed id is either in the replay or older than
 * the replay limit (and then announced by the truncation notice).
 *
 * Live events wait in a per-subscriber queue until the consumer pulls them; when more than `queueLimit` wait,
 * the subscription ends with `overflow` at once (the client resumes with Last-Event-ID), so a slow consumer cannot
 * grow memory without bound. A bus gap ends it with `interrupted` after what is queued; `shutdown` ends it at once.
 */
export class EventSubscription implements AsyncIterableIterator<StreamItem> {
  readonly #queue: StoredEvent[] = [];
  #replay: StreamItem[] | undefined;
  /** The highest id yielded, or the client's cursor before that: live events at or below it are skipped. */
  #lastSent = -1n;
  #waiter: ((result: IteratorResult<StreamItem>) => void) | undefined;
  #endReason: StreamEndReason | undefined;
  #draining = false;
  readonly #unsubscribe: () => void;
  readonly #endListeners: ((reason: StreamEndReason) => void)[] = [];

  constructor(
    bus: EventBus,
    readonly filter: StreamFilter,
    private readonly queueLimit: number,
  ) {
    this.#unsubscribe = bus.subscribe(
      (event) => this.#push(event),
      () => this.#interrupt(),
    );
  }

  /** Why the stream ended, once it has. */
  get endReason(): StreamEndReason | undefined {
    return this.#endReason;
  }

  /** Calls `listener` once when the subscription ends (at once if it already has). @returns a remover. */
  onEnd(listener: (reason: StreamEndReason) => void): () => void {
    if (this.#endReason) {
      listener(this.#endReason);
      return () => {};
    }
    this.#endListeners.push(listener);
    return () => {
      const i = this.#endListeners.indexOf(listener);
      if (i >= 0) this.#endListeners.splice(i, 1);
    };
  }

  /**
   * Hands over the replay (notice first, then events in id order); live events flow after it. `resumeAfter` is the
   * client's cursor when it is an id of this log (live events at or below it were already received).
   */
  setReplay(items: StreamItem[], resumeAfter?: bigint): void {
    this.#replay = items;
    if (resumeAfter !== undefined) this.#lastSent = resumeAfter;
    this.#wake();
  }

  /** Ends the subscription with `reason` (idempotent). */
  end(reason: StreamEndReason): void {
    if (this.#endReason) return;
    this.#endReason = reason;
    this.#unsubscribe();
    this.#queue.length = 0;
    this.#replay = [];
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.({ value: undefined, done: true });
    for (const listener of this.#endListeners.splice(0)) listener(reason);
  }

  #push(event: StoredEvent): void {
    if (this.#endReason || this.#draining || !matches(this.filter, event)) return;
    this.#queue.push(event);
    if (this.#queue.length > this.queueLimit) {
      this.end('overflow');
      return;
    }
    this.#wake();
  }

  #interrupt(): void {
    if (this.#endReason) return;
    this.#draining = true; // deliver what is queued, then end: the client resumes by replay
    this.#wake();
  }

  #take(): IteratorResult<StreamItem> | undefined {
    if (this.#endReason) return { value: undefined, done: true };
    if (!this.#replay) return undefined; // replay not read yet: live events stay buffered
    const fromReplay = this.#replay.shift();
    if (fromReplay) {
      if (!isTruncation(fromReplay)) this.#lastSent = BigInt(fromReplay.id);
      return { value: fromReplay, done: false };
    }
    while (this.#queue.length > 0) {
      const event = this.#queue.shift()!;
      const id = BigInt(event.id);
      if (id <= this.#lastSent) continue;
      this.#lastSent = id;
      return { value: event, done: false };
    }
    if (this.#draining) {
      this.end('interrupted');
      return { value: undefined, done: true };
    }
    return undefined;
  }

  #wake(): void {
    const waiter = this.#waiter;
    if (!waiter) return;
    this.#waiter = undefined; // taken first: #take may end the subscription, which settles waiters itself
    const result = this.#take();
    if (result) waiter(result);
    else this.#waiter = waiter;
  }

  next(): Promise<IteratorResult<StreamItem>> {
    const result = this.#take();
    if (result) return Promise.resolve(result);
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  return(): Promise<IteratorResult<StreamItem>> {
    this.end('closed');
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** Parses a cursor (`Last-Event-ID`, `after`): a decimal event id, else undefined. */
export function parseEventId(value: string | undefined | null): bigint | undefined {
  if (value === undefined || value === null) return undefined;
  const trimmed = value.trim();
  if (!/^\d{1,19}$/.test(trimmed)) return undefined;
  return BigInt(trimmed);
}

function channelWhere(channels: readonly Channel[] | undefined) {
  return channels ? { channel: { in: [...channels] } } : {};
}

/**
 * Reads the replay for a stream resuming after `lastEventId` (spec 8): the matching events after it, oldest first,
 * at most {@link REPLAY_LIMIT} (the newest ones when more follow), preceded by a {@link TruncationNotice} when the
 * replay cannot be complete. The events are read before the retention mark so a concurrent prune is never missed
 * (the mark commits with the delete).
 */
export async function readReplay(ctx: AppContext, filter: StreamFilter, lastEventId: string): Promise<StreamItem[]> {
  const cursor = parseEventId(lastEventId);
  const newest = await ctx.db.event.findFirst({ orderBy: { id: 'desc' }, select: { id: true } });
  const unknown = cursor === undefined || (newest ? cursor > newest.id : cursor > 0n);
  const rows = await ctx.db.event.findMany({
    where: {
      accountId: filter.accountId,
      ...channelWhere(filter.channels),
      ...(unknown ? {} : { id: { gt: cursor } }),
    },
    orderBy: { id: 'desc' },
    take: REPLAY_LIMIT + 1,
  });
  const overLimit = rows.length > REPLAY_LIMIT;
  const events = rows.slice(0, REPLAY_LIMIT).reverse().map(storedEventFromRow);
  const mark = unknown ? null : await ctx.db.eventRetentionMark.findUnique({ where: { accountId: filter.accountId } });
  const pruned = !unknown && mark !== null && cursor! < mark.prunedThroughId;
  const reason = unknown ? 'unknown_id' : pruned ? 'pruned' : overLimit ? 'limit' : undefined;
  if (!reason) return events;
  const notice: TruncationNotice = {
    kind: 'truncated',
    reason,
    lastEventId,
    firstAvailableId: events[0]?.id ?? null,
    replayLimit: REPLAY_LIMIT,
  };
  return [notice, ...events];
}

const openStreams = new WeakMap<AppContext, Set<EventSubscription>>();

/** Registers a subscription so {@link endAllStreams} can end it at shutdown; unregisters it when it ends. */
export function trackStream(ctx: AppContext, sub: EventSubscription): void {
  let set = openStreams.get(ctx);
  if (!set) {
    set = new Set();
    openStreams.set(ctx, set);
  }
  const streams = set;
  streams.add(sub);
  sub.onEnd(() => streams.delete(sub));
}

/** Ends every open stream of the app with `shutdown` (graceful shutdown; SSE responses end cleanly). */
export function endAllStreams(ctx: AppContext): number {
  const set = openStreams.get(ctx);
  if (!set) return 0;
  const subs = [...set];
  for (const sub of subs) sub.end('shutdown');
  return subs.length;
}

/** How many streams the app has open (for logs and tests of shutdown). */
export function openStreamCount(ctx: AppContext): number {
  return openStreams.get(ctx)?.size ?? 0;
}
