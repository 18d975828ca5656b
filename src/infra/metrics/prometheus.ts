import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ModelProvider, ModelRequest } from '../../domain/email/model.port.js';
import type { StreamEndReason } from '../../domain/events/event.js';
import type { MetricsRecorder } from '../../domain/metrics.port.js';
import type { Database } from '../db.js';

/** One kind of the job queue as measured at scrape time (src/infra/jobs: JobRunner.state, docs/jobs.md). */
export interface QueueState {
  kind: string;
  /** Rows waiting. */
  depth: number;
  /** Of them, due now. */
  due: number;
  /** Age of the oldest due one, in s (0 when none is due). */
  ageSeconds: number;
}

/**
 * Node's default process metrics (CPU, memory, event-loop lag, GC), once per process in a registry of their own.
 * prom-client's collectors keep process-wide observers (GC PerformanceObserver, event-loop monitor) that are never
 * disconnected: registered in an app's registry, they held that registry, its scrape-time gauges, the app's
 * database and (on the embedded default) its PGlite instance for the life of the process: every test file's app
 * stayed in memory (about 250 MB each; `npm test` peaked near 8 GB per worker).
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'switchboard_' });
  }
  return processRegistry;
}

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
  readonly #streamsEnded: Counter<'transport' | 'reason'>;
  /**
   * Webhook attempts counted since the last scrape, per outcome: a field increment per attempt (the dispatcher's hot
   * path, issue 24) instead of prom-client's label hashing; added to `switchboard_webhook_attempts_total` when it is collected.
   */
  readonly #webhookCounts = { delivered: 0, retry: 0, failed: 0, refused: 0 };
  readonly #model: Histogram<'provider' | 'outcome'>;
  /** Reads the job queue's state per kind; set by the composition root once the queue exists ({@link measureQueues}). */
  #queues: () => Promise<QueueState[]> = async () => [];

  /**
   * @param database read at scrape time for agent jobs by status; a failing query is skipped
   *   (the scrape still answers) and counted in `switchboard_metrics_query_errors_total`.
   */
  /**
   * Measures queue depth and age per job kind with `read` (the job queue's own `JobRunner.state`, so the measure
   * uses the claim's table and condition). Failing reads are counted in `switchboard_metrics_query_errors_total`.
   */
  measureQueues(read: () => Promise<QueueState[]>): void {
    this.#queues = read;
  }

  constructor(database: Database) {
    const registers = [this.registry];
    processMetrics();
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
    this.#streamsEnded = new Counter({
      name: 'switchboard_streams_ended_total',
      help: 'Event streams ended on this instance, by transport and reason (closed, revoked, overflow, interrupted, shutdown).',
      labelNames: ['transport', 'reason'],
      registers,
    });
    const webhookCounts = this.#webhookCounts;
    new Counter({
      name: 'switchboard_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (delivered, retry, failed, refused).',
      labelNames: ['outcome'],
      registers,
      collect() {
        for (const outcome of ['delivered', 'retry', 'failed', 'refused'] as const) {
          const n = webhookCounts[outcome];
          if (n === 0) continue;
          webhookCounts[outcome] = 0;
          this.inc({ outcome }, n);
        }
      },
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
    new Gauge({
      name: 'switchboard_search_index_pending',
      help: 'Stored messages whose search vector is not computed yet (indexed after delivery; a search indexes first).',
      registers,
      async collect() {
        try {
          const [row] = await database.prisma.$queryRawUnsafe<{ n: number }[]>(
            'SELECT count(*)::int AS n FROM email_search_pending',
          );
          this.set(Number(row?.n ?? 0));
        } catch {
          queryErrors.inc({ query: 'search_index_pending' });
        }
      },
    });
    // One set of queue queries per scrape, shared by the depth and age gauges (prom-client collects them in parallel).
    let inflight: Promise<QueueState[]> | undefined;
    const readQueues = async (): Promise<QueueState[]> => {
      try {
        return await this.#queues();
      } catch {
        queryErrors.inc({ query: 'queues' });
        return [];
      }
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

  streamOpened(transport: 'sse' | 'graphql'): void {
    this.#streams.inc({ transport });
  }

  streamEnded(transport: 'sse' | 'graphql', reason: StreamEndReason): void {
    this.#streams.dec({ transport });
    this.#streamsEnded.inc({ transport, reason });
  }

  webhookAttempt(outcome: 'delivered' | 'retry' | 'failed' | 'refused'): void {
    this.#webhookCounts[outcome]++;
  }

  agentModelCall(provider: string, outcome: 'ok' | 'error', seconds: number): void {
    this.#model.observe({ provider, outcome }, seconds);
  }

  /** The exposition text and its content type (Prometheus text format 0.0.4). */
  async render(): Promise<{ contentType: string; body: string }> {
    const [own, node] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return { contentType: this.registry.contentType, body: `${node}${own}` };
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
