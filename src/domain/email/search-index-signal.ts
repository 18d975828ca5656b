/*
 * The in-process signal from delivery to the search indexer (issue 24 round 13; src/domain/email/search-index.ts).
 * A file of its own so that DomainContext (src/domain/kernel/context.ts) can hold it without importing the indexer.
 */

/** A delivery this recent (ms, monotonic) means the inbound listener is busy: the indexer runs at its duty cycle. */
export const BUSY_WINDOW_MS = 1_000;

/**
 * The in-process "mail was stored" signal of one app (`DomainContext.searchIndex`), read by its indexer
 * (`SearchIndexer`): `dirty` (index at the next poll, `WORKER_POLL_MS`: the debounce) and when this instance last
 * stored mail (`performance.now()` ms; the listener counts as busy for {@link BUSY_WINDOW_MS} after it).
 */
export class SearchIndexSignal {
  /** Something may be pending (true at start: a boot finishes what a previous run left). */
  dirty = true;
  lastStored = Number.NEGATIVE_INFINITY;

  /** Messages were committed (inbound delivery). */
  note(): void {
    this.dirty = true;
    this.lastStored = performance.now();
  }
}
