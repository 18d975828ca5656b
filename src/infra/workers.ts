import type { Logger } from 'pino';

/**
 * A background worker: `tick` claims and processes due work once and returns how many items it handled.
 * The app polls every worker each `WORKER_POLL_MS`; tests call `drain()` after moving a manual clock.
 */
export interface Worker {
  name: string;
  tick(): Promise<number>;
}

/** Polls registered workers on an interval; one tick of a worker never overlaps another of the same worker. */
export class WorkerSet {
  readonly #workers: Worker[] = [];
  readonly #running = new Map<string, Promise<number>>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  add(worker: Worker): void {
    this.#workers.push(worker);
  }

  /** Starts polling. */
  start(): void {
    if (this.#timer) return;
    const loop = () => {
      this.#timer = setTimeout(() => {
        void this.tickAll().finally(() => {
          if (this.#timer) loop();
        });
      }, this.intervalMs);
      this.#timer.unref();
    };
    loop();
  }

  /** Ticks every worker once (skipping a worker whose previous tick still runs). @returns items handled. */
  async tickAll(): Promise<number> {
    const counts = await Promise.all(this.#workers.map((w) => this.#tick(w)));
    return counts.reduce((a, b) => a + b, 0);
  }

  /** Ticks until no worker has anything due (at most `maxRounds` rounds). For tests and shutdown. */
  async drain(maxRounds = 100): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxRounds; i++) {
      const n = await this.tickAll();
      total += n;
      if (n === 0) break;
    }
    return total;
  }

  #tick(worker: Worker): Promise<number> {
    const running = this.#running.get(worker.name);
    if (running) return running.then(() => this.#tick(worker));
    const p = worker
      .tick()
      .catch((err: unknown) => {
        this.log.error({ err, worker: worker.name }, 'worker tick failed');
        return 0;
      })
      .finally(() => this.#running.delete(worker.name));
    this.#running.set(worker.name, p);
    return p;
  }

  /** Stops polling and waits for ticks in flight. */
  async stop(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await Promise.all(this.#running.values());
  }
}
