// GraphQL surface of the events area: the Event type, history, catalog, publish, and the `events` subscription.

import type { Scope } from '../../domain/accounts/account.service.js';
import { type IssuedStreamToken, issueStreamToken, watchCredential } from '../../domain/accounts/stream-token.js';
import type { CatalogChannel, EventHistoryPage, HistoryEvent } from '../../domain/events/event.service.js';
import {
  eventHistoryInput,
  eventStreamInput,
  getEventCatalog,
  historyEventShape,
  listEventHistory,
  openEventStream,
  publishEvent,
  publishEventInput,
  toHistoryEvent,
} from '../../domain/events/event.service.js';
import { isTruncation, type StreamItem, type TruncationNotice } from '../../domain/events/event-stream.js';
import { builder } from '../builder.js';
import { parseArgs } from '../parse-args.js';
import { shapeFields } from '../shape-fields.js';
import { countedFeed } from '../subscriptions.js';
import { ScopeEnum } from './viewer.js';

const Event = builder.objectRef<HistoryEvent>('Event').implement({
  description:
    'An account event: the spec 2.11 envelope plus its log id (the SSE `id:`, the replay and history cursor).',
  // The fields are the domain's declaration (event.service.ts historyEventShape), as the REST answer's.
  fields: (t) => shapeFields(t, historyEventShape),
});

const StreamTruncated = builder.objectRef<TruncationNotice>('StreamTruncated').implement({
  description:
    'Sent first when a replay cannot be complete: events between `lastEventId` and `firstAvailableId` may be missing.',
  fields: (t) => ({
    reason: t.exposeString('reason', {
      description:
        '`pruned` (retention removed events after the cursor), `limit` (more than `replayLimit` matching events ' +
        'followed it; the newest are replayed) or `unknown_id` (not an id of this service).',
    }),
    lastEventId: t.exposeString('lastEventId', { description: 'The cursor the client asked to resume after.' }),
    firstAvailableId: t.exposeString('firstAvailableId', {
      nullable: true,
      description: 'Id of the first replayed event; null when nothing is replayed.',
    }),
    replayLimit: t.exposeInt('replayLimit', { description: 'Most events one replay sends (spec 8: 1000).' }),
  }),
});

type StreamMessageShape = HistoryEvent | TruncationNotice;

const StreamMessage = builder.unionType('StreamMessage', {
  description: 'What the `events` subscription yields: events, preceded by a `StreamTruncated` notice when needed.',
  types: [Event, StreamTruncated],
  resolveType: (item: StreamMessageShape) => ('reason' in item ? StreamTruncated : Event),
});

const EventHistory = builder.objectRef<EventHistoryPage>('EventHistory').implement({
  description: 'A page of past events in id order.',
  fields: (t) => ({
    // The page's `limit` already multiplies this list's cost (limits.ts).
    events: t.field({ type: [Event], complexity: { field: 1, multiplier: 1 }, resolve: (p) => p.events }),
    nextCursor: t.exposeString('nextCursor', {
      nullable: true,
      description: 'Pass as `after` for the next page (the last id, or the given `after` when empty).',
    }),
    hasMore: t.exposeBoolean('hasMore', { description: 'More matching events exist after this page now.' }),
    truncated: t.exposeBoolean('truncated', {
      description: 'Retention pruned events after `after`: the list from that cursor is incomplete.',
    }),
  }),
});

const EventChannel = builder.objectRef<CatalogChannel>('EventChannel').implement({
  description: 'A channel of the event catalog with its event types.',
  fields: (t) => ({
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    eventTypes: t.exposeStringList('eventTypes'),
  }),
});

builder.queryField('events', (t) =>
  t.field({
    type: EventHistory,
    description: 'Past events after the cursor `after` (scope events:read); same ids as the stream and webhooks.',
    args: {
      after: t.arg.string({ description: 'Return events with an id greater than this.' }),
      limit: t.arg.int({ description: 'Page size, 1 to 1000 (default 100).' }),
      channels: t.arg.stringList({ description: 'Channels to include; every channel when omitted.' }),
    },
    resolve: (_root, args, ctx) =>
      listEventHistory(
        ctx.app,
        ctx.actor,
        parseArgs(ctx, 'events:read', eventHistoryInput, {
          after: args.after,
          limit: args.limit,
          channels: args.channels,
        }),
      ),
  }),
);

builder.queryField('eventCatalog', (t) =>
  t.field({
    type: [EventChannel],
    description: 'Every channel with its event types.',
    resolve: (_root, _args, ctx) => getEventCatalog(ctx.actor),
  }),
);

const PublishEventInput = builder.inputType('PublishEventInput', {
  description: 'An event to record (as POST /api/events).',
  fields: (t) => ({
    eventType: t.string({ required: true, description: 'A catalog event type; the channel follows from it.' }),
    payload: t.field({ type: 'JSON', description: 'Event-specific JSON object (default {}).' }),
  }),
});

const PublishEventPayload = builder
  .objectRef<{ event: ReturnType<typeof toHistoryEvent> }>('PublishEventPayload')
  .implement({
    description: 'The event recorded.',
    fields: (t) => ({ event: t.field({ type: Event, resolve: (p) => p.event }) }),
  });

builder.mutationField('publishEvent', (t) =>
  t.field({
    type: PublishEventPayload,
    errors: {},
    description: 'Records an event in the account log and publishes it (scope events:write).',
    args: { input: t.arg({ type: PublishEventInput, required: true }) },
    resolve: async (_root, args, ctx) => ({
      event: toHistoryEvent(
        await publishEvent(ctx.app, ctx.actor, parseArgs(ctx, 'events:write', publishEventInput, args.input)),
      ),
    }),
  }),
);

builder.subscriptionType({
  description:
    'Live data over graphql-sse (`/graphql/stream`, distinct or single connection), Yoga SSE or graphql-ws. Every ' +
    'subscription re-checks its credential every EVENT_STREAM_HEARTBEAT_MS (15 s) and completes once the API key ' +
    'is revoked or the stream token expired; subscribing again then answers UNAUTHENTICATED.',
});

async function* asMessages(stream: AsyncIterable<StreamItem>): AsyncGenerator<StreamMessageShape> {
  for await (const item of stream) yield isTruncation(item) ? item : toHistoryEvent(item);
}

builder.subscriptionField('events', (t) =>
  t.field({
    type: StreamMessage,
    description:
      'The account’s events (scope events:read), optionally only `channels`; with `lastEventId`, first the replay ' +
      '(up to 1000 events, after a `StreamTruncated` notice when incomplete), then live events, each id once. It ' +
      'completes when the subscriber falls too far behind, when live delivery had a gap (Redis) or at shutdown: ' +
      'subscribe again with the last received id.',
    args: {
      channels: t.arg.stringList({ description: 'Channels to include; every channel when omitted.' }),
      lastEventId: t.arg.string({ description: 'Resume after this event id.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const input = parseArgs(ctx, 'events:read', eventStreamInput, {
        channels: args.channels,
        lastEventId: args.lastEventId,
      });
      const sub = await countedFeed(ctx, async (onEnd) => {
        const opened = await openEventStream(ctx.app, ctx.actor, input);
        opened.onEnd(onEnd);
        return opened;
      });
      // As the REST stream does at each heartbeat: end when the key is revoked or the stream token expires.
      sub.onEnd(watchCredential(ctx.app, ctx.actor, () => sub.end('revoked')));
      const messages = asMessages(sub);
      // Ending the generator (client gone) must end the bus subscription even while it waits for the next event.
      const originalReturn = messages.return.bind(messages);
      messages.return = (value) => {
        sub.end('closed');
        return originalReturn(value);
      };
      return messages;
    },
    resolve: (message) => message,
  }),
);

const StreamToken = builder.objectRef<IssuedStreamToken>('StreamToken').implement({
  description:
    'A short-lived token that opens event streams of this account only (scope events:read): pass it as `?token=` ' +
    'to GET /api/events, /graphql (SSE subscriptions) or /graphql/stream instead of the API key.',
  fields: (t) => ({
    token: t.exposeString('token', { description: '`sbst_…`; valid until `expiresAt` and while its API key is.' }),
    expiresAt: t.exposeString('expiresAt', { description: 'ISO 8601 UTC; open streams end then.' }),
    scopes: t.field({ type: [ScopeEnum], description: 'Always [EVENTS_READ].', resolve: (s) => s.scopes as Scope[] }),
  }),
});

const CreateStreamTokenPayload = builder.objectRef<IssuedStreamToken>('CreateStreamTokenPayload').implement({
  description: 'The stream token issued.',
  fields: (t) => ({ streamToken: t.field({ type: StreamToken, resolve: (p) => p }) }),
});

builder.mutationField('createStreamToken', (t) =>
  t.field({
    type: CreateStreamTokenPayload,
    errors: {},
    description:
      'Trades the API key for a stream token (STREAM_TOKEN_TTL_SECONDS, default 5 minutes; scope events:read), ' +
      'as POST /api/events/tokens. Browsers should stream with it rather than with the API key in the URL. It takes ' +
      'no input: the token has the caller’s account, the one scope events:read and the configured lifetime.',
    resolve: (_root, _args, ctx) => issueStreamToken(ctx.app, ctx.actor),
  }),
);
