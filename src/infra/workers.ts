import type { Logger } from 'pino';
import type { Worker, WorkerRegistry } from '../domain/kernel/workers.js';

export { PRUNE_INTERVAL_MS, periodicWorker, type Worker } from '../domain/kernel/workers.js';

/** The wait of a worker that does not poll: the longest timer Node allows (about 24.8 days), cut short by a wake. */
const NEVER_MS = 2 ** 31 - 1;

/**
 * Runs registered workers, each on its own loop: a worker that took items ticks again at once, one that found
 * nothing waits `intervalMs`. One tick of a worker never overlaps another tick of the same worker.
 */
export class WorkerSet implements WorkerRegistry {
  readonly #workers: Worker[] = [];
  readonly #running = new Map<string, Promise<number>>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #again = new Set<string>();
  #started = false;

  constructor(
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  add(worker: Worker): void {
    this.#workers.push(worker);
    if (this.#started) this.#loop(worker);
  }

  /** Starts every worker's loop. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    for (const w of this.#workers) this.#loop(w);
  }

  #loop(worker: Worker, delay = worker.polls === false ? NEVER_MS : this.intervalMs): void {
    const existing = this.#timers.get(worker.name);
    if (existing) clearTimeout(existing);
    const timer = setTimeout(() => {
      this.#timers.delete(worker.name);
      if (!this.#started) return;
      void this.#tick(worker).then((n) => {
        if (!this.#started) return;
        const again = this.#again.delete(worker.name);
        this.#loop(worker, n > 0 || again ? 0 : worker.polls === false ? NEVER_MS : this.intervalMs);
      });
    }, delay);
    timer.unref();
    this.#timers.set(worker.name, timer);
  }

  /**
   * Ticks worker `name` at once instead of at its next poll (work was committed, or a slot freed while work was
   * due). Coalesced: a wake during a tick makes one more tick right after it. No-op before `start()` (tests with a
   * manual clock drive the workers with `drain()`).
   */
  wake(name: string): void {
    if (!this.#started) return;
    const worker = this.#workers.find((w) => w.name === name);
    if (!worker) return;
    if (this.#running.has(name) || !this.#timers.has(name)) {
      this.#again.add(name);
      return;
    }
    this.#loop(worker, 0);
  }

  /** Wakes every worker (e.g. after the wake-up channel reconnected, when notifications may have been missed). */
  wakeAll(): void {
    for (const w of this.#workers) this.wake(w.name);
  }

  /** Ticks every worker once, concurrently. @returns items taken. */
  async tickAll(): Promise<number> {
    const counts = await Promise.all(this.#workers.map((w) => this.#tick(w)));
    return counts.reduce((a, b) => a + b, 0);
  }

  /**
   * Ticks every worker and waits for the work it started, until no worker takes anything (at most `maxRounds`
   * rounds). For tests with a manual clock, and shutdown. @returns items taken.
   */
  async drain(maxRounds = 100): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxRounds; i++) {
      const n = await this.tickAll();
      await this.#settleAll();
      total += n;
      if (n === 0) break;
    }
    return total;
  }

  #settleAll(): Promise<unknown> {
    return Promise.all(this.#workers.map((w) => w.settle?.()));
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

  /** Stops every loop and waits for ticks in flight and the work they started. */
  async stop(): Promise<void> {
    this.#started = false;
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
    await Promise.all(this.#running.values());
    await this.#settleAll();
  }
}
