import { type Actor, requireScope } from '../accounts/account.service.js';
import { DomainError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import { type ChangeNotice, isAttemptNotice } from './change-notices.port.js';
import type { StoredEvent } from './event.js';
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
 * client resumes with `lastEventId` (the log has every event); shutdown ends it. Ending the iterator unsubscribes.
 * `lastEventId` arrives parsed by the door (`eventStreamInput`: at most 100 characters).
 * @throws ForbiddenError without events:read; Redis errors.
 */
export async function openChangeFeed(
  ctx: DomainContext,
  actor: Actor,
  input: { channels: Channel[]; topic: string; lastEventId?: string; matches: (e: StoredEvent) => boolean },
): Promise<AsyncGenerator<StoredEvent>> {
  requireScope(actor, 'events:read');
  const filter = { accountId: actor.accountId, channels: parseChannels(input.channels) };
  const ofAccount = (n: ChangeNotice): n is StoredEvent => !isAttemptNotice(n) && n.accountId === actor.accountId;
  return liveFeed(ctx, input.topic, ofAccount, async () => {
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
 * Live notices on `topic` that `accept` keeps (no replay): for changes that are not events (webhook delivery
 * attempts). Resolves once listening. Ends as {@link openChangeFeed} does: `return()` and shutdown end it quietly,
 * a possible loss (Redis gap, more than EVENT_STREAM_QUEUE_LIMIT waiting) throws {@link FeedInterrupted}.
 */
export async function listenNotices<N extends ChangeNotice>(
  ctx: DomainContext,
  topic: string,
  accept: (n: ChangeNotice) => n is N,
): Promise<AsyncGenerator<N>> {
  return liveFeed(ctx, topic, accept, async () => ({ first: [], keep: () => true }));
}

/**
 * The one live-notice iterator both feeds use: listens on `topic` first (queueing the notices `accept` keeps, at
 * most EVENT_STREAM_QUEUE_LIMIT), then calls `start` (the replay read; if it throws, the listener is dropped and
 * the error propagates), then yields `first` and the queued notices `keep` passes, in arrival order. `return()`
 * and shutdown ({@link endAllChangeFeeds}) end it quietly; a possible loss throws {@link FeedInterrupted}. Ending
 * it unsubscribes.
 */
async function liveFeed<N extends ChangeNotice>(
  ctx: DomainContext,
  topic: string,
  accept: (n: ChangeNotice) => n is N,
  start: () => Promise<{ first: N[]; keep: (n: N) => boolean }>,
): Promise<AsyncGenerator<N>> {
  const limit = ctx.config.EVENT_STREAM_QUEUE_LIMIT;
  const queue: N[] = [];
  let wake: (() => void) | undefined;
  let ended: FeedInterrupted | 'closed' | undefined;
  const end = (why: FeedInterrupted | 'closed') => {
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
  const shutdown = () => end('closed');
  ctx.openFeeds.add(shutdown);
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
        if (ended === 'closed') return;
        if (ended) throw ended;
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (queue.length > 0 || ended) resolve();
        });
        wake = undefined;
      }
    } finally {
      ctx.openFeeds.delete(shutdown);
      stop();
    }
  }
  const iterator = run();
  // Ending the generator (client gone) must end it even while it waits for the next notice.
  const originalReturn = iterator.return.bind(iterator);
  iterator.return = (value) => {
    end('closed');
    return originalReturn(value);
  };
  return iterator;
}
