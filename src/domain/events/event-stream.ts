import type { DomainContext } from '../kernel/context.js';
import { MAX_BIGINT } from '../validation.js';
import { type OpenStream, type StoredEvent, type StreamEndReason, toEnvelope } from './event.js';
import { type ReplayFrameRow, type ReplayRow, replayFrameRows, replayRows } from './event.store.js';
import type { BusSubscriber, EventBus } from './event-bus.port.js';
import type { Channel } from './event-catalog.js';

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
 * `resumeId` is the SSE `id:` of the notice (spec 6.2: every message has `event:`, `id:`, `data:`): the id just
 * before `firstAvailableId` (the log's newest id when nothing is replayed), so a client reconnecting with it as
 * `Last-Event-ID` receives exactly the retained events (issue 22). It is not part of the notice's data.
 */
export interface TruncationNotice {
  kind: 'truncated';
  reason: 'pruned' | 'limit' | 'unknown_id';
  lastEventId: string;
  firstAvailableId: string | null;
  replayLimit: number;
  resumeId: string;
}

/** The `id:` of a truncation notice: the id before the first replayed one, else the log's newest id, else 0. */
function resumeIdOf(firstAvailableId: bigint | null | undefined, newest: bigint | null | undefined): string {
  if (firstAvailableId !== null && firstAvailableId !== undefined) return (BigInt(firstAvailableId) - 1n).toString();
  return BigInt(newest ?? 0n).toString();
}

/** What a stream yields: events (replayed, then live) and at most one truncation notice, first. */
export type StreamItem = StoredEvent | TruncationNotice;

/** Whether `item` is the truncation notice rather than an event. */
export function isTruncation(item: StreamItem): item is TruncationNotice {
  return (item as TruncationNotice).kind === 'truncated';
}

export type { StreamEndReason } from './event.js';

/** Which events a stream carries: one account, and the given channels (every channel when undefined). */
export interface StreamFilter {
  accountId: string;
  channels?: readonly Channel[];
  /** The bus's fan-out group of the stream (`BusScope.group`: its HTTP/2 connection); none when undefined. */
  group?: object;
}

/** Whether `event` passes `filter`. */
export function matches(filter: StreamFilter, event: StoredEvent): boolean {
  return event.accountId === filter.accountId && (!filter.channels || filter.channels.includes(event.channel));
}

const NO_LISTENERS: readonly never[] = Object.freeze([]);

/**
 * Push mode's fast path ({@link EventSubscription.setLiveSink}): a consumer that can take a live event at once,
 * e.g. the SSE writer writing the event's shared, ready-made frame to its response.
 */
export interface LiveSink {
  /**
   * Takes `event` now (written: true) or declines (false: the consumer cannot take it now, e.g. its response is not
   * drained); a declined event is queued and read with {@link EventSubscription.read} as without a sink. Must not
   * call back into the subscription.
   */
  offer(event: StoredEvent): boolean;
}

/**
 * The id of `event` as a bigint, parsed once per event: the fan-out hands the same event object to every stream in
 * turn, so one remembered event saves a `BigInt` per stream and delivery (issue 24).
 */
let idOfEvent: StoredEvent | undefined;
let idOfId = 0n;
function idOf(event: StoredEvent): bigint {
  if (idOfEvent !== event) {
    idOfId = BigInt(event.id);
    idOfEvent = event;
  }
  return idOfId;
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
export class EventSubscription implements AsyncIterableIterator<StreamItem>, OpenStream, BusSubscriber {
  readonly #queue: StoredEvent[] = [];
  #replay: StreamItem[] | undefined;
  /** SSE mode: the replay as ready-made SSE frames (notice first), handed to the writer once. */
  #preamble = '';
  /** The highest id yielded, or the client's cursor before that: live events at or below it are skipped. */
  #lastSent = -1n;
  #waiter: ((result: IteratorResult<StreamItem>) => void) | undefined;
  /** Push mode (SSE writer): called when an item may be readable or the stream ended, instead of a waiter. */
  #onReadable: (() => void) | undefined;
  /** Push mode's fast path: takes a live event straight from the fan-out when nothing waits before it. */
  #sink: LiveSink | undefined;
  #endReason: StreamEndReason | undefined;
  #draining = false;
  /** The app's set of open streams ({@link trackStream}): it leaves it when it ends (no end listener per stream). */
  #registry: Set<OpenStream> | undefined;
  /** Exactly as long as needed (usually none: `trackStream` uses {@link trackIn}), copied on change. */
  #endListeners: readonly ((reason: StreamEndReason) => void)[] = NO_LISTENERS;

  /** Attached to `bus` as itself (no closures per stream: issue 24, memory per open stream) until it ends. */
  constructor(
    private readonly bus: EventBus,
    readonly filter: StreamFilter,
    private readonly queueLimit: number,
  ) {
    bus.attach(this, filter);
  }

  /** The bus's call with a live event of the account ({@link BusSubscriber}): queued when it matches the filter. */
  deliver(event: StoredEvent): void {
    this.#push(event);
  }

  /** The bus's gap notice ({@link BusSubscriber}): what is queued is delivered, then the stream ends `interrupted`. */
  gap(): void {
    this.#interrupt();
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
    // concat allocates exactly the new length; a spread into a literal grows the first push to 17 slots.
    this.#endListeners = this.#endListeners.concat([listener]);
    return () => {
      const i = this.#endListeners.indexOf(listener);
      if (i >= 0) this.#endListeners = [...this.#endListeners.slice(0, i), ...this.#endListeners.slice(i + 1)];
    };
  }

  /**
   * Adds this stream to `registry` (the app's open streams) and removes it when the stream ends, before the end
   * listeners run; nothing when it has already ended.
   */
  trackIn(registry: Set<OpenStream>): void {
    if (this.#endReason) return;
    registry.add(this);
    this.#registry = registry;
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

  /**
   * SSE mode: hands over the replay as one block of SSE frames (spec 6.2 wire format, notice first), which the
   * writer takes with {@link takePreamble} before iterating; live events above `resumeAfter` (the last replayed id,
   * else the client's cursor) follow.
   */
  setReplayFrames(frames: string, resumeAfter?: bigint): void {
    this.#preamble = frames;
    this.setReplay([], resumeAfter);
  }

  /** The replay frames set by {@link setReplayFrames} (once; '' after). */
  takePreamble(): string {
    const text = this.#preamble;
    this.#preamble = '';
    return text;
  }

  /**
   * Push mode, for a writer that drains without promises (the SSE writer): `listener` is called whenever items may
   * be readable with {@link read} or the stream has ended. Replaces async iteration; use one or the other.
   */
  setReadableListener(listener: () => void): void {
    this.#onReadable = listener;
  }

  /**
   * Push mode's fast path: a live event that arrives while nothing waits before it (the replay handed over, the
   * queue empty) is offered to `sink` in the fan-out's own call, with no queue entry, no readable call and no
   * iterator result (issue 24: CPU per delivery at 50,000 streams); the id check (nothing at or below the last sent
   * id) is the same as {@link read}'s. An event the sink declines is queued as without one, and so is every later
   * event until the queue is read empty again, so order is kept.
   */
  setLiveSink(sink: LiveSink): void {
    this.#sink = sink;
  }

  /**
   * The next item if one is ready (push mode): an item, `done` once the stream has ended, or undefined when
   * nothing waits now.
   */
  read(): IteratorResult<StreamItem> | undefined {
    return this.#take();
  }

  /** Ends the subscription with `reason` (idempotent). */
  end(reason: StreamEndReason): void {
    if (this.#endReason) return;
    this.#endReason = reason;
    this.bus.detach(this, this.filter);
    this.#queue.length = 0;
    this.#replay = [];
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.({ value: undefined, done: true });
    this.#registry?.delete(this);
    this.#registry = undefined;
    const listeners = this.#endListeners;
    this.#endListeners = NO_LISTENERS;
    for (const listener of listeners) listener(reason);
    this.#onReadable?.();
  }

  #push(event: StoredEvent): void {
    if (this.#endReason || this.#draining || !matches(this.filter, event)) return;
    const sink = this.#sink;
    if (sink !== undefined && this.#queue.length === 0 && this.#replay?.length === 0) {
      const id = idOf(event);
      if (id <= this.#lastSent) return;
      if (sink.offer(event)) {
        this.#lastSent = id;
        return;
      }
    }
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
      const id = idOf(event);
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
    if (this.#onReadable) {
      this.#onReadable();
      return;
    }
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
  const id = BigInt(trimmed);
  // Past PostgreSQL's bigint no event id exists: an unknown cursor, not a query that fails with 22003.
  return id <= MAX_BIGINT ? id : undefined;
}

/** A cursor that is not an id of this log compares above every id, so it reads as "unknown" (spec 8). */
const NOT_AN_ID = 2n ** 63n - 1n;

/** What a replay read returns: the events oldest first, and how it is truncated. */
interface ReplayRead {
  rows: ReplayRow[];
  notice: TruncationNotice | undefined;
  unknown: boolean;
}

/**
 * The one range read of a replay: the newest {@link REPLAY_LIMIT} + 1 matching events after the cursor (an index
 * range scan on (account_id, id) or (account_id, channel, id), newest first), plus one meta row with the log's
 * newest id and the account's retention mark, in one statement (one snapshot). The payload comes back as the
 * stored JSON text.
 */
async function readReplayRows(ctx: DomainContext, filter: StreamFilter, lastEventId: string): Promise<ReplayRead> {
  const cursor = parseEventId(lastEventId) ?? NOT_AN_ID;
  const all = await replayRows(ctx.db, filter.accountId, filter.channels, cursor, REPLAY_LIMIT);
  let newest: bigint | null = null;
  let mark: bigint | null = null;
  const rows: ReplayRow[] = [];
  for (const row of all) {
    if (Number(row.k) === 0) {
      newest = row.id;
      mark = row.mark;
    } else rows.push(row);
  }
  const over = rows.length > REPLAY_LIMIT;
  if (over) rows.length = REPLAY_LIMIT;
  rows.reverse();
  const unknown = cursor === NOT_AN_ID || (newest !== null ? cursor > newest : cursor > 0n);
  const pruned = !unknown && mark !== null && cursor < mark;
  const reason = unknown ? 'unknown_id' : pruned ? 'pruned' : over ? 'limit' : undefined;
  const notice: TruncationNotice | undefined = reason
    ? {
        kind: 'truncated',
        reason,
        lastEventId,
        firstAvailableId: rows[0]?.id?.toString() ?? null,
        replayLimit: REPLAY_LIMIT,
        resumeId: resumeIdOf(rows[0]?.id, newest),
      }
    : undefined;
  return { rows, notice, unknown };
}

/**
 * Reads the replay for a stream resuming after `lastEventId` (spec 8): the matching events after it, oldest first,
 * at most {@link REPLAY_LIMIT} (the newest ones when more follow), preceded by a {@link TruncationNotice} when the
 * replay cannot be complete. One statement reads the events, the retention mark and the newest id (one snapshot,
 * so a concurrent prune is never missed: the mark commits with the delete).
 */
export async function readReplay(ctx: DomainContext, filter: StreamFilter, lastEventId: string): Promise<StreamItem[]> {
  const { rows, notice } = await readReplayRows(ctx, filter, lastEventId);
  const events: StreamItem[] = rows.map((r) => ({
    id: r.id!.toString(),
    seq: r.seq!.toString(),
    accountId: filter.accountId,
    channel: r.channel as Channel,
    eventType: r.event_type!,
    payload: JSON.parse(r.payload!) as Record<string, unknown>,
    timestamp: r.created_at!.toISOString(),
  }));
  return notice ? [notice, ...events] : events;
}

/**
 * The SSE frame of a truncation notice (spec 6.2/8): `event: stream.truncated`, `id:` its
 * {@link TruncationNotice.resumeId}, `data:` the notice without `kind` and `resumeId`.
 */
export function truncationFrame(notice: TruncationNotice): string {
  const { kind: _kind, resumeId, ...data } = notice;
  return `event: stream.truncated\nid: ${resumeId}\ndata: ${JSON.stringify(data)}\n\n`;
}

const frameCache = new WeakMap<StoredEvent, string>();

/**
 * The SSE frame of an event (spec 6.2: `event:`, `id:`, `data:` with the spec 2.11 envelope), built once per event
 * object and shared by every stream that sends it.
 */
export function sseFrame(event: StoredEvent): string {
  let frame = frameCache.get(event);
  if (frame === undefined) {
    frame = `event: ${event.eventType}\nid: ${event.id}\ndata: ${JSON.stringify(toEnvelope(event))}\n\n`;
    frameCache.set(event, frame);
  }
  return frame;
}

let bytesOfEvent: StoredEvent | undefined;
let bytesOfFrame: Buffer = Buffer.alloc(0);

/**
 * {@link sseFrame} as UTF-8 bytes, encoded once per event (the last event is remembered): the fan-out hands the same
 * event to every stream in turn, and each writes this one Buffer, so a delivery neither encodes nor copies the frame
 * (issue 24). The bytes are shared: never modify them.
 */
export function sseFrameBytes(event: StoredEvent): Buffer {
  if (bytesOfEvent !== event) {
    bytesOfFrame = Buffer.from(sseFrame(event), 'utf8');
    bytesOfEvent = event;
  }
  return bytesOfFrame;
}

/**
 * The replay as SSE frames, for the SSE writer: the same events and notice as {@link readReplay}, read in ONE
 * statement ({@link replayFrameRows}: the payloads as their stored JSON text, the timestamps formatted by
 * PostgreSQL), so nothing is parsed and re-serialised: each frame is one string concatenation (spec 6.2 wire
 * format, the 2.11 envelope). The bytes equal those of live delivery ({@link sseFrame}) for every event written as
 * compact JSON (all since the json column; rows converted from jsonb keep its spacing). Channel and event type are
 * catalog names (validated on write), so they need no JSON escaping; the account id is escaped once.
 * @returns the frames (notice first), and the id to resume live delivery after (the last replayed id, else the
 *   client's cursor; undefined when the cursor is unknown).
 */
export async function readReplayFrames(
  ctx: Pick<DomainContext, 'database'>,
  filter: StreamFilter,
  lastEventId: string,
): Promise<{ frames: string; resumeAfter: bigint | undefined }> {
  const cursor = parseEventId(lastEventId) ?? NOT_AN_ID;
  const rows = await replayFrameRows(ctx.database, filter.accountId, filter.channels, cursor, REPLAY_LIMIT);
  let newest: bigint | null = null;
  let mark: bigint | null = null;
  const events: ReplayFrameRow[] = []; // newest first
  for (const row of rows) {
    if (Number(row.k) !== 0) events.push(row);
    else {
      newest = row.id === null ? null : BigInt(row.id);
      mark = row.mark === null ? null : BigInt(row.mark);
    }
  }
  const over = events.length > REPLAY_LIMIT;
  const customer = JSON.stringify(filter.accountId);
  let frames = '';
  for (let i = Math.min(events.length, REPLAY_LIMIT) - 1; i >= 0; i--) {
    const r = events[i]!;
    frames += `event: ${r.event_type}\nid: ${r.id}\ndata: {"channel":"${r.channel}","eventType":"${r.event_type}","payload":${r.payload},"customerId":${customer},"timestamp":"${r.ts}"}\n\n`;
  }
  const oldest = events[Math.min(events.length, REPLAY_LIMIT) - 1];
  const firstId = oldest ? BigInt(oldest.id!) : null;
  const lastId = events[0] ? BigInt(events[0].id!) : null;
  const last = lastId ?? undefined;
  const unknown = cursor === NOT_AN_ID || (newest !== null ? cursor > newest : cursor > 0n);
  const pruned = !unknown && mark !== null && cursor < mark;
  const reason = unknown ? 'unknown_id' : pruned ? 'pruned' : over ? 'limit' : undefined;
  const notice = reason
    ? truncationFrame({
        kind: 'truncated',
        reason,
        lastEventId,
        firstAvailableId: firstId?.toString() ?? null,
        replayLimit: REPLAY_LIMIT,
        resumeId: resumeIdOf(firstId ?? undefined, newest),
      })
    : '';
  return { frames: notice + frames, resumeAfter: last ?? (unknown ? undefined : cursor) };
}

/** Registers a subscription in `ctx.openStreams` so {@link endAllStreams} can end it at shutdown; unregisters it when it ends. */
export function trackStream(ctx: DomainContext, sub: EventSubscription): void {
  sub.trackIn(ctx.openStreams);
}

/** Ends every open stream of the app with `shutdown` (graceful shutdown; SSE responses end cleanly). */
export function endAllStreams(ctx: DomainContext): number {
  const subs = [...ctx.openStreams];
  for (const sub of subs) sub.end('shutdown');
  return subs.length;
}

/** How many streams the app has open (for logs and tests of shutdown). */
export function openStreamCount(ctx: DomainContext): number {
  return ctx.openStreams.size;
}
