import type { DomainContext } from './domain/kernel/context.js';
import type { JobQueue } from './infra/jobs/job-queue.js';
import type { PrometheusMetrics } from './infra/metrics/prometheus.js';
import type { WorkerSet } from './infra/workers.js';

/**
 * The context of one running app as src/app.ts builds it: the domain's {@link DomainContext} with the concrete
 * infra classes the front doors and the app itself drive (the job queue's runners and start/stop, the worker set,
 * Prometheus' registry). Domain code takes `DomainContext` (src/domain/kernel/context.ts), never this type.
 */
export interface AppContext extends DomainContext {
  workers: WorkerSet;
  jobs: JobQueue;
  metrics: PrometheusMetrics;
}
