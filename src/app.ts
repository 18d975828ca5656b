import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { AppContext } from './app-context.js';
import type { Config } from './config.js';
import { KeyAuthenticator } from './domain/accounts/account.service.js';
import { AdminTokens } from './domain/accounts/admin.service.js';
import { setupCompliance } from './domain/compliance/compliance.module.js';
import type { CampaignRegistry } from './domain/compliance/registry.port.js';
import { setupEmail } from './domain/email/email.module.js';
import type { ModelProvider } from './domain/email/model.port.js';
import { SearchIndexSignal } from './domain/email/search-index-signal.js';
import { newEmailCaches } from './domain/email/send-caches.js';
import { EventLog, type StoredEvent } from './domain/events/event-log.js';
import { setupEvents } from './domain/events/events.module.js';
import { MAX_IN_FLIGHT } from './domain/webhooks/webhook.dispatcher.js';
import { setupWebhooks } from './domain/webhooks/webhooks.module.js';
import { createHttpServer, loadHttpTls } from './http/server.js';
import { localUrl, removeAdminFile, writeAdminFile } from './infra/admin-file.js';
import type { AreaModule } from './infra/area-module.js';
import { InProcessEventBus } from './infra/bus/memory-bus.js';
import { OrderedEventBus } from './infra/bus/ordered-bus.js';
import { type Clock, systemClock } from './infra/clock.js';
import { openDatabase } from './infra/db.js';
import { createDnsResolver, parseDnsServers } from './infra/dns/resolver.js';
import { JobQueue } from './infra/jobs/job-queue.js';
import { createLogger } from './infra/logger.js';
import { NodemailerTransport } from './infra/mail/nodemailer-transport.js';
import { measuredModel, PrometheusMetrics } from './infra/metrics/prometheus.js';
import { migrate } from './infra/migrate.js';
import { SandboxModel } from './infra/model/sandbox.js';
import { tracedModel } from './infra/model/traced.js';
import { PubSubChangeNotices } from './infra/pubsub/change-notices.js';
import { SandboxRegistry } from './infra/registry/sandbox-registry.js';
import { TcrClient } from './infra/registry/tcr/tcr-client.js';
import { TcrRegistry } from './infra/registry/tcr/tcr-registry.js';
import { loadSecretsKey, secretsKeyId } from './infra/secrets.js';
import { listenError, waitForDatabase } from './infra/startup.js';
import { fingerprintOf, loadSmtpCertificate, type SmtpCertificate } from './infra/tls/smtp-certificate.js';
import { startTracing, tracingEnabled } from './infra/tracing.js';
import { UndiciWebhookTransport } from './infra/webhook-http/http-transport.js';
import { WorkerSet } from './infra/workers.js';
import { idempotencyPruner } from './rest/idempotency.js';
import { type SmtpListener, startSmtpListener } from './smtp/listener.js';
import { startSubmissionListener } from './smtp/submission.js';

/** A built, not yet listening, Switchboard. */
export interface App {
  ctx: AppContext;
  http: FastifyInstance;
  /** Starts listening on `config.HOST:config.PORT`, the SMTP listener and the background workers. @returns the base URL. */
  listen(): Promise<string>;
  /** The port the inbound SMTP listener is bound to once listening (SMTP_PORT 0 picks one); undefined when disabled. */
  smtpPort(): number | undefined;
  /** The port of the SMTP submission listener (implicit TLS) once listening; undefined when disabled. */
  smtpSubmissionPort(): number | undefined;
  /** The certificate both SMTP listeners serve (undefined when both are disabled). */
  smtpCertificate(): SmtpCertificate | undefined;
  /** Stops accepting requests, ends streams, stops workers, closes the bus and the database. Idempotent. */
  close(): Promise<void>;
}

/** Overrides for tests and embedding. */
export interface BuildOptions {
  clock?: Clock;
  logger?: Logger;
  /**
   * Start the background workers on listen (default true; tests with a manual clock call `ctx.workers.drain()`).
   * `WORKERS=false` in the configuration keeps them off whatever this says.
   */
  startWorkers?: boolean;
  /**
   * Test-only fault injection: events for which this returns true are never published on the bus (a lost
   * publish), so tests can prove live delivery recovers them from the log. Leave unset otherwise.
   */
  dropPublish?: (event: StoredEvent) => boolean;
  /** Test-only: the Prisma client emits a `query` event per SQL statement (`ctx.db.$on('query', …)`). */
  logQueries?: boolean;
}

/**
 * The composition root: builds the app without listening. Opens the database (PGlite or PostgreSQL) and applies
 * migrations, chooses each adapter from the configuration (event bus, campaign registry, mail transport, model
 * provider), builds the {@link AppContext}, sets up the areas, and builds the front doors (HTTP host with REST and
 * GraphQL; the SMTP listener starts on listen). Tests call this and `listen()` on port 0.
 * @throws when the database cannot be opened, a migration fails, the SMTP certificate cannot be loaded, or an
 * HTTP_TLS_CERT/HTTP_TLS_KEY file cannot be read.
 */
export async function buildApp(config: Config, opts: BuildOptions = {}): Promise<App> {
  const log = opts.logger ?? createLogger(config.LOG_LEVEL, undefined, config.LOG_FORMAT);
  const clock = opts.clock ?? systemClock;
  const secretsKey = loadSecretsKey(config);
  // The HTTP port's certificate files (HTTP_TLS_CERT/KEY), read before anything opens: a bad one stops the start.
  const httpTls = loadHttpTls(config);
  // Before anything makes a span: the HTTP host, the bus and the webhook transport decide on tracing when built.
  const stopTracing = await startTracing(config.OTEL_EXPORTER_OTLP_ENDPOINT);
  const database = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    logQueries: opts.logQueries,
  });
  // The certificate of the SMTP listeners: a bad SMTP_TLS_CERT/SMTP_TLS_KEY stops the start here, before anything listens.
  let certificate: SmtpCertificate | undefined;
  try {
    if (config.DATABASE_URL) {
      await waitForDatabase(database, config.DATABASE_URL, log, config.DATABASE_CONNECT_TIMEOUT_SECONDS * 1000);
    }
    const report = await migrate(database);
    if (report.applied.length > 0) log.info({ applied: report.applied }, 'migrations applied');
    if (config.SMTP_PORT >= 0 || config.SMTP_SUBMISSION_PORT >= 0) {
      certificate = await loadSmtpCertificate(config, database, secretsKey, log);
    }
  } catch (err) {
    await database.close();
    throw err;
  }
  // The raw bus (in-process or Redis) behind the per-instance ordered, gap-filling layer subscribers see.
  // ioredis and graphql-redis-subscriptions load only with REDIS_URL (docs/operations.md "Start-up").
  const redis = config.REDIS_URL
    ? {
        bus: await import('./infra/bus/redis-bus.js'),
        notices: await import('./infra/pubsub/redis-change-notices.js'),
      }
    : undefined;
  const bus = new OrderedEventBus(
    redis ? await redis.bus.createEventBus(config, log) : new InProcessEventBus(),
    database.prisma,
    log,
    {
      tailCheckMs: config.EVENT_TAIL_CHECK_MS,
      dropPublish: opts.dropPublish,
      statement: database.statement,
    },
  );
  try {
    await bus.start();
  } catch (err) {
    await bus.close();
    await database.close();
    throw err;
  }
  const notices = new PubSubChangeNotices(
    config,
    log,
    redis && config.REDIS_URL ? redis.notices.redisNoticeEngine(config.REDIS_URL, log) : undefined,
  );
  const workers = new WorkerSet(log, config.WORKER_POLL_MS);
  const metrics = new PrometheusMetrics(database);
  const auth = new KeyAuthenticator(database.prisma);
  const ctx: AppContext = {
    config,
    database,
    db: database.prisma,
    clock,
    log,
    bus,
    notices,
    events: new EventLog(database.prisma, bus, clock, notices, database.preparedWrite),
    workers,
    auth,
    admin: new AdminTokens(config.ADMIN_TOKEN, config.METRICS_TOKEN),
    secretsKey,
    secretsKeyId: secretsKeyId(secretsKey),
    jobs: new JobQueue({ db: database.prisma, clock, log, database, workers }),
    webhookTransport: new UndiciWebhookTransport({
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      // The dispatcher's limits (per instance, account and webhook) bound what is in flight to one origin; a tighter
      // pool would queue attempts inside the client, where their timeout runs without anything being sent.
      connectionsPerOrigin: MAX_IN_FLIGHT,
    }),
    // The sandbox registry needs the finished context (its worker applies decisions through the domain).
    registry: undefined as unknown as CampaignRegistry,
    mail: new NodemailerTransport(config.SMTP_RELAY_URL),
    dns: createDnsResolver({
      servers: parseDnsServers(config.DNS_SERVERS),
      timeoutMs: config.DNS_TIMEOUT_MS,
      cacheEntries: config.DNS_CACHE_ENTRIES,
      cacheTtlS: config.DNS_CACHE_TTL_S,
    }),
    // Agents answer through LLM_BASE_URL when set, else through the offline sandbox model (docs/operations.md).
    model: measuredModel(
      // The AI SDK is loaded only when a real endpoint is configured (docs/operations.md "Start-up").
      traceModel(
        config.LLM_BASE_URL
          ? new (await import('./infra/model/openai-compatible.js')).OpenAICompatibleModel(
              config.LLM_BASE_URL,
              config.LLM_API_KEY,
            )
          : new SandboxModel(),
      ),
      metrics,
    ),
    metrics,
    openStreams: new Set(),
    openFeeds: new Set(),
    smtpEndpoints: { submissionPort: undefined },
    emailCaches: newEmailCaches(),
    searchIndex: new SearchIndexSignal(),
  };
  ctx.events.addHook({
    committed: (events) => {
      for (const e of events) metrics.eventIngested(e.channel);
    },
  });
  metrics.measureQueues(async () => {
    const now = clock.now();
    const states = await Promise.all(ctx.jobs.runners().map((r) => r.state(now)));
    return states.map((q) => ({
      kind: q.kind,
      depth: q.depth,
      due: q.due,
      ageSeconds: q.oldestDue ? Math.max(0, (now.getTime() - q.oldestDue.getTime()) / 1000) : 0,
    }));
  });
  // REGISTRY chooses the adapter: the sandbox simulator (default) or TCR's CSP API (config.ts guarantees its settings).
  const registry =
    config.REGISTRY === 'tcr'
      ? new TcrRegistry(
          ctx,
          new TcrClient({
            baseUrl: config.TCR_API_URL ?? '',
            apiKey: config.TCR_API_KEY ?? '',
            apiSecret: config.TCR_API_SECRET ?? '',
            timeoutMs: config.TCR_TIMEOUT_MS,
          }),
        )
      : new SandboxRegistry(ctx);
  ctx.registry = registry;
  ctx.jobs.register(registry.jobKind());
  workers.add(idempotencyPruner(ctx));
  const modules: AreaModule[] = [
    await setupCompliance(ctx),
    await setupEvents(ctx),
    await setupWebhooks(ctx),
    await setupEmail(ctx),
  ];
  const http = await createHttpServer(ctx, httpTls);

  // The local CLI finds this instance through DATA_DIR/admin.json (docs/operations.md "CLI").
  const writesAdminFile = !config.DATA_DIR.startsWith('memory://');
  let smtp: SmtpListener | undefined;
  let submission: SmtpListener | undefined;
  let closed: Promise<void> | undefined;
  return {
    ctx,
    http,
    async listen() {
      const address = await http.listen({ host: config.HOST, port: config.PORT }).catch((err) => {
        throw listenError(err, 'PORT', config.HOST, config.PORT);
      });
      for (const m of modules) await m.start?.();
      if (config.SMTP_PORT >= 0 && certificate) {
        smtp = await startSmtpListener(ctx, config.SMTP_PORT, certificate).catch((err) => {
          throw listenError(err, 'SMTP_PORT', config.HOST, config.SMTP_PORT);
        });
        log.info({ port: smtp.port }, `inbound SMTP listening on ${config.HOST}:${smtp.port}`);
      }
      if (config.SMTP_SUBMISSION_PORT >= 0 && certificate) {
        submission = await startSubmissionListener(ctx, config.SMTP_SUBMISSION_PORT, certificate).catch((err) => {
          throw listenError(err, 'SMTP_SUBMISSION_PORT', config.HOST, config.SMTP_SUBMISSION_PORT);
        });
        ctx.smtpEndpoints.submissionPort = submission.port;
        log.info(
          { port: submission.port },
          `SMTP submission (implicit TLS) listening on ${config.HOST}:${submission.port}`,
        );
      }
      if (opts.startWorkers !== false && config.WORKERS) {
        await ctx.jobs.start();
        workers.start();
      } else if (!config.WORKERS) {
        log.info('background workers off (WORKERS=false): work is enqueued here and run by instances with workers on');
      }
      if (writesAdminFile) {
        const port = (http.server.address() as { port: number }).port;
        try {
          writeAdminFile(config.DATA_DIR, {
            url: localUrl(config.HOST, port, httpTls !== undefined),
            token: ctx.admin.localToken,
            pid: process.pid,
            // The CLI pins this certificate on its loopback connection (src/cli.ts).
            ...(httpTls ? { certSha256: fingerprintOf(httpTls.cert) } : {}),
          });
        } catch (err) {
          // The local CLI then needs SWITCHBOARD_URL + ADMIN_TOKEN; the service itself is unaffected.
          log.warn({ err: (err as Error).message, dataDir: config.DATA_DIR }, 'could not write the local admin file');
        }
      }
      return address;
    },
    smtpPort: () => smtp?.port,
    smtpSubmissionPort: () => submission?.port,
    smtpCertificate: () => certificate,
    close() {
      closed ??= (async () => {
        if (writesAdminFile) removeAdminFile(config.DATA_DIR, ctx.admin.localToken);
        await ctx.jobs.stop();
        await workers.stop();
        await http.close();
        await smtp?.close();
        await submission?.close();
        for (const m of [...modules].reverse()) await m.stop?.();
        ctx.mail.close();
        await notices.close();
        await bus.close();
        await database.close();
        await stopTracing?.().catch(() => {});
      })();
      return closed;
    },
  };
}

/** `model` in spans while tracing is on (src/infra/model/traced.ts), else as it is. */
function traceModel(model: ModelProvider): ModelProvider {
  return tracingEnabled() ? tracedModel(model) : model;
}
