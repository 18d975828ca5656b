import type { DomainContext } from '../kernel/context.js';
import { PRUNE_INTERVAL_MS, periodicWorker, type Worker } from '../kernel/workers.js';
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
  // One statement: data-modifying CTEs run exactly once, so the delete and its mark commit together.
  const rows = await ctx.db.$queryRaw<{ deleted: number }[]>`
    WITH accts AS (
      SELECT DISTINCT account_id FROM events WHERE created_at < ${cutoff}
    ), floors AS (
      SELECT a.account_id,
             (SELECT e.id FROM events e WHERE e.account_id = a.account_id
               ORDER BY e.id DESC OFFSET ${keepOffset} LIMIT 1) AS floor_id
        FROM accts a
    ), del AS (
      DELETE FROM events e USING floors f
       WHERE e.account_id = f.account_id AND f.floor_id IS NOT NULL
         AND e.id < f.floor_id AND e.created_at < ${cutoff}
      RETURNING e.account_id, e.id
    ), marks AS (
      INSERT INTO event_retention_marks (account_id, pruned_through_id, updated_at)
      SELECT account_id, max(id), ${now} FROM del GROUP BY account_id
      ON CONFLICT (account_id) DO UPDATE
        SET pruned_through_id = GREATEST(event_retention_marks.pruned_through_id, EXCLUDED.pruned_through_id),
            updated_at = EXCLUDED.updated_at
      RETURNING 1
    )
    SELECT count(*)::int AS deleted FROM del`;
  return rows[0]?.deleted ?? 0;
}

/** The retention Worker: prunes at most once per {@link PRUNE_INTERVAL_MS} of the app clock. */
export function eventPruner(ctx: DomainContext): Worker {
  return periodicWorker('events.retention', ctx.clock, PRUNE_INTERVAL_MS, async () => {
    const deleted = await pruneEvents(ctx);
    if (deleted > 0) ctx.log.info({ deleted }, 'pruned expired events');
    return deleted;
  });
}
