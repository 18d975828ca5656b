import type { Clock } from './clock.js';

/** How often a pruner runs at most, in ms of the app clock (data kept for hours or days; issue 9's idle budget). */
export const PRUNE_INTERVAL_MS = 60_000;

/**
 * A {@link Worker} named `name` whose `run` goes at most once per `everyMs` of `clock` (the first tick runs it; ticks
 * in between do nothing and report 0). For pruners: one query per WORKER_POLL_MS each would be most of an idle
 * instance's queries (docs/configuration.md lists every periodic query). `run` returns what the tick reports.
 */
export function periodicWorker(name: string, clock: Clock, everyMs: number, run: () => Promise<number>): Worker {
  let lastRun: number | undefined;
  return {
    name,
    async tick() {
      const now = clock.now().getTime();
      if (lastRun !== undefined && now - lastRun < everyMs) return 0;
      lastRun = now;
      return run();
    },
  };
}

/**
 * A background worker: `tick` claims due work once and returns how many items it took (0 when nothing is due).
 * A worker may start work it does not wait for inside `tick` (e.g. HTTP attempts); `settle` then resolves when that
 * work has finished. Each worker polls on its own loop, so one slow worker never delays another.
 */
export interface Worker {
  name: string;
  /**
   * False for a worker that is only ticked when woken ({@link WorkerSet.wake}; e.g. a job runner, which the job
   * queue's one poll wakes when its kind has due work). Default: polls every interval.
   */
  polls?: boolean;
  tick(): Promise<number>;
  /** Resolves when work started by earlier ticks has finished (for `drain()` and shutdown). */
  settle?(): Promise<void>;
}

/** Where an area registers its background workers (src/infra/workers.ts `WorkerSet` implements it). */
export interface WorkerRegistry {
  /** Adds a worker; it starts with the others when the app listens. */
  add(worker: Worker): void;
}
