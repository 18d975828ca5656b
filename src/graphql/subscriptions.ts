// Typed subscriptions over the account event log. Each one is the `events` stream of its channel (tenancy, replay
// after `lastEventId`, live delivery in id order across instances over the Redis bus, slow-consumer limit and
// shutdown all come from src/domain/events), filtered to the events about one object, and yields that object
// re-read through its domain function at that moment, with the event's id (pass it back as `lastEventId` to
// resume) and type. Truncation notices of the replay are not forwarded (the object is re-read, so the latest state
// is never lost); the `events` subscription shows them.

import { openEventStream } from '../domain/events/event.service.js';
import type { StoredEvent } from '../domain/events/event-log.js';
import { isTruncation } from '../domain/events/event-stream.js';
import type { GraphQLContext } from './builder.js';

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
 * Opens the account's stream on `channels` (after `lastEventId` when given) and yields a {@link Change} for each
 * event `matches` accepts, with `load` re-reading the object (null when gone). Ending the iterator ends the stream.
 * @throws what openEventStream throws (ForbiddenError without events:read, ValidationError) before anything streams.
 */
export async function changesOf<T>(
  ctx: GraphQLContext,
  opts: {
    channels: string[];
    lastEventId?: string | null;
    matches: (event: StoredEvent) => boolean;
    load: (event: StoredEvent) => Promise<T | null>;
  },
): Promise<AsyncGenerator<Change<T>>> {
  const sub = await openEventStream(ctx.app, ctx.actor, {
    channels: opts.channels,
    lastEventId: opts.lastEventId ?? undefined,
  });
  async function* changes(): AsyncGenerator<Change<T>> {
    try {
      for await (const item of sub) {
        if (isTruncation(item) || !opts.matches(item)) continue;
        yield {
          eventId: item.id,
          eventType: item.eventType,
          timestamp: item.timestamp,
          payload: item.payload,
          node: await opts.load(item),
        };
      }
    } finally {
      sub.end('closed');
    }
  }
  const iterator = changes();
  // Ending the generator (client gone) must end the bus subscription even while it waits for the next event.
  const originalReturn = iterator.return.bind(iterator);
  iterator.return = (value) => {
    sub.end('closed');
    return originalReturn(value);
  };
  return iterator;
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
