import { Prisma } from '../../generated/prisma/client.js';
import type { Tx } from '../kernel/db.js';

/*
 * Store of the search index after delivery (issue 24 round 13; src/domain/email/search-index.ts drives it): the rows
 * of `email_messages` whose `search_vector` is still NULL are the queue (partial index
 * `email_messages_search_pending_idx`, prisma/migrations/20261128140000_email_search_vector_after_delivery).
 */

/** What one indexing statement did: rows indexed, and the creation time (ms, from the UUIDv7 id) of the oldest. */
export interface IndexedBatch {
  indexed: number;
  /** Milliseconds since the epoch at which the oldest indexed row's id was made; null when none was indexed. */
  oldestMs: number | null;
}

/**
 * Computes the search vector (`email_message_search_vector`, the one definition) of up to `limit` rows still without
 * one, oldest first, in one autocommitted statement. `accountId` limits it to one account. With `skipLocked` rows
 * another indexer holds are left to it (the worker); without, the statement waits for them and keeps only those still
 * NULL after that commit (a search: when it returns, every row pending before it began is indexed, up to `limit`).
 */
export async function indexPendingMessages(
  db: Tx,
  opts: { accountId?: string; limit: number; skipLocked: boolean },
): Promise<IndexedBatch> {
  const account = opts.accountId === undefined ? Prisma.empty : Prisma.sql`AND account_id = ${opts.accountId}`;
  const lock = opts.skipLocked ? Prisma.sql`FOR UPDATE SKIP LOCKED` : Prisma.sql`FOR UPDATE`;
  const [row] = await db.$queryRaw<{ n: number; oldest: string | null }[]>`
    WITH batch AS (
      SELECT id FROM email_messages WHERE search_vector IS NULL ${account} ORDER BY id LIMIT ${opts.limit} ${lock}
    ), done AS (
      UPDATE email_messages m
         SET search_vector =
               email_message_search_vector(m.subject, m.body, m.from_address, m.to_addresses, m.cc_addresses)
        FROM batch
       WHERE m.id = batch.id AND m.search_vector IS NULL
      RETURNING m.id
    )
    SELECT count(*)::int AS n, min(id) AS oldest FROM done`;
  const indexed = Number(row?.n ?? 0);
  return { indexed, oldestMs: indexed > 0 && row?.oldest ? uuidv7Ms(row.oldest) : null };
}

/** The 48-bit millisecond timestamp at the front of a UUIDv7 (RFC 9562 5.7); NaN for another kind of id. */
function uuidv7Ms(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}
