import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ModelProvider, ModelRequest } from '../../domain/email/model.port.js';
import type { MetricsRecorder } from '../../domain/metrics.port.js';
import type { Database } from '../db.js';

/**
 * One kind of the job queue (src/infra/jobs, docs/jobs.md; same kind names), measured at scrape time from its
 * table: `depth` rows waiting, `due` of them due now, and the age in seconds of the oldest due one (how late the
 * queue runs). A kind whose table or condition changes changes here too.
 */
interface QueueQuery {
  kind: string;
  /** SQL returning one row `{depth, due, oldest_due}`; `$1` is now. */
  sql: string;
}

/** The durable queues of the service and how to measure each (table and "waiting" condition). */
export const QUEUES: QueueQuery[] = [
  {
    kind: 'webhook-delivery',
    sql: `SELECT count(*)::int AS depth, count(*) FILTER (WHERE next_attempt_at <= $1)::int AS due,
                 min(next_attempt_at) FILTER (WHERE next_attempt_at <= $1) AS oldest_due
          FROM webhook_deliveries WHERE status = 'pending'`,
  },
  {
    kind: 'email-outbound',
    sql: `SELECT count(*)::int AS depth, count(*) FILTER (WHERE next_attempt_at <= $1)::int AS due,
                 min(next_attempt_at) FILTER (WHERE next_attempt_at <= $1) AS oldest_due
          FROM email_messages WHERE status = 'queued'`,
  },
  {
    kind: 'email-agent',
    sql: `SELECT count(*)::int AS depth, count(*) FILTER (WHERE next_attempt_at <= $1)::int AS due,
                 min(next_attempt_at) FILTER (WHERE next_attempt_at <= $1) AS oldest_due
          FROM email_agent_jobs WHERE status = 'pending'`,
  },
  {
    kind: 'registry-task',
    sql: `SELECT count(*)::int AS depth, count(*) FILTER (WHERE due_at <= $1)::int AS due,
                 min(due_at) FILTER (WHERE due_at <= $1) AS oldest_due
          FROM compliance_registry_tasks`,
  },
];

/**
 * Prometheus metrics of one app (its own prom-client Registry, so several apps in one process do not collide):
 * HTTP requests and latency per route, events ingested, open streams, webhook attempts by outcome, agent model
 * calls and jobs by status, queue depth and age per kind (queried at scrape time), plus Node's default process
 * metrics. Names follow Prometheus conventions (`_total` counters, `_seconds` units).
 */
export class PrometheusMetrics implements MetricsRecorder {
  readonly registry = new Registry();
  readonly #http: Counter<'method' | 'route' | 'status'>;
  readonly #latency: Histogram<'method' | 'route'>;
  readonly #events: Counter<'channel'>;
  readonly #streams: Gauge<'transport'>;
  readonly #webhooks: Counter<'outcome'>;
  readonly #model: Histogram<'provider' | 'outcome'>;

  /**
   * @param database read at scrape time for queue depth/age and agent jobs by status; a failing query is skipped
   *   (the scrape still answers) and counted in `switchboard_metrics_query_errors_total`.
   * @param clock the app's clock (queue age is relative to it).
   */
  constructor(database: Database, clock: { now(): Date }) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'switchboard_' });
    this.#http = new Counter({
      name: 'switchboard_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.#latency = new Histogram({
      name: 'switchboard_http_request_duration_seconds',
      help: 'Time to answer an HTTP request (to the last byte of a non-streaming answer), by method and route.',
      labelNames: ['method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.#events = new Counter({
      name: 'switchboard_events_ingested_total',
      help: 'Events recorded by this instance, by channel.',
      labelNames: ['channel'],
      registers,
    });
    this.#streams = new Gauge({
      name: 'switchboard_open_streams',
      help: 'Live event streams open on this instance, by transport.',
      labelNames: ['transport'],
      registers,
    });
    this.#webhooks = new Counter({
      name: 'switchboard_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (delivered, retry, failed, refused).',
      labelNames: ['outcome'],
      registers,
    });
    this.#model = new Histogram({
      name: 'switchboard_agent_model_call_duration_seconds',
      help: 'Model calls of agent jobs, by provider and outcome.',
      labelNames: ['provider', 'outcome'],
      buckets: [0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    const queryErrors = new Counter({
      name: 'switchboard_metrics_query_errors_total',
      help: 'Scrape-time queries that failed (their gauges are left out of that scrape).',
      labelNames: ['query'],
      registers,
    });
    new Gauge({
      name: 'switchboard_queue_depth',
      help: 'Durable jobs waiting, by kind (all, and state="due" for those whose time has come).',
      labelNames: ['kind', 'state'],
      registers,
      async collect() {
        this.reset();
        for (const q of await queueSnapshot()) {
          this.set({ kind: q.kind, state: 'all' }, q.depth);
          this.set({ kind: q.kind, state: 'due' }, q.due);
        }
      },
    });
    new Gauge({
      name: 'switchboard_queue_oldest_due_age_seconds',
      help: 'Age of the oldest due job per kind: how long it has waited past its scheduled time (0 when none).',
      labelNames: ['kind'],
      registers,
      async collect() {
        this.reset();
        for (const q of await queueSnapshot()) this.set({ kind: q.kind }, q.ageSeconds);
      },
    });
    new Gauge({
      name: 'switchboard_agent_jobs',
      help: 'Agent jobs by status (pending, answered, skipped, failed), all time.',
      labelNames: ['status'],
      registers,
      async collect() {
        this.reset();
        try {
          const rows = await database.prisma.$queryRawUnsafe<{ status: string; n: number }[]>(
            'SELECT status, count(*)::int AS n FROM email_agent_jobs GROUP BY status',
          );
          for (const r of rows) this.set({ status: r.status }, Number(r.n));
        } catch {
          queryErrors.inc({ query: 'agent_jobs' });
        }
      },
    });
    // One set of queue queries per scrape, shared by the depth and age gauges (prom-client collects them in parallel).
    type QueueState = { kind: string; depth: number; due: number; ageSeconds: number };
    let inflight: Promise<QueueState[]> | undefined;
    const readQueues = async (): Promise<QueueState[]> => {
      const now = clock.now();
      const states = await Promise.all(
        QUEUES.map(async (q): Promise<QueueState | undefined> => {
          try {
            const [row] = await database.prisma.$queryRawUnsafe<
              { depth: number; due: number; oldest_due: Date | string | null }[]
            >(q.sql, now);
            const oldest = row?.oldest_due ? new Date(row.oldest_due).getTime() : undefined;
            return {
              kind: q.kind,
              depth: Number(row?.depth ?? 0),
              due: Number(row?.due ?? 0),
              ageSeconds: oldest === undefined ? 0 : Math.max(0, (now.getTime() - oldest) / 1000),
            };
          } catch {
            queryErrors.inc({ query: `queue:${q.kind}` });
            return undefined;
          }
        }),
      );
      return states.filter((s): s is QueueState => s !== undefined);
    };
    const queueSnapshot = () => {
      inflight ??= readQueues().finally(() => {
        setTimeout(() => {
          inflight = undefined;
        }, 0);
      });
      return inflight;
    };
  }

  /** Records one answered HTTP request; `route` is the route pattern (e.g. /api/webhooks/:id), never the raw URL. */
  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.#http.inc({ method, route, status: String(status) });
    this.#latency.observe({ method, route }, seconds);
  }

  eventIngested(channel: string): void {
    this.#events.inc({ channel });
  }

  streamOpened(transport: 'sse' | 'graphql'): () => void {
    this.#streams.inc({ transport });
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      this.#streams.dec({ transport });
    };
  }

  webhookAttempt(outcome: 'delivered' | 'retry' | 'failed' | 'refused'): void {
    this.#webhooks.inc({ outcome });
  }

  agentModelCall(provider: string, outcome: 'ok' | 'error', seconds: number): void {
    this.#model.observe({ provider, outcome }, seconds);
  }

  /** The exposition text and its content type (Prometheus text format 0.0.4). */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** Wraps a model provider so each call is timed and counted by outcome. */
export function measuredModel(model: ModelProvider, metrics: MetricsRecorder): ModelProvider {
  return {
    name: model.name,
    async complete(request: ModelRequest) {
      const started = performance.now();
      try {
        const text = await model.complete(request);
        metrics.agentModelCall(model.name, 'ok', (performance.now() - started) / 1000);
        return text;
      } catch (err) {
        metrics.agentModelCall(model.name, 'error', (performance.now() - started) / 1000);
        throw err;
      }
    },
  };
}
