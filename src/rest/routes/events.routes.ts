import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import {
  eventHistoryInput,
  getEventCatalog,
  listEventHistory,
  openEventStream,
  publishEvent,
  publishEventInput,
} from '../../domain/events/event.service.js';
import { toEnvelope } from '../../domain/events/event-log.js';
import {
  type EventSubscription,
  endAllStreams,
  isTruncation,
  type StreamItem,
} from '../../domain/events/event-stream.js';
import { actorOf } from '../auth.js';

/** After shutdown ends the streams, how long in-flight requests may still finish before connections close, in ms. */
const SHUTDOWN_GRACE_MS = 2_000;

/** Formats one SSE message (spec 6.2): `event:`, `id:`, `data:` (2.11 envelope); the notice has no `id:`. */
export function formatSse(item: StreamItem): string {
  if (isTruncation(item)) {
    const { kind: _kind, ...data } = item;
    return `event: stream.truncated\ndata: ${JSON.stringify(data)}\n\n`;
  }
  return `event: ${item.eventType}\nid: ${item.id}\ndata: ${JSON.stringify(toEnvelope(item))}\n\n`;
}

/**
 * Writes `sub` to the response with backpressure until it ends or the client leaves. At every heartbeat the stream
 * re-checks its API key (`keyActive`), so a revoked key stops receiving within one heartbeat interval.
 */
async function pump(
  res: ServerResponse,
  sub: EventSubscription,
  heartbeatMs: number,
  keyActive: () => Promise<boolean>,
): Promise<void> {
  let gone = false;
  const onGone = () => {
    gone = true;
    sub.end('closed');
  };
  res.on('close', onGone);
  const heartbeat = setInterval(() => {
    if (gone) return;
    res.write(': heartbeat\n\n');
    void keyActive().then(
      (active) => {
        if (!active && !gone) {
          gone = true;
          sub.end('closed');
        }
      },
      () => {}, // the database is unreachable: keep streaming; the next heartbeat asks again
    );
  }, heartbeatMs);
  sub.onEnd((reason) => {
    // A consumer past the queue limit may not read at all: drop the connection rather than buffer for it.
    if (reason === 'overflow') res.destroy();
  });
  try {
    for await (const item of sub) {
      if (gone) break;
      if (!res.write(formatSse(item))) {
        await new Promise<void>((resolve) => {
          let removeEndListener = () => {};
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            removeEndListener();
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
          removeEndListener = sub.onEnd(done);
        });
      }
    }
  } finally {
    clearInterval(heartbeat);
    res.off('close', onGone);
    if (!res.destroyed) res.end();
  }
}

const streamQuery = z.object({
  token: z.string().optional().describe('API key (spec 5.2); `Authorization: Bearer` works too.'),
  channels: z
    .string()
    .optional()
    .describe('Comma-separated channel names (GET /api/events/catalog); every channel when omitted.'),
  lastEventId: z
    .string()
    .max(100)
    .optional()
    .describe('Resume after this id, for clients that cannot send the `Last-Event-ID` header (the header wins).'),
});

const historyEvent = z.object({
  id: z.string(),
  channel: z.string(),
  eventType: z.string(),
  payload: z.record(z.string(), z.unknown()),
  customerId: z.string(),
  timestamp: z.string(),
});

/**
 * REST routes of the events area: ingest (POST /api/events), the SSE stream (GET /api/events, spec 4.7), the
 * history list (GET /api/events/history) and the catalog (GET /api/events/catalog).
 */
export async function eventsRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  // End streams before Fastify waits for open connections, so shutdown is not held up by SSE clients.
  app.addHook('preClose', async () => {
    endAllStreams(ctx);
    // Streams are ended now. A client that dropped a stream connection mid-request can leave a socket Node never
    // counts as idle, which would hold close() for the keep-alive timeout (72 s): after a grace period for
    // in-flight requests, close what is left.
    const force = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    force.unref();
    app.server.once('close', () => clearTimeout(force));
  });

  r.post(
    '/api/events',
    {
      schema: {
        operationId: 'publishEvent',
        errors: ['FORBIDDEN'],
        tags: ['events'],
        summary: 'Publish an event into the account log (scope events:write). Answers 202 with the stored id.',
        body: publishEventInput,
        response: {
          202: z.object({ id: z.string(), channel: z.string(), eventType: z.string(), timestamp: z.string() }),
        },
      },
    },
    async (request, reply) => {
      const event = await publishEvent(ctx, actorOf(request), request.body);
      return reply
        .status(202)
        .send({ id: event.id, channel: event.channel, eventType: event.eventType, timestamp: event.timestamp });
    },
  );

  r.get(
    '/api/events',
    {
      config: { allowQueryToken: true },
      schema: {
        operationId: 'streamEvents',
        errors: ['FORBIDDEN'],
        tags: ['events'],
        summary:
          'Server-Sent Events stream of the account (scope events:read): `event:`, `id:`, `data:` per event; replay ' +
          'after `Last-Event-ID` (up to 1000, `event: stream.truncated` first when incomplete); `: heartbeat` comments.',
        querystring: streamQuery,
        headers: z.looseObject({
          'last-event-id': z
            .string()
            .optional()
            .describe('Resume after this event id (sent by EventSource on reconnect); wins over `?lastEventId`.'),
        }),
        response: {
          200: {
            description:
              'A Server-Sent Events stream (spec 6.2) until the client leaves, the key is revoked or the server stops.',
            content: {
              'text/event-stream': {
                schema: z
                  .string()
                  .describe(
                    'Messages `event: <eventType>`, `id: <event id>`, `data: <envelope JSON>`; `event: stream.truncated` ' +
                      'without `id:` when a replay is incomplete; `: heartbeat` comments.',
                  ),
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const lastEventId = request.headers['last-event-id'] ?? request.query.lastEventId;
      const sub = await openEventStream(ctx, actorOf(request), { channels: request.query.channels, lastEventId });
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
      });
      // `retry` makes EventSource clients reconnect after 1 s; the comment flushes the headers at once.
      res.write('retry: 1000\n: connected\n\n');
      const { keyId } = actorOf(request);
      await pump(res, sub, ctx.config.EVENT_STREAM_HEARTBEAT_MS, () => ctx.auth.isActive(keyId));
    },
  );

  r.get(
    '/api/events/history',
    {
      schema: {
        operationId: 'listEventHistory',
        errors: ['FORBIDDEN'],
        tags: ['events'],
        summary:
          'Past events in id order after the cursor `after` (scope events:read); the ids are those of the stream ' +
          'and webhooks. Default limit 100, max 1000.',
        querystring: eventHistoryInput.extend({ channels: z.string().optional() }),
        response: {
          200: z.object({
            events: z.array(historyEvent),
            nextCursor: z.string().nullable(),
            hasMore: z.boolean(),
            truncated: z.boolean(),
          }),
        },
      },
    },
    async (request) => listEventHistory(ctx, actorOf(request), request.query),
  );

  r.get(
    '/api/events/catalog',
    {
      schema: {
        operationId: 'getEventCatalog',
        tags: ['events'],
        summary: 'Every channel with its event types (any authenticated key).',
        response: {
          200: z.object({
            channels: z.array(z.object({ name: z.string(), description: z.string(), eventTypes: z.array(z.string()) })),
          }),
        },
      },
    },
    async (request) => ({ channels: getEventCatalog(actorOf(request)) }),
  );
}

// OpenAPI component names (docs/openapi.md).
// Request bodies, named where they are used (the domain declares them; the document shows them as `<Name>`).
z.globalRegistry.add(publishEventInput, { id: 'EventPublish' });
