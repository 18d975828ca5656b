// Typed subscriptions: live change notices on a graphql-subscriptions PubSub engine (RedisPubSub from
// graphql-redis-subscriptions with REDIS_URL, in-process PubSub otherwise; src/infra/pubsub), published by the
// event log after each commit on the topics of the objects an event is about, and replay after `lastEventId` from
// the event log (src/domain/events/change-feed.ts). Each yields the object re-read through its domain function
// at that moment, with the event's id (pass it back as `lastEventId` to resume) and type. Truncation notices of the
// replay are not forwarded (the object is re-read, so the latest state is never lost); `events` shows them.

import { openChangeFeed } from '../domain/events/change-feed.js';
import { changeTopic, EVERY } from '../domain/events/change-notices.port.js';
import type { StoredEvent, StreamEndReason } from '../domain/events/event.js';
import { eventStreamInput } from '../domain/events/event.service.js';
import type { Channel } from '../domain/events/event-catalog.js';
import type { GraphQLContext } from './builder.js';
import { parseArgs } from './parse-args.js';

/** One change of a typed subscription: the event that caused it and the object re-read after it. */
export interface Change<T> {
  /** The event id (SSE `id:`); resume after it with `lastEventId`. */
  eventId: string;
  /** The catalog event type, e.g. `10dlc.carrier.status_changed`. */
  eventType: string;
  /** When the event was recorded (ISO 8601 UTC). */
  timestamp: string;
  /** The object now, or null once it was deleted. */
  node: T | null;
  /** The event's own payload (e.g. the numbers assigned). */
  payload: Record<string, unknown>;
}

/**
 * Listens on the change-notice topic `topic` (kind and id, e.g. `['brand', id]`; account-scoped here) over the
 * PubSub engine (RedisPubSub with REDIS_URL), after replaying the matching events of `channels` after
 * `lastEventId` from the event log, and yields a {@link Change} for each event `matches` accepts, with `load`
 * re-reading the object through the domain (null when gone). Ending the iterator unsubscribes.
 * @throws ForbiddenError without events:read, ValidationError for a malformed `lastEventId` (both checked here, at
 *   the door), and what openChangeFeed throws, before anything streams.
 */
export async function changesOf<T>(
  ctx: GraphQLContext,
  opts: {
    channels: Channel[];
    /** Kind and id of the topic; id `*` ({@link EVERY}) listens to every object of the kind in the account. */
    topic: [kind: string, id: string];
    lastEventId?: string | null;
    matches: (event: StoredEvent) => boolean;
    load: (event: StoredEvent) => Promise<T | null>;
    /** A last filter on the re-read object (e.g. a campaign's brand); every change is kept without it. */
    keep?: (node: T | null, event: StoredEvent) => boolean;
  },
): Promise<AsyncGenerator<Change<T>>> {
  const { lastEventId } = parseArgs(ctx, 'events:read', eventStreamInput, { lastEventId: opts.lastEventId });
  const feed = await countedFeed(ctx, (onEnd) =>
    openChangeFeed(ctx.app, ctx.actor, {
      channels: opts.channels,
      topic: changeTopic(ctx.actor.accountId, opts.topic[0], opts.topic[1]),
      lastEventId,
      matches: opts.matches,
      onEnd,
    }),
  );
  async function* changes(): AsyncGenerator<Change<T>> {
    try {
      for await (const item of feed) {
        const node = await opts.load(item);
        if (opts.keep && !opts.keep(node, item)) continue;
        yield { eventId: item.id, eventType: item.eventType, timestamp: item.timestamp, payload: item.payload, node };
      }
    } finally {
      await feed.return(undefined);
    }
  }
  const iterator = changes();
  // Ending the generator (client gone) must end the feed even while it waits for the next notice.
  const originalReturn = iterator.return.bind(iterator);
  iterator.return = (value) => {
    void feed.return(undefined);
    return originalReturn(value);
  };
  return iterator;
}

/** The topic id of an optional id argument: the id, or {@link EVERY} (the whole account) when omitted. */
export function topicId(id: string | number | null | undefined): string {
  return id === null || id === undefined ? EVERY : String(id);
}

/** The payload's string field `key`, if any. */
export function payloadString(event: StoredEvent, key: string): string | undefined {
  const value = event.payload[key];
  return typeof value === 'string' ? value : undefined;
}

/** Null instead of the domain's NOT_FOUND (a deleted object ends as `node: null`). */
export async function orNull<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (err) {
    if ((err as { code?: string }).code === 'NOT_FOUND') return null;
    throw err;
  }
}

/**
 * Opens a subscription's feed with `open`, handing it the `onEnd` to call once when the feed ends, and counts the
 * feed as a GraphQL stream (docs/operations.md "Metrics"): `switchboard_open_streams{transport="graphql"}` + 1
 * once `open` resolves, − 1 with `switchboard_streams_ended_total{transport="graphql", reason}` + 1 at its end. A
 * feed that fails to open is not counted. @throws what `open` throws.
 */
export async function countedFeed<F>(
  ctx: GraphQLContext,
  open: (onEnd: (reason: StreamEndReason) => void) => Promise<F>,
): Promise<F> {
  const feed = await open((reason) => ctx.app.metrics.streamEnded('graphql', reason));
  ctx.app.metrics.streamOpened('graphql');
  return feed;
}
