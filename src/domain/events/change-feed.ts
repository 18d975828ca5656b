import type { AppContext } from '../../app-context.js';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { DomainError } from '../errors.js';
import { parseInput } from '../validation.js';
import { type ChangeNotice, isAttemptNotice } from './change-notices.port.js';
import { eventStreamInput, parseChannels } from './event.service.js';
import type { Channel } from './event-catalog.js';
import type { StoredEvent } from './event-log.js';
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

const openFeeds = new WeakMap<AppContext, Set<() => void>>();

/** Ends every open change feed of this app (shutdown), as endAllStreams does for event streams. */
export function endAllChangeFeeds(ctx: AppContext): void {
  for (const end of [...(openFeeds.get(ctx) ?? [])]) end();
}

/**
 * Opens a feed of the account's events about one object: listens on the change-notice topic `topic` (see
 * change-notices.port.ts; RedisPubSub across instances, or in-process) first, then, when `lastEventId` is given,
 * reads the replay from the event log (up to 1000 events of `channels` after it, those `matches` accepts), and
 * yields the replay and then the live notices in id order, each event once (a notice at or below the last
 * yielded id is skipped). Requires `events:read`. When live delivery may have lost a notice (Redis connection
 * dropped, more than EVENT_STREAM_QUEUE_LIMIT notices waiting) the iterator throws {@link FeedInterrupted} so the
 * client resumes with `lastEventId` (the log has every event); shutdown ends it. Ending the iterator unsubscribes.
 * @throws ForbiddenError without events:read; ValidationError for a malformed lastEventId; Redis errors.
 */
export async function openChangeFeed(
  ctx: AppContext,
  actor: Actor,
  input: { channels: Channel[]; topic: string; lastEventId?: string | null; matches: (e: StoredEvent) => boolean },
): Promise<AsyncGenerator<StoredEvent>> {
  requireScope(actor, 'events:read');
  const parsed = parseInput(eventStreamInput, {
    channels: input.channels,
    lastEventId: input.lastEventId ?? undefined,
  });
  const filter = { accountId: actor.accountId, channels: parseChannels(parsed.channels) };
  const limit = ctx.config.EVENT_STREAM_QUEUE_LIMIT;
  const queue: StoredEvent[] = [];
  let wake: (() => void) | undefined;
  let ended: FeedInterrupted | 'closed' | 'shutdown' | undefined;
  const end = (why: FeedInterrupted | 'closed' | 'shutdown') => {
    ended ??= why;
    wake?.();
  };
  const stop = await ctx.notices.listen(
    input.topic,
    (event) => {
      if (isAttemptNotice(event) || event.accountId !== actor.accountId) return;
      if (queue.length >= limit) end(new FeedInterrupted('overflow'));
      else queue.push(event);
      wake?.();
    },
    () => end(new FeedInterrupted('interrupted')),
  );
  let replay: StoredEvent[] = [];
  let last = 0n;
  try {
    if (parsed.lastEventId !== undefined) {
      const items = await readReplay(ctx, filter, parsed.lastEventId);
      const unknownCursor = items.some((item) => isTruncation(item) && item.reason === 'unknown_id');
      if (!unknownCursor) last = parseEventId(parsed.lastEventId) ?? 0n;
      replay = items.filter((item): item is StoredEvent => !isTruncation(item) && input.matches(item));
    }
  } catch (err) {
    stop();
    throw err;
  }
  const feeds = openFeeds.get(ctx) ?? new Set();
  openFeeds.set(ctx, feeds);
  // Shutdown ends the feed quietly, as it ends event streams: the connection closes and the client resumes elsewhere.
  const shutdown = () => end('shutdown');
  feeds.add(shutdown);
  async function* run(): AsyncGenerator<StoredEvent> {
    try {
      for (const event of replay) {
        if (ended) break;
        last = BigInt(event.id);
        yield event;
      }
      for (;;) {
        while (queue.length > 0 && !ended) {
          const event = queue.shift()!;
          if (BigInt(event.id) <= last || !input.matches(event)) continue;
          last = BigInt(event.id);
          yield event;
        }
        if (ended === 'closed' || ended === 'shutdown') return;
        if (ended) throw ended;
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (queue.length > 0 || ended) resolve();
        });
        wake = undefined;
      }
    } finally {
      feeds.delete(shutdown);
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

/**
 * Live notices on `topic` that `accept` keeps (no replay): for changes that are not events (webhook delivery
 * attempts). Resolves once listening. Ends as {@link openChangeFeed} does: `return()` and shutdown end it quietly,
 * a possible loss (Redis gap, more than EVENT_STREAM_QUEUE_LIMIT waiting) throws {@link FeedInterrupted}.
 */
export async function listenNotices<N extends ChangeNotice>(
  ctx: AppContext,
  topic: string,
  accept: (n: ChangeNotice) => n is N,
): Promise<AsyncGenerator<N>> {
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
      if (queue.length >= ctx.config.EVENT_STREAM_QUEUE_LIMIT) end(new FeedInterrupted('overflow'));
      else queue.push(n);
      wake?.();
    },
    () => end(new FeedInterrupted('interrupted')),
  );
  const feeds = openFeeds.get(ctx) ?? new Set();
  openFeeds.set(ctx, feeds);
  const shutdown = () => end('closed');
  feeds.add(shutdown);
  async function* run(): AsyncGenerator<N> {
    try {
      for (;;) {
        while (queue.length > 0 && !ended) yield queue.shift()!;
        if (ended === 'closed') return;
        if (ended) throw ended;
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (queue.length > 0 || ended) resolve();
        });
        wake = undefined;
      }
    } finally {
      feeds.delete(shutdown);
      stop();
    }
  }
  const iterator = run();
  const originalReturn = iterator.return.bind(iterator);
  iterator.return = (value) => {
    end('closed');
    return originalReturn(value);
  };
  return iterator;
}
