import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { type DestinationStream, type Logger, pino } from 'pino';
import type { AppContext } from './app-context.js';
import type { Config } from './config.js';
import { KeyAuthenticator } from './domain/accounts/account.service.js';
import { setupCompliance } from './domain/compliance/compliance.module.js';
import { setupEmail } from './domain/email/email.module.js';
import { ValidationError } from './domain/errors.js';
import { createEventBus } from './domain/events/event-bus.js';
import { EventLog, type StoredEvent } from './domain/events/event-log.js';
import { setupEvents } from './domain/events/events.module.js';
import { OrderedEventBus } from './domain/events/ordered-bus.js';
import { setupWebhooks } from './domain/webhooks/webhooks.module.js';
import { createGraphQLServer } from './graphql/yoga.js';
import type { AreaModule } from './infra/area-module.js';
import { type Clock, systemClock } from './infra/clock.js';
import { openDatabase } from './infra/db.js';
import { migrate } from './infra/migrate.js';
import { loadSecretsKey } from './infra/secrets.js';
import { WorkerSet } from './infra/workers.js';
import { installAuth } from './rest/auth.js';
import { installErrorHandling } from './rest/errors.js';
import { idempotencyPruner, installIdempotency } from './rest/idempotency.js';
import { registerOpenApi } from './rest/openapi.js';
import { complianceRoutes } from './rest/routes/compliance.routes.js';
import { emailRoutes } from './rest/routes/email.routes.js';
import { eventsRoutes } from './rest/routes/events.routes.js';
import { systemRoutes } from './rest/routes/system.routes.js';
import { webhooksRoutes } from './rest/routes/webhooks.routes.js';
import { jsonSerializerCompiler, zodValidatorCompiler } from './rest/zod.js';

/** A built, not yet listening, Switchboard. */
export interface App {
  ctx: AppContext;
  http: FastifyInstance;
  /** Starts listening on `config.HOST:config.PORT` and the background workers. @returns the base URL. */
  listen(): Promise<string>;
  /** Stops accepting requests, ends streams, stops workers, closes the bus and the database. Idempotent. */
  close(): Promise<void>;
}

/** Overrides for tests and embedding. */
export interface BuildOptions {
  clock?: Clock;
  logger?: Logger;
  /** Start the background workers on listen (default true; tests with a manual clock call `ctx.workers.drain()`). */
  startWorkers?: boolean;
  /**
   * Test-only fault injection: events for which this returns true are never published on the bus (a lost
   * publish), so tests can prove live delivery recovers them from the log. Leave unset otherwise.
   */
  dropPublish?: (event: StoredEvent) => boolean;
}

/** The request a piece of async work belongs to, so log lines from domain code carry its id. */
const requestScope = new AsyncLocalStorage<{ reqId: string }>();

/** Dotted paths of every string (or key) in a parsed JSON body that contains U+0000, at most 20. */
function fieldsWithNul(value: unknown, path: string[] = [], out: string[] = []): string[] {
  if (out.length >= 20) return out;
  if (typeof value === 'string') {
    if (value.includes('\u0000')) out.push(path.join('.') || '(body)');
  } else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) fieldsWithNul(v, [...path, String(i)], out);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) out.push([...path, k.replaceAll('\u0000', '\\u0000')].join('.'));
      else fieldsWithNul(v, [...path, k], out);
    }
  }
  return out;
}

/**
 * The service's logger: JSON lines (pino) at `level`, secrets redacted, and the id of the request the line belongs
 * to (`reqId`) on every line written while serving it, domain code's included. `destination` defaults to stdout.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      // Domain code logs through ctx.log; during a request its lines carry the request id too.
      mixin: () => {
        const store = requestScope.getStore();
        return store ? { reqId: store.reqId } : {};
      },
      redact: {
        paths: ['req.headers.authorization', 'apiKey', 'secret', '*.secret', '*.apiKey'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/** Logger serialisers that never print secrets: the URL loses its `token` query value, headers are not logged. */
function requestSerializer(req: { method: string; url: string; id: string }) {
  return { method: req.method, url: req.url.replace(/([?&]token=)[^&]*/g, '$1[redacted]'), id: req.id };
}

/**
 * Builds the app without listening: opens the database (PGlite or PostgreSQL), applies migrations, wires the event
 * log, the workers, REST routes and GraphQL. Tests call this and `listen()` on port 0.
 * @throws when the database cannot be opened or a migration fails.
 */
export async function buildApp(config: Config, opts: BuildOptions = {}): Promise<App> {
  const log = opts.logger ?? createLogger(config.LOG_LEVEL);
  const clock = opts.clock ?? systemClock;
  const secretsKey = loadSecretsKey(config);
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  try {
    const report = await migrate(database);
    if (report.applied.length > 0) log.info({ applied: report.applied }, 'migrations applied');
  } catch (err) {
    await database.close();
    throw err;
  }
  // The raw bus (in-process or Redis) behind the per-instance ordered, gap-filling layer subscribers see.
  const bus = new OrderedEventBus(await createEventBus(config, log), database.prisma, log, {
    tailCheckMs: config.EVENT_TAIL_CHECK_MS,
    dropPublish: opts.dropPublish,
  });
  try {
    await bus.start();
  } catch (err) {
    await bus.close();
    await database.close();
    throw err;
  }
  const workers = new WorkerSet(log, config.WORKER_POLL_MS);
  const ctx: AppContext = {
    config,
    database,
    db: database.prisma,
    clock,
    log,
    bus,
    events: new EventLog(database.prisma, bus, clock),
    workers,
    auth: new KeyAuthenticator(database.prisma),
    secretsKey,
  };
  workers.add(idempotencyPruner(ctx));
  const modules: AreaModule[] = [
    await setupCompliance(ctx),
    await setupEvents(ctx),
    await setupWebhooks(ctx),
    await setupEmail(ctx),
  ];

  const http = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
  });
  http.setChildLoggerFactory((logger, bindings, childOpts) =>
    logger.child(bindings, { ...childOpts, serializers: { req: requestSerializer } }),
  );
  http.addHook('onRequest', (request, _reply, done) => {
    requestScope.run({ reqId: request.id }, done);
  });
  http.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // An empty body with `Content-Type: application/json` (curl -H on a DELETE, a body-less POST such as revet) is
  // "no body", not malformed JSON; anything else goes through Fastify's own (prototype-poisoning safe) parser.
  const defaultJsonParser = http.getDefaultJsonParser('error', 'error');
  http.removeContentTypeParser('application/json');
  http.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    return defaultJsonParser(request, body as string, (err, parsed) => {
      if (err) return done(err);
      // PostgreSQL text and jsonb cannot hold U+0000: refuse it by field instead of failing later with a 500.
      const fields = fieldsWithNul(parsed);
      if (fields.length > 0) {
        return done(
          new ValidationError(
            fields.map((field) => ({ code: 'INVALID_CHARACTER', field, message: 'must not contain U+0000 (NUL)' })),
          ),
        );
      }
      return done(null, parsed);
    });
  });
  http.setValidatorCompiler(zodValidatorCompiler);
  http.setSerializerCompiler(jsonSerializerCompiler);
  installErrorHandling(http);
  installAuth(http, ctx);
  installIdempotency(http, ctx);
  await registerOpenApi(http, config);

  await systemRoutes(http, ctx);
  await complianceRoutes(http, ctx);
  await eventsRoutes(http, ctx);
  await webhooksRoutes(http, ctx);
  await emailRoutes(http, ctx);

  const yoga = createGraphQLServer(ctx);
  const yogaHandler = async (req: FastifyRequest, reply: FastifyReply) => {
    const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
    response.headers.forEach((value, key) => {
      reply.header(key, value);
    });
    reply.status(response.status);
    const type = response.headers.get('content-type') ?? '';
    const streaming = type.includes('text/event-stream') || type.includes('multipart/');
    // A stream's connection is not reused: closing it when the stream ends lets shutdown finish at once.
    if (streaming) reply.header('connection', 'close');
    // Plain results go out as a string so hooks (idempotency) see the exact body; streams stay streams.
    reply.send(streaming ? response.body : await response.text());
    return reply;
  };
  http.route({
    url: '/graphql',
    method: ['GET', 'POST', 'OPTIONS'],
    schema: { hide: true },
    handler: yogaHandler,
  });
  http.route({
    url: '/graphql/stream',
    method: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
    schema: { hide: true },
    handler: yogaHandler,
  });

  let closed: Promise<void> | undefined;
  return {
    ctx,
    http,
    async listen() {
      const address = await http.listen({ host: config.HOST, port: config.PORT });
      for (const m of modules) await m.start?.();
      if (opts.startWorkers !== false) workers.start();
      return address;
    },
    close() {
      closed ??= (async () => {
        await workers.stop();
        await http.close();
        for (const m of [...modules].reverse()) await m.stop?.();
        await bus.close();
        await database.close();
      })();
      return closed;
    },
  };
}
