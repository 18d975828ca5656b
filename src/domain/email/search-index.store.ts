import { Prisma } from '../../generated/prisma/client.js';
import type { Tx } from '../kernel/db.js';

/*
 * Store of the search index after delivery (issue 24 rounds 13 and 15; src/domain/email/search-index.ts drives it):
 * the queue is `email_search_pending` (one row per stored message still to index, written by a trigger on
 * email_messages) and the index is the side table `email_message_search` with its GIN index
 * (prisma/migrations/20261128190000_email_search_side_table).
 */

/**
 * What one indexing statement did: queue rows done (indexed, or dropped because their message was deleted), and the
 * creation time (ms, from the UUIDv7 id) of the oldest indexed message.
 */
export interface IndexedBatch {
  indexed: number;
  /** Milliseconds since the epoch at which the oldest indexed row's id was made; null when none was indexed. */
  oldestMs: number | null;
}

/**
 * Computes the search vector (`email_message_search_vector`, the one definition) of up to `limit` queued messages,
 * oldest first, in one autocommitted statement that deletes their queue rows and inserts their `email_message_search`
 * rows (so a queue row is gone only when its vector is committed; a queue row whose message was deleted is just
 * dropped). `accountId` limits it to one account. With `skipLocked` queue rows another indexer holds are left to it
 * (the worker); without, the statement waits for them and keeps only those still queued after that commit (a search:
 * when it returns, every message queued before it began is indexed, up to `limit`).
 */
export async function indexPendingMessages(
  db: Tx,
  opts: { accountId?: string; limit: number; skipLocked: boolean },
): Promise<IndexedBatch> {
  const account = opts.accountId === undefined ? Prisma.empty : Prisma.sql`WHERE account_id = ${opts.accountId}`;
  const lock = opts.skipLocked ? Prisma.sql`FOR UPDATE SKIP LOCKED` : Prisma.sql`FOR UPDATE`;
  const [row] = await db.$queryRaw<{ n: number; oldest: string | null }[]>`
    WITH batch AS (
      SELECT message_id FROM email_search_pending ${account} ORDER BY message_id LIMIT ${opts.limit} ${lock}
    ), dequeued AS (
      DELETE FROM email_search_pending p USING batch WHERE p.message_id = batch.message_id RETURNING p.message_id
    ), done AS (
      INSERT INTO email_message_search (message_id, account_id, search_vector)
      SELECT m.id, m.account_id,
             email_message_search_vector(m.subject, m.body, m.from_address, m.to_addresses, m.cc_addresses)
        FROM email_messages m JOIN dequeued d ON d.message_id = m.id
      RETURNING message_id
    )
    SELECT (SELECT count(*)::int FROM dequeued) AS n, (SELECT min(message_id) FROM done) AS oldest`;
  const indexed = Number(row?.n ?? 0);
  return { indexed, oldestMs: indexed > 0 && row?.oldest ? uuidv7Ms(row.oldest) : null };
}

/** The 48-bit millisecond timestamp at the front of a UUIDv7 (RFC 9562 5.7); NaN for another kind of id. */
function uuidv7Ms(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}
