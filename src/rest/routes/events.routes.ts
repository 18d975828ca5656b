import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { issueStreamToken } from '../../domain/accounts/stream-token.js';
import { endAllChangeFeeds } from '../../domain/events/change-feed.js';
import type { StoredEvent } from '../../domain/events/event.js';
import {
  eventHistoryInput,
  eventStreamInput,
  getEventCatalog,
  historyEventShape,
  listEventHistory,
  openEventStream,
  publishEvent,
  publishEventInput,
} from '../../domain/events/event.service.js';
import {
  type EventSubscription,
  endAllStreams,
  isTruncation,
  type LiveSink,
  type StreamItem,
  sseFrame,
  sseFrameBytes,
  truncationFrame,
} from '../../domain/events/event-stream.js';
import type { MetricsRecorder } from '../../domain/metrics.port.js';
import { parseInput } from '../../domain/validation.js';
import { hijackedStreamEstablished } from '../../http/hijacked-stream.js';
import { markRequestBound } from '../../infra/logger.js';
import { EVENT_ID_ATTRIBUTE } from '../../infra/tracing.js';
import { actorOf } from '../auth.js';
import { needsDrain, type OpenStream, StreamHeartbeat } from '../stream-heartbeat.js';

/** After shutdown ends the streams, how long in-flight requests may still finish before connections close, in ms. */
const SHUTDOWN_GRACE_MS = 2_000;

/** Formats one SSE message (spec 6.2): `event:`, `id:`, `data:` (2.11 envelope; the notice's `id:` is its resume id). */
export function formatSse(item: StreamItem): string {
  return isTruncation(item) ? truncationFrame(item) : sseFrame(item);
}

/**
 * The frames of `GET /api/events?unnamed=1` (browser EventSource `onmessage`): the same frames without their
 * `event:` line, so every message is a default `message` event; the type is the envelope's `eventType`, and the
 * truncation notice carries `"eventType":"stream.truncated"`. Data lines are single-line JSON, so `event:` can
 * only start a field line.
 */
export function unnamedFrames(frames: string): string {
  return frames
    .replace(/^event: stream\.truncated\n(id: [^\n]*\n)data: \{/gm, '$1data: {"eventType":"stream.truncated",')
    .replace(/^event: [^\n]*\n/gm, '');
}

let unnamedOfEvent: StoredEvent | undefined;
let unnamedOfFrame: Buffer = Buffer.alloc(0);

/** {@link unnamedFrames} of an event's frame as UTF-8 bytes, once per event (as {@link sseFrameBytes}); shared. */
function unnamedFrameBytes(event: StoredEvent): Buffer {
  if (unnamedOfEvent !== event) {
    unnamedOfFrame = Buffer.from(unnamedFrames(sseFrame(event)), 'utf8');
    unnamedOfEvent = event;
  }
  return unnamedOfFrame;
}

/**
 * What every SSE stream of one app shares (one object per app, so a stream keeps a reference, not closures): the
 * heartbeat, the metrics that count streams, and the logger of the `event stream ended` line.
 */
interface SseStreams {
  heartbeat: StreamHeartbeat;
  metrics: MetricsRecorder;
  /** Marked request-bound: the line carries the stream's own `reqId`, never the ambient request's. */
  log: FastifyBaseLogger;
}

/**
 * Writes one SSE response's subscription until it ends or the client leaves: the instance heartbeat's
 * {@link OpenStream} and the writer in one object, so an open stream keeps this, its response and its subscription
 * (not the request, the reply or a promise; issue 24: memory per stream). Push mode: a live event with nothing
 * queued before it is written at once as the event's shared frame bytes ({@link SseWriter.offer}); when events are
 * queued (the replay's catch-up, a response that was not drained), everything readable is written in one `write`
 * (frames are built once per event and shared by all streams); while the response is not drained nothing more is
 * written and events wait in the subscription's queue, whose limit ends a consumer that stops reading (`overflow`:
 * the connection is dropped). The instance heartbeat writes comments and
 * re-checks the key. When the stream ends (once), the heartbeat forgets it, `switchboard_open_streams` goes down,
 * `switchboard_streams_ended_total{transport="sse", reason}` goes up and the `event stream ended` line is written
 * (info: `reqId`, `reason`, `durationMs` since the stream was established).
 */
class SseWriter implements OpenStream, LiveSink {
  #scheduled = false;
  #finished = false;
  /** When the stream was established, in whole ms of `performance.now()` (a small integer, kept unboxed). */
  readonly #openedAt = Math.round(performance.now());

  constructor(
    private readonly streams: SseStreams,
    readonly res: ServerResponse,
    readonly sub: EventSubscription,
    readonly keyId: string,
    readonly expiresAt: Date | undefined,
    private readonly unnamed: boolean,
    private readonly reqId: string,
  ) {
    streams.metrics.streamOpened('sse');
    streams.heartbeat.add(this);
    res.on('close', this.#onGone);
    res.on('drain', this.#schedule);
    sub.setReadableListener(this.#schedule);
    sub.setLiveSink(this);
    this.#schedule();
  }

  /**
   * The subscription's fast path ({@link LiveSink}): a live event with nothing queued before it is written in the
   * fan-out's call as the event's one shared frame Buffer, one `write` per stream (no queue entry, microtask or
   * string per stream: issue 24, CPU per delivery). Declined while the response is not drained (the event then
   * waits in the subscription's queue, whose limit drops a consumer that stops reading) or once the stream ended.
   */
  offer(event: StoredEvent): boolean {
    const res = this.res;
    if (this.#finished || needsDrain(res)) return false;
    res.write(this.unnamed ? unnamedFrameBytes(event) : sseFrameBytes(event));
    return true;
  }

  readonly #onGone = (): void => {
    this.sub.end('closed');
    this.#finish();
  };

  /** The subscription's readable listener and the response's `drain` listener. */
  readonly #schedule = (): void => {
    // A consumer past the queue limit may not read at all: drop the connection rather than buffer for it.
    if (this.sub.endReason === 'overflow' && !this.res.destroyed) this.res.destroy();
    if (this.#scheduled || this.#finished) return;
    this.#scheduled = true;
    queueMicrotask(this.#flush);
  };

  readonly #flush = (): void => {
    this.#scheduled = false;
    if (this.#finished) return;
    const { res, sub } = this;
    let out = '';
    for (;;) {
      if (needsDrain(res)) break;
      const next = sub.read();
      if (next === undefined) break;
      if (next.done) {
        if (out) res.write(out);
        this.#finish();
        return;
      }
      out += this.unnamed ? unnamedFrames(formatSse(next.value)) : formatSse(next.value);
      if (out.length >= 65_536) {
        res.write(out);
        out = '';
      }
    }
    if (out) res.write(out);
  };

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    const { streams, res } = this;
    streams.heartbeat.remove(this);
    res.off('close', this.#onGone);
    res.off('drain', this.#schedule);
    if (!res.destroyed) res.end();
    const reason = this.sub.endReason ?? 'closed';
    streams.metrics.streamEnded('sse', reason);
    const durationMs = Math.round(performance.now()) - this.#openedAt;
    streams.log.info({ reqId: this.reqId, reason, durationMs }, 'event stream ended');
  }
}

const streamQuery = z.object({
  token: z
    .string()
    .optional()
    .describe(
      'A stream token (POST /api/events/tokens; recommended for browsers) or the API key (spec 5.2); `Authorization: Bearer` works too.',
    ),
  channels: z
    .string()
    .optional()
    .describe('Comma-separated channel names (GET /api/events/catalog); every channel when omitted.'),
  lastEventId: z
    .string()
    .max(100)
    .optional()
    .describe('Resume after this id, for clients that cannot send the `Last-Event-ID` header (the header wins).'),
  unnamed: z
    .enum(['1', 'true', '0', 'false'])
    .optional()
    .describe(
      'With 1/true, messages have no `event:` line so a browser EventSource `onmessage` sees them all; the type ' +
        'is `eventType` in the data.',
    ),
});

// The history entry is the domain's declaration of an event (event.service.ts).
const historyEvent = historyEventShape;

/**
 * REST routes of the events area: ingest (POST /api/events), the SSE stream (GET /api/events, spec 4.7), the
 * history list (GET /api/events/history) and the catalog (GET /api/events/catalog).
 */
export async function eventsRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  // The one heartbeat timer of this app's SSE responses (REST state, not the domain's: it lives with the routes).
  const heartbeat = new StreamHeartbeat({
    intervalMs: ctx.config.EVENT_STREAM_HEARTBEAT_MS,
    clock: ctx.clock,
    auth: ctx.auth,
  });
  app.addHook('onClose', async () => heartbeat.stop());
  const streams: SseStreams = {
    heartbeat,
    metrics: ctx.metrics,
    log: markRequestBound(ctx.log.child({}) as FastifyBaseLogger),
  };
  // End streams before Fastify waits for open connections, so shutdown is not held up by SSE clients.
  app.addHook('preClose', async () => {
    endAllStreams(ctx);
    endAllChangeFeeds(ctx);
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
      request.otelSpan?.setAttribute(EVENT_ID_ATTRIBUTE, event.id);
      return reply
        .status(202)
        .send({ id: event.id, channel: event.channel, eventType: event.eventType, timestamp: event.timestamp });
    },
  );

  r.get(
    '/api/events',
    {
      config: { allowQueryToken: true, allowStreamToken: true },
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
      // The header wins over the query parameter; the merged input is parsed here (the door), as a body would be.
      const input = parseInput(eventStreamInput, { channels: request.query.channels, lastEventId });
      // Over HTTP/2 the streams of one connection form one fan-out group (BusScope.group): their frames leave together.
      const group = (request.raw as { stream?: { session?: object } }).stream?.session;
      const sub = await openEventStream(ctx, actorOf(request), input, { sse: true, group });
      reply.hijack();
      const res = reply.raw;
      // Hijacked, so Fastify no longer writes the headers its hooks set on `reply` (CORS's Access-Control-*,
      // x-request-id…): they are carried over here, or a browser EventSource on another origin is blocked.
      res.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string | string[]>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        // HTTP/2 forbids connection-specific headers (RFC 9113 8.2.2); its connections persist anyway.
        ...(request.raw.httpVersionMajor === 1 ? { connection: 'keep-alive' } : {}),
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
      });
      // `retry` makes EventSource clients reconnect after 1 s; the comment flushes the headers at once.
      const unnamed = request.query.unnamed === '1' || request.query.unnamed === 'true';
      const preamble = sub.takePreamble();
      res.write(`retry: 1000\n: connected\n\n${unnamed ? unnamedFrames(preamble) : preamble}`);
      const actor = actorOf(request);
      // The opening is the HTTP request (metrics, request log line, span: status 200 now); the stream's life is the
      // writer's to account for. Fastify keeps neither the request nor the reply from here on.
      hijackedStreamEstablished(request, reply, ctx.metrics, '/api/events');
      // Not awaited: the handler's frame (request, reply, input) is not kept for the life of the stream; the reply
      // is hijacked, so Fastify does nothing with the handler's result.
      new SseWriter(streams, res, sub, actor.keyId, actor.expiresAt, unnamed, request.id);
    },
  );

  r.post(
    '/api/events/tokens',
    {
      schema: {
        operationId: 'createStreamToken',
        errors: ['FORBIDDEN'],
        tags: ['events'],
        summary:
          'Trade the API key for a short-lived stream token (scope events:read, STREAM_TOKEN_TTL_SECONDS, default ' +
          '5 min) to pass as `?token=` to GET /api/events or the GraphQL stream endpoints instead of the API key. ' +
          'It opens streams of this account only; open streams end when it expires or its key is revoked (201).',
        response: {
          201: z.object({ token: z.string(), expiresAt: z.string(), scopes: z.array(z.string()) }),
        },
      },
    },
    async (request, reply) => reply.status(201).send(issueStreamToken(ctx, actorOf(request))),
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
