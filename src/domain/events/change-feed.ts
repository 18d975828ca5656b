import { type Actor, requireScope } from '../accounts/account.service.js';
import { watchCredential } from '../accounts/stream-token.js';
import { DomainError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import { type ChangeNotice, isAttemptNotice } from './change-notices.port.js';
import type { StoredEvent, StreamEndReason } from './event.js';
import { parseChannels } from './event.service.js';
import type { Channel } from './event-catalog.js';
import { isTruncation, parseEventId, readReplay } from './event-stream.js';

/**
 * 503 STREAM_INTERRUPTED, thrown out of a change feed when live delivery may have missed notices (the Redis
 * connection dropped or came back, or the subscriber fell more than EVENT_STREAM_QUEUE_LIMIT notices behind): the
 * client resubscribes with its last `eventId` as `lastEventId` and gets what it missed from the log.
 */
export class FeedInterrupted extends DomainError {
  constructor(readonly reason: 'interrupted' | 'overflow') {
    super(
      'STREAM_INTERRUPTED',
      `The subscription ended (${reason}); resubscribe with lastEventId to resume without missing a change.`,
      503,
    );
  }
}

/** Ends every open change feed of this app (shutdown), as endAllStreams does for event streams. */
export function endAllChangeFeeds(ctx: DomainContext): void {
  for (const end of [...ctx.openFeeds]) end();
}

/**
 * Opens a feed of the account's events about one object: listens on the change-notice topic `topic` (see
 * change-notices.port.ts; RedisPubSub across instances, or in-process) first, then, when `lastEventId` is given,
 * reads the replay from the event log (up to 1000 events of `channels` after it, those `matches` accepts), and
 * yields the replay and then the live notices in id order, each event once (a notice at or below the last
 * yielded id is skipped). Requires `events:read`. When live delivery may have lost a notice (Redis connection
 * dropped, more than EVENT_STREAM_QUEUE_LIMIT notices waiting) the iterator throws {@link FeedInterrupted} so the
 * client resumes with `lastEventId` (the log has every event); shutdown ends it, and so does the actor's credential
 * when it stops holding (key revoked or deleted, stream token expired: checked every EVENT_STREAM_HEARTBEAT_MS, as
 * SSE streams are). Ending the iterator unsubscribes. `onEnd` is told once why the feed ended (see {@link FeedEnds}).
 * `lastEventId` arrives parsed by the door (`eventStreamInput`: at most 100 characters).
 * @throws ForbiddenError without events:read; Redis errors.
 */
export async function openChangeFeed(
  ctx: DomainContext,
  actor: Actor,
  input: { channels: Channel[]; topic: string; lastEventId?: string; matches: (e: StoredEvent) => boolean } & FeedEnds,
): Promise<AsyncGenerator<StoredEvent>> {
  requireScope(actor, 'events:read');
  const filter = { accountId: actor.accountId, channels: parseChannels(input.channels) };
  const ofAccount = (n: ChangeNotice): n is StoredEvent => !isAttemptNotice(n) && n.accountId === actor.accountId;
  return liveFeed(ctx, actor, input.topic, ofAccount, input.onEnd, async () => {
    let last = 0n;
    let replay: StoredEvent[] = [];
    if (input.lastEventId !== undefined) {
      const items = await readReplay(ctx, filter, input.lastEventId);
      const unknownCursor = items.some((item) => isTruncation(item) && item.reason === 'unknown_id');
      if (!unknownCursor) last = parseEventId(input.lastEventId) ?? 0n;
      replay = items.filter((item): item is StoredEvent => !isTruncation(item) && input.matches(item));
    }
    // The replay is in id order and is yielded before any live notice: after it, `last` is its last id.
    const lastReplayed = replay.at(-1);
    if (lastReplayed) last = BigInt(lastReplayed.id);
    const fresh = (event: StoredEvent) => {
      if (BigInt(event.id) <= last || !input.matches(event)) return false;
      last = BigInt(event.id);
      return true;
    };
    return { first: replay, keep: fresh };
  });
}

/**
 * Live notices on `topic` that `accept` keeps (no replay), for `actor`: for changes that are not events (webhook
 * delivery attempts). Resolves once listening. Ends as {@link openChangeFeed} does: `return()`, shutdown and the
 * actor's credential no longer holding end it quietly, a possible loss (Redis gap, more than
 * EVENT_STREAM_QUEUE_LIMIT waiting) throws {@link FeedInterrupted}; `onEnd` is told why once.
 */
export async function listenNotices<N extends ChangeNotice>(
  ctx: DomainContext,
  actor: Actor,
  topic: string,
  accept: (n: ChangeNotice) => n is N,
  onEnd?: FeedEnds['onEnd'],
): Promise<AsyncGenerator<N>> {
  return liveFeed(ctx, actor, topic, accept, onEnd, async () => ({ first: [], keep: () => true }));
}

/** What a feed's opener may ask to be told: why it ended, once (for `switchboard_streams_ended_total`). */
export interface FeedEnds {
  /**
   * Called once when the feed ends, after it unsubscribed: `closed` (the iterator was ended: the client left),
   * `revoked` (the credential stopped holding), `shutdown`, or `overflow`/`interrupted` (the
   * {@link FeedInterrupted} it threw). Not called when opening fails.
   */
  onEnd?: (reason: StreamEndReason) => void;
}

/**
 * The one live-notice iterator both feeds use: listens on `topic` first (queueing the notices `accept` keeps, at
 * most EVENT_STREAM_QUEUE_LIMIT), then calls `start` (the replay read; if it throws, the listener is dropped and
 * the error propagates), then yields `first` and the queued notices `keep` passes, in arrival order. `return()`,
 * shutdown ({@link endAllChangeFeeds}) and `actor`'s credential no longer holding end it quietly; a possible loss
 * throws {@link FeedInterrupted}. Ending it (even before its first `next()`) unsubscribes and tells `onEnd` once.
 */
async function liveFeed<N extends ChangeNotice>(
  ctx: DomainContext,
  actor: Actor,
  topic: string,
  accept: (n: ChangeNotice) => n is N,
  onEnd: FeedEnds['onEnd'],
  start: () => Promise<{ first: N[]; keep: (n: N) => boolean }>,
): Promise<AsyncGenerator<N>> {
  const limit = ctx.config.EVENT_STREAM_QUEUE_LIMIT;
  const queue: N[] = [];
  let wake: (() => void) | undefined;
  let ended: FeedInterrupted | QuietEnd | undefined;
  const end = (why: FeedInterrupted | QuietEnd) => {
    ended ??= why;
    wake?.();
  };
  const stop = await ctx.notices.listen(
    topic,
    (n) => {
      if (!accept(n)) return;
      if (queue.length >= limit) end(new FeedInterrupted('overflow'));
      else queue.push(n);
      wake?.();
    },
    () => end(new FeedInterrupted('interrupted')),
  );
  let started: { first: N[]; keep: (n: N) => boolean };
  try {
    started = await start();
  } catch (err) {
    stop();
    throw err;
  }
  const { first, keep } = started;
  // Shutdown ends the feed quietly, as it ends event streams: the connection closes and the client resumes elsewhere.
  const shutdown = () => end('shutdown');
  ctx.openFeeds.add(shutdown);
  const unwatch = watchCredential(ctx, actor, () => end('revoked'));
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    unwatch();
    ctx.openFeeds.delete(shutdown);
    stop();
    const why = ended ?? 'closed';
    onEnd?.(typeof why === 'string' ? why : why.reason);
  };
  async function* run(): AsyncGenerator<N> {
    try {
      for (const n of first) {
        if (ended) break;
        yield n;
      }
      for (;;) {
        while (queue.length > 0 && !ended) {
          const n = queue.shift()!;
          if (keep(n)) yield n;
        }
        if (typeof ended === 'string') return;
        if (ended) throw ended;
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (queue.length > 0 || ended) resolve();
        });
        wake = undefined;
      }
    } finally {
      finish();
    }
  }
  const iterator = run();
  // Ending the generator (client gone) must end it even while it waits for the next notice; a generator never
  // started runs no `finally`, so the return also finishes (once).
  const originalReturn = iterator.return.bind(iterator);
  iterator.return = async (value) => {
    end('closed');
    try {
      return await originalReturn(value);
    } finally {
      finish();
    }
  };
  return iterator;
}

/** The ends of a feed that are not errors: the iterator returns. */
type QuietEnd = 'closed' | 'revoked' | 'shutdown';
