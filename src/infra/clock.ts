import type { Clock } from '../domain/kernel/clock.js';

export type { Clock } from '../domain/kernel/clock.js';

/** Wall-clock time. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to; for tests. Starts at `start` (default: the real now). */
export class ManualClock implements Clock {
  #ms: number;
  constructor(start: Date = new Date()) {
    this.#ms = start.getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  /** Moves time forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.#ms += ms;
  }
  /** Sets the time. */
  set(to: Date): void {
    this.#ms = to.getTime();
  }
}
