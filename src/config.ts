import { isIP } from 'node:net';
import { z } from 'zod';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const positiveNumber = z.coerce.number().positive();

/**
 * Every setting the service reads, from environment variables, validated once at start.
 * A bad value stops the start with a message naming each offending variable (see {@link loadConfig}).
 */
export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** Interface to listen on. Default 127.0.0.1 so a fresh machine does not expose its first key to the network. */
  HOST: z.string().min(1).default('127.0.0.1'),
  /** HTTP port (REST, GraphQL, SSE). 0 picks a free port. */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /**
   * PEM certificate (chain) file of the HTTP port; with HTTP_TLS_KEY. Set: PORT serves HTTPS only, offering HTTP/2
   * and HTTP/1.1 by ALPN on the same port (many SSE streams share one connection over HTTP/2). Unset: plain
   * HTTP/1.1, as before. No HTTP/2 without TLS (h2c cannot fall back to HTTP/1.1 on the same port).
   */
  HTTP_TLS_CERT: z.string().min(1).optional(),
  /** PEM private key file of HTTP_TLS_CERT. */
  HTTP_TLS_KEY: z.string().min(1).optional(),
  /** Directory of the embedded database (PGlite) and generated local secrets. `memory://` keeps nothing. */
  DATA_DIR: z.string().min(1).default('./data'),
  /** postgres://… switches from embedded PGlite to PostgreSQL through @prisma/adapter-pg. */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
    .refine((v) => URL.canParse(v), 'is not a valid URL (postgres://user:password@host:5432/database)')
    .optional(),
  /**
   * At start, how long to retry reaching DATABASE_URL before giving up (the database may start together with the
   * service), in seconds; 0 tries once.
   */
  DATABASE_CONNECT_TIMEOUT_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  /** redis://… switches the live event bus from in-process to Redis pub/sub. */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
    .refine((v) => URL.canParse(v), 'is not a valid URL (redis://host:6379)')
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json`: one JSON object per line (pino; for log collectors). `pretty`: coloured, readable lines (pino-pretty). */
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),

  /**
   * Bearer token of the operator surface /admin/* (docs/operations.md). Unset: /admin/* only accepts the local token
   * a running service writes to DATA_DIR/admin.json (mode 0600) for `npm run cli` on the same host.
   */
  ADMIN_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
  /** Bearer token of GET /metrics (Prometheus). Unset: /metrics takes ADMIN_TOKEN, or is open if METRICS_PUBLIC. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Serve GET /metrics without a token (for a scraper on a private network). Default false. */
  METRICS_PUBLIC: bool.default(false),

  /** Requests one API key may make per RATE_LIMIT_WINDOW_MS (answers 429 RATE_LIMITED past it); 0 disables. */
  RATE_LIMIT_MAX: z.coerce.number().int().min(0).max(1_000_000).default(6000),
  /** Window of RATE_LIMIT_MAX, in ms. */
  RATE_LIMIT_WINDOW_MS: z.coerce.number().int().min(1000).max(86_400_000).default(60_000),
  /** Failed authentications (401) one client address may cause per AUTH_FAILURE_WINDOW_MS before 429; 0 disables. */
  AUTH_FAILURE_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(20),
  /** Window of AUTH_FAILURE_LIMIT, in ms. */
  AUTH_FAILURE_WINDOW_MS: z.coerce.number().int().min(1000).max(86_400_000).default(60_000),
  /**
   * Trust X-Forwarded-For from a reverse proxy for the client address (rate limits, logs): `true`, a hop count, or
   * comma-separated proxy addresses/CIDRs (Fastify trustProxy). Default: not trusted.
   */
  TRUST_PROXY: z.string().optional(),
  /** Externally visible base URL, used in links the service prints. Default http://HOST:PORT. */
  PUBLIC_BASE_URL: z.string().url().optional(),
  /** Create an account and print its API key on a first start with no account at all. */
  BOOTSTRAP_ACCOUNT: bool.default(true),
  /** How often background workers (registry simulator, webhook dispatcher) look for due work, in ms. */
  WORKER_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  /**
   * Run the background workers on this instance (default true): the job queue's dispatchers (webhook deliveries,
   * outbound mail, agents, registry tasks) and the pruners. `false` makes an instance that serves the API and enqueues
   * work (events still fan out to webhook deliveries in their transaction) but delivers nothing in the background;
   * another instance on the same database with workers on does that (docs/configuration.md "Instance roles").
   */
  WORKERS: bool.default(true),
  /** Rows the background search indexer computes per statement (src/domain/email/search-index.ts). */
  SEARCH_INDEX_BATCH: z.coerce.number().int().min(1).max(10_000).default(200),
  /**
   * Percent of the time the search indexer runs while this instance is accepting mail (it pauses between batches so
   * that delivery keeps the CPU); 100: no pause.
   */
  SEARCH_INDEX_BUSY_DUTY: z.coerce.number().int().min(1).max(100).default(25),
  /** Once the oldest message waiting for its search vector is older than this (ms), the indexer runs without pause. */
  SEARCH_INDEX_MAX_LAG_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),

  /** Prefix of every Redis channel/key this instance uses, so several deployments (or test runs) can share one Redis. */
  REDIS_KEY_PREFIX: z.string().min(1).default('switchboard:'),
  /** Events older than this many days are pruned, except each account's newest 1000 (spec 8 replay window). */
  EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(30),
  /** Interval of the SSE comment heartbeat (`: heartbeat`) that keeps idle streams open through proxies, in ms. */
  EVENT_STREAM_HEARTBEAT_MS: z.coerce.number().int().min(10).max(300_000).default(15_000),
  /** Live events one stream subscriber may have waiting; past it the subscriber is disconnected (slow consumer). */
  EVENT_STREAM_QUEUE_LIMIT: z.coerce.number().int().min(1).max(100_000).default(1000),
  /** Lifetime of a stream token (POST /api/events/tokens), in seconds: 10 s to 1 h, default 5 minutes. */
  STREAM_TOKEN_TTL_SECONDS: z.coerce.number().int().min(10).max(3600).default(300),
  /** Interval of the live-delivery tail check: a log read for events whose bus publish was lost, in ms. */
  EVENT_TAIL_CHECK_MS: z.coerce.number().int().min(50).max(60_000).default(1000),

  /** Sandbox registry speed: every simulated delay is divided by this factor (e.g. 60 turns minutes into seconds). */
  REGISTRY_TIME_SCALE: positiveNumber.default(1),
  /**
   * Campaign registry adapter: `sandbox` (the built-in simulator, default) or `tcr` (The Campaign Registry's CSP REST
   * API, src/infra/registry/tcr; docs/compliance.md "TCR adapter"). With `tcr`, TCR_API_URL, TCR_API_KEY,
   * TCR_API_SECRET and TCR_WEBHOOK_SECRET are required.
   */
  REGISTRY: z.enum(['sandbox', 'tcr']).default('sandbox'),
  /** Base URL of TCR's CSP API, e.g. https://csp-api.campaignregistry.com/v2 (paths such as /brand/nonBlocking follow it). */
  TCR_API_URL: z.string().url().optional(),
  /** TCR API key: the user name of HTTP basic auth on every CSP API call. */
  TCR_API_KEY: z.string().min(1).optional(),
  /** TCR API secret: the password of HTTP basic auth. Never logged. */
  TCR_API_SECRET: z.string().min(1).optional(),
  /** Shared secret the inbound TCR webhook must send in `X-TCR-Webhook-Secret` (compared in constant time); ≥16 chars. */
  TCR_WEBHOOK_SECRET: z.string().min(16).optional(),
  /** Timeout of one TCR API call, in ms. */
  TCR_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  /** DID warm-up: a number assigned to an approved campaign is `warming` this long before `active`, in ms (issue 14). */
  DID_WARMUP_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(90 * 86_400_000)
    .default(86_400_000),
  /** DID cool-down: a number removed from its campaign is `cooling` this long before `unassigned`, in ms (issue 14). */
  DID_COOLDOWN_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(90 * 86_400_000)
    .default(86_400_000),

  /** Key (32 bytes as 64 hex chars or base64) that encrypts secrets at rest (webhook secrets, stored idempotent responses). Generated into DATA_DIR when absent on the embedded default. */
  SECRETS_KEY: z.string().min(32).optional(),
  /** Allow webhook deliveries to loopback/private/link-local addresses (tests and local development only). */
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  /** Timeout of one webhook delivery attempt, in ms. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),

  /** Domain of identities created without one. */
  EMAIL_DOMAIN: z.string().min(1).default('agents.switchboard.local'),
  /**
   * Domains this service hosts mail for, comma-separated (default: EMAIL_DOMAIN alone; EMAIL_DOMAIN must be among
   * them). Identities can only be created on these; mail to them is delivered locally or refused, never relayed.
   */
  EMAIL_DOMAINS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((d) => d.trim().toLowerCase())
        .filter((d) => d !== ''),
    )
    .pipe(z.array(z.string().regex(/^[a-z0-9.-]+$/, 'must be host names separated by commas')).min(1))
    .optional(),
  /** Inbound SMTP listener port (0 picks a free port; -1 disables the listener). */
  SMTP_PORT: z.coerce.number().int().min(-1).max(65535).default(2525),
  /**
   * Host name of the SMTP service as clients and other servers see it: identities report it as `smtpHost` (2.6),
   * the listeners greet with it (EHLO/banner), the MX record of domains points at it. Unset: identities report
   * `localhost` (reachable from the same machine) and the listeners greet with the machine's host name.
   */
  SMTP_PUBLIC_HOST: z.string().min(1).optional(),
  /** Submission port identities report as `smtpPort` (e.g. 465 behind a port forward). Unset: the listener's own port. */
  SMTP_PUBLIC_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /**
   * SMTP submission listener with implicit TLS (RFC 8314) and AUTH PLAIN/LOGIN. Default 2465 (465 needs root; 2465
   * mirrors SMTP_PORT's 2525); 0 picks a free port; -1 disables it.
   */
  SMTP_SUBMISSION_PORT: z.coerce.number().int().min(-1).max(65535).default(2465),
  /**
   * PEM certificate (chain) of both SMTP listeners (submission TLS, MX STARTTLS); with SMTP_TLS_KEY. Unset: a
   * self-signed certificate is generated once and kept in DATA_DIR (PGlite) or the database (PostgreSQL).
   */
  SMTP_TLS_CERT: z.string().min(1).optional(),
  /** PEM private key file of SMTP_TLS_CERT. */
  SMTP_TLS_KEY: z.string().min(1).optional(),
  /** DKIM selector of newly generated domain keys (RFC 6376 3.1): records are `<selector>._domainkey.<domain>`. */
  DKIM_SELECTOR: z
    .string()
    .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, 'must be one DNS label (a-z, 0-9, inner -)')
    .default('switchboard'),
  /** Outbound relay for mail to addresses outside this service, e.g. smtp://user:pass@relay:587. */
  SMTP_RELAY_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://')
    .optional(),
  /** Largest accepted inbound message, in bytes. */
  SMTP_MAX_MESSAGE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(10 * 1024 * 1024),
  /** Most accepted recipients of one inbound message (RFC 5321 4.5.3.1.8 asks for at least 100). */
  SMTP_MAX_RECIPIENTS: z.coerce.number().int().min(1).max(1000).default(100),
  /**
   * DNS servers for mail authentication (SPF, DKIM, DMARC, ARC) and domain checks: comma-separated `ip[:port]`
   * (`[v6]:port` for IPv6). Unset: the system's resolvers (/etc/resolv.conf).
   */
  DNS_SERVERS: z
    .string()
    .optional()
    .superRefine((v, c) => {
      try {
        parseDnsServers(v);
      } catch (err) {
        c.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
  /** Longest one DNS lookup may take, retries included, in ms; past it the check is a `temperror`. */
  DNS_TIMEOUT_MS: z.coerce.number().int().min(50).max(30_000).default(2000),
  /** Longest a DNS answer is cached, in s (A/AAAA answers for their own TTL when shorter). */
  DNS_CACHE_TTL_S: z.coerce.number().int().min(0).max(86_400).default(60),
  /** Most DNS answers cached (least recently used dropped first). */
  DNS_CACHE_ENTRIES: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  // The SMTP edge (src/smtp/edge.ts, issue 26; docs/email.md "The SMTP edge").
  /** Connections an SMTP listener holds at once, from every address. */
  SMTP_MAX_CLIENTS: z.coerce.number().int().min(1).max(100_000).default(200),
  /** Connections one client address may hold at once; more get `421 4.7.0`. */
  SMTP_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(20),
  /** Idle time awaiting a command or data, in ms (RFC 5321 4.5.3.2.7: at least 5 minutes). */
  SMTP_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(300_000),
  /** Longest SMTP session, in ms; then `421 4.7.0` once no message is in flight. */
  SMTP_SESSION_MAX_MS: z.coerce.number().int().min(100).max(86_400_000).default(1_800_000),
  /** Commands one SMTP session may send. */
  SMTP_MAX_COMMANDS: z.coerce.number().int().min(1).max(1_000_000).default(2_000),
  /** NOOP, RSET, VRFY, EXPN and HELP commands one SMTP session may send (Postfix smtpd_junk_command_limit). */
  SMTP_MAX_JUNK_COMMANDS: z.coerce.number().int().min(1).max(1_000_000).default(100),
  /** Error replies (4xx/5xx) one SMTP session may cause before it is closed (Postfix smtpd_hard_error_limit). */
  SMTP_MAX_ERRORS: z.coerce.number().int().min(1).max(1_000_000).default(20),
  /** Slowest accepted DATA transfer, in bytes/s averaged over the transfer (Postfix smtpd_min_data_rate); 0 off. */
  SMTP_MIN_DATA_RATE: z.coerce.number().int().min(0).max(100_000_000).default(500),
  /** How long DATA may run before its rate is first checked, in ms. */
  SMTP_DATA_RATE_GRACE_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /**
   * Messages an SMTP listener reads and stores at once (issue 26 item 3: bounds inbound memory); the DATA of other
   * sessions waits unread (TCP backpressure) for a slot. The PostgreSQL pool has 10 connections, PGlite one.
   */
  SMTP_MAX_CONCURRENT_DATA: z.coerce.number().int().min(1).max(10_000).default(10),
  /** Messages (MAIL FROM) one client address may start per SMTP_MESSAGE_RATE_WINDOW_MS; more get `451 4.7.1`. */
  SMTP_MESSAGES_PER_ADDRESS: z.coerce.number().int().min(1).max(10_000_000).default(120),
  /** Messages (MAIL FROM) one sender domain may start per window, over every address; more get `451 4.7.1`. */
  SMTP_MESSAGES_PER_SENDER_DOMAIN: z.coerce.number().int().min(1).max(10_000_000).default(300),
  /** The window of the two SMTP message rates, in ms. */
  SMTP_MESSAGE_RATE_WINDOW_MS: z.coerce.number().int().min(1000).max(86_400_000).default(60_000),
  /** Per-sender reply budget of an agent: at most this many answers to one sender per identity per window. */
  AGENT_REPLIES_PER_SENDER: z.coerce.number().int().min(0).max(1000).default(5),
  /**
   * Per-identity reply budget of an agent: at most this many answers from one identity, to anyone, per window, so
   * many distinct (or forged) senders cannot turn an agent into a mass mailer.
   */
  AGENT_REPLIES_PER_IDENTITY: z.coerce.number().int().min(0).max(100_000).default(100),
  /**
   * Longest the sender authentication of one inbound message (SPF, DKIM, DMARC, ARC; every DNS lookup included)
   * may take, in ms; past it the verdicts not known are `temperror` and the mail is handled as unauthenticated.
   */
  SMTP_AUTH_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  /** The window of AGENT_REPLIES_PER_SENDER and AGENT_REPLIES_PER_IDENTITY, in minutes. */
  AGENT_REPLY_WINDOW_MINUTES: z.coerce.number().int().min(1).max(10_080).default(60),

  /**
   * Origins allowed to call the API from a browser (CORS), comma-separated, e.g.
   * `http://localhost:5173,https://app.example.com`; `*` allows any origin. Default: none (no CORS headers).
   */
  CORS_ORIGINS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((o) => o.trim().replace(/\/+$/, ''))
        .filter((o) => o !== ''),
    )
    .pipe(
      z.array(
        z.string().regex(/^(\*|https?:\/\/[^/\s]+)$/, 'must be origins (scheme://host[:port]) separated by commas'),
      ),
    )
    .default([]),
  /** GraphQL: most lexical tokens in one document (docs/graphql.md, Limits). */
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().min(100).max(1_000_000).default(5000),
  /** GraphQL: deepest field nesting, fragments followed. */
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().min(2).max(100).default(12),
  /** GraphQL: most aliased fields in one operation. */
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(0).max(10_000).default(30),
  /** GraphQL: most directives in one operation. */
  GRAPHQL_MAX_DIRECTIVES: z.coerce.number().int().min(0).max(10_000).default(50),
  /** GraphQL: cost budget; every field costs 1 and a list's selection counts `first`/`limit` times. */
  GRAPHQL_MAX_COST: z.coerce.number().int().min(10).max(100_000_000).default(50_000),
  /** GraphQL: most operations in one batched request (a JSON array body); 1 turns batching off. */
  GRAPHQL_MAX_BATCH: z.coerce.number().int().min(1).max(100).default(10),
  /** GraphQL: execute queries and mutations with graphql-jit (compiled per document, cached). */
  GRAPHQL_JIT: bool.default(true),

  /**
   * OpenTelemetry: an OTLP/HTTP collector (e.g. http://otel-collector:4318) switches tracing on; unset, no span is
   * recorded and the SDK is not loaded. The standard OTEL_* variables (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_HEADERS…)
   * are read by the SDK itself (docs/operations.md "Traces").
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),

  /** OpenAI-compatible endpoint for agents (chat completions). Unset: agents answer with the offline sandbox model. */
  LLM_BASE_URL: z.string().url().optional(),
  LLM_API_KEY: z.string().optional(),
});

/** The validated configuration. */
export type Config = z.infer<typeof configSchema>;

/** Raised when the environment does not validate; `problems` holds one line per offending variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads and validates the configuration from `env` (default `process.env`), reporting every problem at once.
 * Empty strings count as unset.
 * @throws ConfigError naming each offending variable and why.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned: Record<string, string> = {};
  for (const key of Object.keys(configSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') cleaned[key] = value;
  }
  const result = configSchema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`));
  }
  if (result.data.REGISTRY === 'tcr') {
    const missing = (['TCR_API_URL', 'TCR_API_KEY', 'TCR_API_SECRET', 'TCR_WEBHOOK_SECRET'] as const).filter(
      (k) => result.data[k] === undefined,
    );
    if (missing.length > 0) throw new ConfigError(missing.map((k) => `${k}: required when REGISTRY=tcr`));
  }
  if (Boolean(result.data.SMTP_TLS_CERT) !== Boolean(result.data.SMTP_TLS_KEY)) {
    throw new ConfigError(['SMTP_TLS_CERT, SMTP_TLS_KEY: set both or neither']);
  }
  if (Boolean(result.data.HTTP_TLS_CERT) !== Boolean(result.data.HTTP_TLS_KEY)) {
    throw new ConfigError(['HTTP_TLS_CERT, HTTP_TLS_KEY: set both or neither']);
  }
  const { EMAIL_DOMAIN, EMAIL_DOMAINS } = result.data;
  if (EMAIL_DOMAINS && !EMAIL_DOMAINS.includes(EMAIL_DOMAIN.toLowerCase())) {
    throw new ConfigError([`EMAIL_DOMAINS: must include EMAIL_DOMAIN (${EMAIL_DOMAIN})`]);
  }
  return result.data;
}

/**
 * Parses `DNS_SERVERS` (comma-separated `ip[:port]`, IPv6 as `[addr]:port` or bare) into node:dns server strings.
 * @throws Error naming the first entry that is not an IP address with an optional port 1–65535.
 */
export function parseDnsServers(value: string | undefined): string[] {
  if (!value?.trim()) return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
      const [host, port] = v6 ? [v6[1], v6[2]] : isIP(entry) === 6 ? [entry, undefined] : entry.split(':');
      const p = port === undefined ? undefined : Number(port);
      if (!host || isIP(host) === 0 || (p !== undefined && !(Number.isInteger(p) && p >= 1 && p <= 65535))) {
        throw new Error(`"${entry}" is not an IP address with an optional port`);
      }
      return entry;
    });
}
