import type { DomainContext } from '../kernel/context.js';
import { PRUNE_INTERVAL_MS, periodicWorker, type Worker } from '../kernel/workers.js';
import { deleteOrphanBlobs } from './blob-cleaner.store.js';

/**
 * How old an unreferenced blob must be before it is deleted (1 h, in ms): a blob is written before the row that
 * refers to it (SMTP DATA streams to storage first), so a young blob may still be about to be referenced.
 */
export const ORPHAN_BLOB_GRACE_MS = 3600_000;
/** Blobs deleted per run at most (a run is one statement; the rest waits for the next run). */
export const ORPHAN_BLOBS_PER_RUN = 500;

/**
 * The orphaned-blob cleaner (issue 21, "noticed, left alone"): once per PRUNE_INTERVAL_MS it deletes raw messages
 * and draft attachments that nothing refers to any more (identities purged with their messages, DMARC rejects
 * cut short, drafts replaced), older than {@link ORPHAN_BLOB_GRACE_MS}, at most {@link ORPHAN_BLOBS_PER_RUN} a run.
 * A blob shared by several recipients' copies stays while one copy refers to it.
 */
export function orphanBlobCleaner(ctx: DomainContext): Worker {
  return periodicWorker('email-blob-cleaner', ctx.clock, PRUNE_INTERVAL_MS, () =>
    deleteOrphanBlobs(ctx.db, new Date(ctx.clock.now().getTime() - ORPHAN_BLOB_GRACE_MS), ORPHAN_BLOBS_PER_RUN),
  );
}
