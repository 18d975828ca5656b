import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { KeyAuthenticator } from '../accounts/account.service.js';
import type { AdminTokens } from '../accounts/admin.service.js';
import type { CampaignRegistry } from '../compliance/registry.port.js';
import type { DnsResolver } from '../email/dns.port.js';
import type { MailTransport } from '../email/mail-transport.port.js';
import type { ModelProvider } from '../email/model.port.js';
import type { SearchIndexSignal } from '../email/search-index-signal.js';
import type { EmailCaches } from '../email/send-caches.js';
import type { ChangeNotices } from '../events/change-notices.port.js';
import type { OpenStream } from '../events/event.js';
import type { EventBus } from '../events/event-bus.port.js';
import type { EventLog } from '../events/event-log.js';
import type { MetricsRecorder } from '../metrics.port.js';
import type { WebhookTransport } from '../webhooks/webhook-transport.port.js';
import type { Clock } from './clock.js';
import type { Database, Db } from './db.js';
import type { Jobs } from './jobs.js';
import type { WorkerRegistry } from './workers.js';

/**
 * What every domain function receives: configuration, the database, the clock, the log, the event log and bus, and
 * every port the areas use (registry, mail, DNS, model, webhook HTTP, metrics, jobs, workers), plus the per-app sets
 * of long-lived connections (open streams and feeds). Only interfaces: the concrete classes live in src/infra and
 * are wired in src/app.ts, whose `AppContext` (src/app-context.ts) narrows some of these fields to them. No HTTP
 * state lives here. Passed explicitly rather than as module singletons so one process can run several apps (the
 * restart and two-instance tests).
 */
export interface DomainContext {
  config: Config;
  /** The open database (Prisma client, raw reads below Prisma, LISTEN). */
  database: Database;
  /** The Prisma client of `database` (the same object as `database.prisma`). */
  db: Db;
  clock: Clock;
  log: Logger;
  bus: EventBus;
  events: EventLog;
  /** After-commit change notices for typed GraphQL subscriptions (RedisPubSub or in-process PubSub; src/infra/pubsub). */
  notices: ChangeNotices;
  /** Where areas register background workers. */
  workers: WorkerRegistry;
  /** Verifies API keys (with a short cache). */
  auth: KeyAuthenticator;
  /** Tokens that open the operator surface /admin/* (ADMIN_TOKEN and the per-start local token). */
  admin: AdminTokens;
  /** 32-byte AES-256-GCM key for secrets at rest (SECRETS_KEY, or DATA_DIR/secrets.key; src/domain/kernel/secrets.ts). */
  secretsKey: Buffer;
  /** Fingerprint of `secretsKey` (which key encrypted a stored secret; `secretsKeyId`). */
  secretsKeyId: string;
  /** The durable job queue: every kind of background work is registered here (docs/jobs.md). */
  jobs: Jobs;
  /** The webhook HTTP client: keep-alive pools per origin, SSRF guard at connect time. */
  webhookTransport: WebhookTransport;
  /** The campaign registry adapter (TCR port; the sandbox simulator by default). */
  registry: CampaignRegistry;
  /** The mail port: compose, parse, relay (nodemailer + mailparser). */
  mail: MailTransport;
  /** What domain code counts (GET /metrics). */
  metrics: MetricsRecorder;
  /** DNS lookups of the email area (mail authentication, domain checks). */
  dns: DnsResolver;
  /** The model port agents answer with. */
  model: ModelProvider;
  /**
   * Every open event stream of this app (SSE `GET /api/events` and the GraphQL `events` subscription): `trackStream`
   * adds one, it leaves when it ends, and shutdown ends all (`endAllStreams`, src/domain/events/event-stream.ts).
   */
  openStreams: Set<OpenStream>;
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
  /** The email send path's caches of this app: identities, custom-domain verdicts, DKIM signers (send-caches.ts). */
  emailCaches: EmailCaches;
  /** This app's "mail was stored" signal to its search indexer (src/domain/email/search-index.ts). */
  searchIndex: SearchIndexSignal;
}
