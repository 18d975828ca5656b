import type { DomainContext } from '../kernel/context.js';
import { PRUNE_INTERVAL_MS, periodicWorker, type Worker } from '../kernel/workers.js';
import { pruneEventsBefore } from './event.store.js';
import { REPLAY_LIMIT } from './event-stream.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Deletes events older than `EVENT_RETENTION_DAYS`, always keeping each account's newest {@link REPLAY_LIMIT}
 * events (so a full spec-8 replay stays possible), and records per account the highest pruned id in
 * `event_retention_marks` in the same statement. Replay and history compare cursors with that mark and report
 * truncation in-band instead of leaving a silent gap.
 * @returns how many events were deleted.
 */
export async function pruneEvents(ctx: DomainContext): Promise<number> {
  const now = ctx.clock.now();
  const cutoff = new Date(now.getTime() - ctx.config.EVENT_RETENTION_DAYS * DAY_MS);
  const keepOffset = REPLAY_LIMIT - 1;
  return pruneEventsBefore(ctx.database, cutoff, keepOffset, now);
}

/** The retention Worker: prunes at most once per {@link PRUNE_INTERVAL_MS} of the app clock. */
export function eventPruner(ctx: DomainContext): Worker {
  return periodicWorker('events.retention', ctx.clock, PRUNE_INTERVAL_MS, async () => {
    const deleted = await pruneEvents(ctx);
    if (deleted > 0) ctx.log.info({ deleted }, 'pruned expired events');
    return deleted;
  });
}
