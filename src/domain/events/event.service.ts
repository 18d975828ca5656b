import { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { ingestPayloadIssues } from '../compliance/did-lifecycle.js';
import { ValidationError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import { keysetPage } from '../paging.js';
import { decimalBigintString, decimalInt } from '../validation.js';
import { type EventEnvelope, type StoredEvent, toEnvelope } from './event.js';
import { eventPage, retentionMark } from './event.store.js';
import { CHANNELS, type Channel, EVENT_CATALOG, isChannel, isEventType, isServiceEmitted } from './event-catalog.js';
import {
  EventSubscription,
  isTruncation,
  parseEventId,
  readReplay,
  readReplayFrames,
  type StreamFilter,
  trackStream,
} from './event-stream.js';

/** Body of POST /api/events and input of the `publishEvent` mutation. */
export const publishEventInput = z
  .object({
    eventType: z
      .string()
      .refine(isEventType, {
        message: 'unknown event type (see GET /api/events/catalog)',
        params: { code: 'UNKNOWN_EVENT_TYPE' },
      })
      .refine((type) => !isEventType(type) || !isServiceEmitted(type), {
        message: 'this event type is emitted by the service itself and cannot be published',
        params: { code: 'SERVICE_EVENT_TYPE' },
      })
      .describe('A catalog event type; its channel is derived from it.'),
    payload: z.record(z.string(), z.unknown()).default({}).describe('Event-specific JSON object.'),
  })
  .strict();
/** Parsed publishEventInput. */
export type PublishEventInput = z.output<typeof publishEventInput>;

/**
 * Ingest (issue 3): records one event from the telephony side of the platform in the caller's account log and
 * publishes it after commit; resolves only after COMMIT. Concurrent ingests of one account share one transaction
 * (group commit, EventLog.ingest). Requires the `events:write` scope.
 * @returns the stored event (id = log id, the SSE `id:`).
 * `input` is parsed at the door by `publishEventInput` (400 for an unknown type UNKNOWN_EVENT_TYPE, a type the
 * service emits itself SERVICE_EVENT_TYPE: 10dlc.*, email.*, webhook.*, did.purchased, did.released, or a
 * non-object payload).
 * @throws ForbiddenError without `events:write`; ValidationError INVALID_DID_STATE for a did.state_changed whose state or previousState is not
 *   a DID state (unassigned, warming, active, cooling).
 */
export function publishEvent(ctx: DomainContext, actor: Actor, input: PublishEventInput): Promise<StoredEvent> {
  // Not an async function (issue 24 round 6: one promise less per event); every error still rejects, never throws.
  const { eventType, payload } = input;
  try {
    requireScope(actor, 'events:write');
    // Payload rules of types whose meaning the service defines (did.state_changed: spec 3 DID states).
    const issues = ingestPayloadIssues(eventType, payload);
    if (issues.length > 0) throw new ValidationError(issues);
  } catch (err) {
    return Promise.reject(err);
  }
  return ctx.events.ingest({ accountId: actor.accountId, eventType, payload });
}

/** `channels` as REST sends it (comma-separated) or GraphQL does (a list). */
const channelsField = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .describe('Channel names, comma-separated (REST) or a list (GraphQL); every channel when omitted.');

/**
 * Splits and checks a channel filter. Empty or omitted means every channel.
 * @throws ValidationError (field `channels`, code UNKNOWN_CHANNEL) naming every unknown channel.
 */
export function parseChannels(value: string | readonly string[] | undefined | null): Channel[] | undefined {
  if (value === undefined || value === null) return undefined;
  const names = (typeof value === 'string' ? value.split(',') : [...value]).map((c) => c.trim()).filter(Boolean);
  if (names.length === 0) return undefined;
  const unknown = names.filter((n) => !isChannel(n));
  if (unknown.length > 0) {
    throw new ValidationError(
      unknown.map((name) => ({
        code: 'UNKNOWN_CHANNEL',
        field: 'channels',
        message: `unknown channel "${name}" (one of: ${CHANNELS.join(', ')})`,
      })),
    );
  }
  return [...new Set(names)] as Channel[];
}

/** Input of the event stream (REST query `channels`, header or query `Last-Event-ID`; GraphQL arguments). */
export const eventStreamInput = z.object({
  channels: channelsField,
  lastEventId: z
    .string()
    .max(100)
    .optional()
    .describe('Resume after this event id (the `Last-Event-ID` header; also accepted as a query parameter).'),
});
/** Parsed eventStreamInput. */
export type EventStreamInput = z.output<typeof eventStreamInput>;

/**
 * Opens a live stream of the caller's events (spec 4.7, 6.2, 8): subscribes to the bus first, then, when
 * `lastEventId` is given, reads the replay (up to 1000 matching events after it, preceded by a truncation notice
 * when it cannot be complete), so that the returned iterator yields replay, then live events, each id once.
 * With `sse: true` the replay is read as ready SSE frames instead (`takePreamble()`, written before iterating).
 * `group` is the stream's fan-out group on the bus (`BusScope.group`: its HTTP/2 connection), none when omitted.
 * Requires `events:read`. The caller iterates and ends it with `return()`; shutdown ends it too.
 * @throws ForbiddenError without `events:read`; ValidationError for unknown channels (before anything streams).
 */
export async function openEventStream(
  ctx: DomainContext,
  actor: Actor,
  parsed: EventStreamInput,
  opts: { sse?: boolean; group?: object } = {},
): Promise<EventSubscription> {
  requireScope(actor, 'events:read');
  const filter: StreamFilter = { accountId: actor.accountId, channels: parseChannels(parsed.channels) };
  if (opts.group) filter.group = opts.group;
  const sub = new EventSubscription(ctx.bus, filter, ctx.config.EVENT_STREAM_QUEUE_LIMIT);
  try {
    // Live delivery of the account is tracked from here on: what commits later arrives live, the rest is replayed.
    await ctx.bus.whenReady(filter.accountId);
    if (parsed.lastEventId === undefined) sub.setReplay([]);
    else if (opts.sse) {
      const { frames, resumeAfter } = await readReplayFrames(ctx, filter, parsed.lastEventId);
      sub.setReplayFrames(frames, resumeAfter);
    } else {
      const replay = await readReplay(ctx, filter, parsed.lastEventId);
      const unknownCursor = replay.some((item) => isTruncation(item) && item.reason === 'unknown_id');
      sub.setReplay(replay, unknownCursor ? undefined : parseEventId(parsed.lastEventId));
    }
  } catch (err) {
    sub.end('closed');
    throw err;
  }
  trackStream(ctx, sub);
  return sub;
}

/** Default and maximum page size of the history list. */
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 1000;

/** Query of GET /api/events/history and arguments of `Query.events`. */
export const eventHistoryInput = z.object({
  after: decimalBigintString
    .optional()
    .describe(
      'Cursor: return events with an id greater than this (a Last-Event-ID, a webhook event id or nextCursor).',
    ),
  limit: decimalInt(1, HISTORY_MAX_LIMIT)
    .default(HISTORY_DEFAULT_LIMIT)
    .describe(`Page size, 1 to ${HISTORY_MAX_LIMIT} (default ${HISTORY_DEFAULT_LIMIT}).`),
  channels: channelsField,
});
/** Parsed eventHistoryInput. */
export type EventHistoryInput = z.output<typeof eventHistoryInput>;

/**
 * THE declaration of an event as history, GraphQL and the ingest answer show it (issue 23 "one declaration per
 * noun"): the spec 2.11 envelope plus the event id (the SSE `id:`). The REST history answer uses it and GraphQL's
 * Event type lists its fields from it (src/graphql/shape-fields.ts).
 */
export const historyEventShape = z.object({
  id: z.string().describe('Global monotonic event id (decimal string).'),
  channel: z.string().describe('Channel (spec 6.2; see `eventCatalog`).'),
  eventType: z.string().describe('Event type of the catalog.'),
  payload: z.record(z.string(), z.unknown()).describe('Event-specific JSON object.'),
  customerId: z.string().describe('The account id.'),
  timestamp: z.string().describe('ISO 8601 UTC with milliseconds.'),
});

/** One history entry: declared by {@link historyEventShape}; the {@link EventEnvelope} plus the event id. */
export type HistoryEvent = z.output<typeof historyEventShape>;

/** A history page. */
export interface EventHistoryPage {
  events: HistoryEvent[];
  /** Pass as `after` for the next page: the last returned id, or the given `after` when the page is empty. */
  nextCursor: string | null;
  /** Whether more matching events exist after this page right now. */
  hasMore: boolean;
  /** True when retention pruned events after `after`: the list cannot be complete from that cursor. */
  truncated: boolean;
}

/** An event with its id and envelope fields, as history and GraphQL show it. */
export function toHistoryEvent(e: StoredEvent): HistoryEvent {
  return { id: e.id, ...toEnvelope(e) };
}

/**
 * Pages through the caller's retained events in id order after the cursor `after` (the same ids as the SSE `id:`
 * and webhook bodies, so a consumer can switch transports without gaps). Requires `events:read`.
 * `input` is parsed at the door by `eventHistoryInput`.
 * @throws ForbiddenError without `events:read`; ValidationError for an unknown channel.
 */
export async function listEventHistory(
  ctx: DomainContext,
  actor: Actor,
  input: EventHistoryInput,
): Promise<EventHistoryPage> {
  requireScope(actor, 'events:read');
  const { after, limit, channels: rawChannels } = input;
  const channels = parseChannels(rawChannels);
  const cursor = parseEventId(after);
  const rows = await keysetPage(limit, (take) => eventPage(ctx.db, actor.accountId, channels, cursor, take));
  const page = rows.items.map(toHistoryEvent);
  let truncated = false;
  if (cursor !== undefined) {
    const mark = await retentionMark(ctx.db, actor.accountId);
    truncated = mark !== null && cursor < mark;
  }
  return {
    events: page,
    nextCursor: page.at(-1)?.id ?? after ?? null,
    hasMore: rows.hasMore,
    truncated,
  };
}

/** One channel of the catalog. */
export interface CatalogChannel {
  name: Channel;
  description: string;
  eventTypes: string[];
}

/**
 * The event catalog (spec 6.1, 6.2 and this service's own channels): every channel with its event types. Any
 * authenticated key may read it (publishers with only `events:write` need it too).
 */
export function getEventCatalog(_actor: Actor): CatalogChannel[] {
  return CHANNELS.map((name) => ({
    name,
    description: EVENT_CATALOG[name].description,
    eventTypes: [...EVENT_CATALOG[name].types],
  }));
}
