import type { Tx } from '../kernel/db.js';

/*
 * Store of the orphaned-blob cleaner (issue 23's store convention): the one SQL statement that finds and deletes
 * raw-message and draft-attachment blobs nothing refers to any more.
 */

/**
 * Deletes up to `limit` blobs created before `before` that no message (`email_messages.raw_blob_id`) and no draft
 * attachment (`email_draft_attachments.blob_id`) refers to; their chunks go with them (ON DELETE CASCADE).
 * @returns how many blobs were deleted.
 */
export function deleteOrphanBlobs(db: Tx, before: Date, limit: number): Promise<number> {
  return db.$executeRaw`
    DELETE FROM email_blobs WHERE id IN (
      SELECT b.id FROM email_blobs b
       WHERE b.created_at < ${before}
         AND NOT EXISTS (SELECT 1 FROM email_messages m WHERE m.raw_blob_id = b.id)
         AND NOT EXISTS (SELECT 1 FROM email_draft_attachments a WHERE a.blob_id = b.id)
       LIMIT ${limit})`;
}
