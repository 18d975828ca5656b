import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's full collection, or null where it cannot be had. `--expose-gc` set at run time, then `gc` read from a fresh
 * context (the flag only applies to contexts made after it), as jest's leak detector and the `expose-gc` package do;
 * a process started with `--expose-gc` already has `globalThis.gc`.
 */
function fullGc(): (() => void) | null {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (typeof existing === 'function') return existing;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    return null;
  }
}

/**
 * Runs one full garbage collection once a burst of large work is over (issue 26 item 3): `add(bytes)` counts work
 * (an inbound message's size); once `thresholdBytes` have been counted and nothing more is added for `quietMs`, V8
 * collects everything. Why: Node never collects an idle process, so after a burst of large mail the Buffers it
 * dropped (external memory, freed only by a collection) and the grown heap stayed resident until the next traffic:
 * 100–150 MB held for minutes (docs/operations.md "Inbound memory under a burst"). With glibc's mmap threshold fixed
 * (MALLOC_MMAP_THRESHOLD_, set by `npm start` and the image) the freed chunks go back to the system at once. One
 * collection costs tens of ms on the event loop, after the burst only, never per message.
 */
export class IdleGc {
  #pending = 0;
  #timer: NodeJS.Timeout | undefined;
  #gc: (() => void) | null | undefined;
  /** Full collections run so far (tests, logs). */
  collections = 0;

  constructor(
    private readonly thresholdBytes = 32 * 1024 * 1024,
    private readonly quietMs = 5_000,
  ) {}

  /** Counts `bytes` of finished work and (re)arms the quiet timer once past the threshold. */
  add(bytes: number): void {
    this.#pending += bytes;
    if (this.#pending < this.thresholdBytes) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#collect(), this.quietMs).unref();
  }

  /** Arms one collection `quietMs` from now whatever was counted (after start-up: PGlite's load leaves ~200 MB). */
  soon(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#collect(), this.quietMs).unref();
  }

  /** Cancels a pending collection. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #collect(): void {
    this.#timer = undefined;
    this.#pending = 0;
    this.#gc ??= fullGc();
    if (!this.#gc) return;
    this.#gc();
    this.collections++;
  }
}
