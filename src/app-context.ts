import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { KeyAuthenticator } from './domain/accounts/account.service.js';
import type { AdminTokens } from './domain/accounts/admin.service.js';
import type { CampaignRegistry } from './domain/compliance/registry.port.js';
import type { DnsResolver } from './domain/email/dns.port.js';
import type { MailTransport } from './domain/email/mail-transport.port.js';
import type { ModelProvider } from './domain/email/model.port.js';
import type { ChangeNotices } from './domain/events/change-notices.port.js';
import type { EventBus } from './domain/events/event-bus.port.js';
import type { EventLog } from './domain/events/event-log.js';
import type { EventSubscription } from './domain/events/event-stream.js';
import type { WebhookTransport } from './domain/webhooks/webhook-transport.port.js';
import type { Clock } from './infra/clock.js';
import type { Database, Db } from './infra/db.js';
import type { JobQueue } from './infra/jobs/job-queue.js';
import type { PrometheusMetrics } from './infra/metrics/prometheus.js';
import type { WorkerSet } from './infra/workers.js';
import type { StreamHeartbeat } from './rest/stream-heartbeat.js';

/**
 * What every domain function receives: configuration, the database, the clock, the log, the event log/bus, and
 * every adapter (port implementation) the areas use, and the per-app state of long-lived connections (open
 * streams and feeds, the SSE heartbeat). Built once per app in src/app.ts; the fields are not reassigned after
 * that (the sets change as connections open and close). There is no module-level per-app state. (Passed explicitly rather than as module singletons so
 * one process can run several apps, e.g. the restart and two-instance tests.)
 */
export interface AppContext {
  config: Config;
  database: Database;
  db: Db;
  clock: Clock;
  log: Logger;
  bus: EventBus;
  events: EventLog;
  /** After-commit change notices for typed GraphQL subscriptions (RedisPubSub or in-process PubSub; src/infra/pubsub). */
  notices: ChangeNotices;
  workers: WorkerSet;
  /** Verifies API keys (with a short cache). */
  auth: KeyAuthenticator;
  /** Tokens that open the operator surface /admin/* (ADMIN_TOKEN and the per-start local token). */
  admin: AdminTokens;
  /** 32-byte AES-256-GCM key for secrets at rest (SECRETS_KEY, or DATA_DIR/secrets.key; src/infra/secrets.ts). */
  secretsKey: Buffer;
  /** Fingerprint of `secretsKey` (which key encrypted a stored secret; src/infra/secrets.ts `secretsKeyId`). */
  secretsKeyId: string;
  /** The durable job queue: every kind of background work is registered here (src/infra/jobs; docs/jobs.md). */
  jobs: JobQueue;
  /** The webhook HTTP client (src/infra/webhook-http): keep-alive pools per origin, SSRF guard at connect time. */
  webhookTransport: WebhookTransport;
  /** The campaign registry adapter (TCR port; the sandbox simulator by default). */
  registry: CampaignRegistry;
  /** The mail port: compose, parse, relay (nodemailer + mailparser). */
  mail: MailTransport;
  /** Prometheus metrics (GET /metrics); domain code counts through its MetricsRecorder methods. */
  metrics: PrometheusMetrics;
  /** DNS lookups of the email area (mail authentication, domain checks): src/infra/dns/resolver.ts. */
  dns: DnsResolver;
  /** The model port agents answer with. */
  model: ModelProvider;
  /**
   * Every open event stream of this app (SSE `GET /api/events` and the GraphQL `events` subscription): `trackStream`
   * adds one, it leaves when it ends, and shutdown ends all with `shutdown` (`endAllStreams`, src/domain/events/event-stream.ts).
   */
  openStreams: Set<EventSubscription>;
  /**
   * The shutdown callbacks of every open change feed (typed GraphQL subscriptions and webhook delivery-attempt
   * feeds, src/domain/events/change-feed.ts); shutdown calls them all (`endAllChangeFeeds`) so feeds end quietly.
   */
  openFeeds: Set<() => void>;
  /**
   * Where the SMTP listeners are bound once the app listens (`submissionPort`: the implicit-TLS submission
   * listener; undefined before listen or when disabled); identities report it as `smtpPort` (issue 20 section 3).
   */
  smtpEndpoints: { submissionPort: number | undefined };
  /** The one heartbeat timer of this app's SSE responses, which also re-checks their keys (src/rest/stream-heartbeat.ts). */
  streamHeartbeat: StreamHeartbeat;
}
