import { setTimeout as sleep } from 'node:timers/promises';
import type { DomainContext } from '../kernel/context.js';
import type { Tx } from '../kernel/db.js';
import { PRUNE_INTERVAL_MS, type Worker } from '../kernel/workers.js';
import { indexPendingMessages } from './search-index.store.js';
import { BUSY_WINDOW_MS } from './search-index-signal.js';

/*
 * The search index after delivery (issue 24 rounds 13 and 15;
 * prisma/migrations/20261128190000_email_search_side_table). Every stored message gets a row in the queue
 * `email_search_pending` (a trigger on email_messages) and, once indexed, a row in the side table
 * `email_message_search`; one statement moves it from one to the other, so nothing is lost: a crash leaves it queued
 * and the next indexer finishes it. Modelled on Dovecot's FTS (fts_autoindex: index in the background after
 * delivery; a search first indexes the mails not yet indexed, so it never misses a stored message):
 * - {@link searchIndexer}: a background worker indexes batches shortly after delivery, paced while mail arrives;
 * - {@link indexAccountBeforeSearch}: a search with words first indexes the account's pending rows.
 */

/** Name of the indexer worker (src/infra/workers.ts). */
export const SEARCH_INDEXER = 'email-search-indexer';

/** Rows one search indexes per statement before it queries (read-your-writes). */
const SEARCH_BATCH = 500;
/** Most rows one search indexes first; a larger backlog of the account is left to the worker (docs/operations.md). */
export const SEARCH_FIRST_MAX_ROWS = 50_000;
/** Longest pause between two batches while busy, in ms (also bounds how long a stop waits for a pausing tick). */
const MAX_PAUSE_MS = 1_000;

/**
 * Indexes every pending row of `accountId` before a search with words reads the index, so a message whose `250` or
 * `202` was answered is found at once. Batches of {@link SEARCH_BATCH} until one finds none (one statement when none
 * is pending, a probe of the queue's index) or
 * {@link SEARCH_FIRST_MAX_ROWS} were indexed (then the search proceeds; the worker finishes the rest).
 * @returns rows indexed.
 */
export async function indexAccountBeforeSearch(db: Tx, accountId: string): Promise<number> {
  let total = 0;
  while (total < SEARCH_FIRST_MAX_ROWS) {
    const { indexed } = await indexPendingMessages(db, { accountId, limit: SEARCH_BATCH, skipLocked: false });
    total += indexed;
    // Not `indexed < SEARCH_BATCH`: a batch the worker held is skipped after its commit, so a short batch does not
    // mean none is left.
    if (indexed === 0) break;
  }
  return total;
}

/** Tells this app's indexer that messages were committed (see {@link SearchIndexSignal}). */
export function noteMessagesStored(ctx: DomainContext): void {
  ctx.searchIndex.note();
}

/**
 * The background indexer: a {@link Worker} that, when signalled ({@link noteMessagesStored}), on its first tick (a
 * boot finishes what a previous run left) and otherwise once per {@link PRUNE_INTERVAL_MS} (rows written by other
 * instances or by outbound mail), indexes batches of `SEARCH_INDEX_BATCH` rows (`FOR UPDATE SKIP LOCKED`, so
 * instances share the work) until none is left. Pace: while this instance accepted mail in the last
 * {@link BUSY_WINDOW_MS}, it pauses after each batch so that it runs `SEARCH_INDEX_BUSY_DUTY` percent of the time,
 * unless the oldest row of the batch waited more than `SEARCH_INDEX_MAX_LAG_MS` (then it runs without pause).
 */
export class SearchIndexer implements Worker {
  readonly name = SEARCH_INDEXER;
  #lastSweep: number | undefined;

  constructor(private readonly ctx: DomainContext) {}

  async tick(): Promise<number> {
    const now = this.ctx.clock.now().getTime();
    const swept = this.#lastSweep !== undefined && now - this.#lastSweep < PRUNE_INTERVAL_MS;
    const signal = this.ctx.searchIndex;
    if (!signal.dirty && swept) return 0;
    signal.dirty = false;
    this.#lastSweep = now;
    const config = this.ctx.config;
    const [limit, duty, maxLag] = [
      config.SEARCH_INDEX_BATCH,
      config.SEARCH_INDEX_BUSY_DUTY,
      config.SEARCH_INDEX_MAX_LAG_MS,
    ];
    const started = performance.now();
    const batch = await indexPendingMessages(this.ctx.db, { limit, skipLocked: true });
    if (batch.indexed >= limit) signal.dirty = true;
    const busy = performance.now() - signal.lastStored < BUSY_WINDOW_MS;
    const late = batch.oldestMs !== null && Date.now() - batch.oldestMs > maxLag;
    if (batch.indexed > 0 && busy && !late && duty < 100) {
      const took = performance.now() - started;
      await sleep(Math.min(MAX_PAUSE_MS, (took * (100 - duty)) / duty));
    }
    return batch.indexed;
  }
}

/** The indexer worker of `ctx` (registered by setupEmail). */
export function searchIndexer(ctx: DomainContext): SearchIndexer {
  return new SearchIndexer(ctx);
}
