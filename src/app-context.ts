import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { KeyAuthenticator } from './domain/accounts/account.service.js';
import type { AdminTokens } from './domain/accounts/admin.service.js';
import type { CampaignRegistry } from './domain/compliance/registry.port.js';
import type { MailTransport } from './domain/email/mail-transport.port.js';
import type { ModelProvider } from './domain/email/model.port.js';
import type { ChangeNotices } from './domain/events/change-notices.port.js';
import type { EventBus } from './domain/events/event-bus.port.js';
import type { EventLog } from './domain/events/event-log.js';
import type { WebhookTransport } from './domain/webhooks/webhook-transport.port.js';
import type { Clock } from './infra/clock.js';
import type { Database, Db } from './infra/db.js';
import type { JobQueue } from './infra/jobs/job-queue.js';
import type { PrometheusMetrics } from './infra/metrics/prometheus.js';
import type { WorkerSet } from './infra/workers.js';

/**
 * What every domain function receives: configuration, the database, the clock, the log, the event log/bus, and
 * every adapter (port implementation) the areas use.
 * Built once per app in src/app.ts; read-only after that. (Passed explicitly rather than as module singletons so
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
  /** The model port agents answer with. */
  model: ModelProvider;
}
