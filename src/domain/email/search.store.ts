import { type EmailThread, Prisma } from '../../generated/prisma/client.js';
import type { Tx } from '../kernel/db.js';

/*
 * Store of full-text search over messages (issue 21 item 4; issue 23's store convention). The index is the side
 * table `email_message_search` (one row per message: its tsvector over subject, addresses and text body, one parse
 * each with `email_english`: English stems, stop words kept) with a GIN index; see
 * prisma/migrations/20261128043000_email_search_vector_one_parse and 20261128190000_email_search_side_table. It is
 * filled after delivery (src/domain/email/search-index.ts); search.service.ts indexes the account's queued messages
 * before a query with words, so it finds every stored message. Words match through the GIN index (`m.id IN (SELECT
 * message_id … WHERE search_vector @@ q)`: a bitmap index scan, then the message filters). A query
 * matches read with `email_english` (every word, stop words too) or with `english` (stop words dropped, so a
 * query's "of" or "the" need not be in the message). It works the same on PostgreSQL and PGlite.
 */

/** What a thread search filters on; every given filter must hold (AND). */
export interface ThreadSearch {
  accountId: string;
  /** One identity; undefined: every identity of the account. */
  identityId?: string;
  /** websearch syntax (`invoice march`, `"exact words"`, `-excluded`, `a or b`) over subject, bodies, addresses. */
  q?: string;
  /** Lower-cased sender address, or a domain (matches any sender at it). */
  from?: string;
  /** Only messages sent at or after this time. */
  after?: Date;
  /** Only messages sent before this time. */
  before?: Date;
  /** Only threads carrying this label. */
  label?: string;
  /** Keyset position: threads strictly after (lastMessageAt, id) in the newest-activity-first order. */
  cursor?: { at: Date; id: string };
  take: number;
}

/**
 * Threads with at least one message matching every message filter (`q`, `from`, `after`, `before`), newest
 * activity first (lastMessageAt descending, then id descending), as rows.
 */
export async function searchThreadRows(db: Tx, s: ThreadSearch): Promise<EmailThread[]> {
  const parts: Prisma.Sql[] = [Prisma.sql`t.account_id = ${s.accountId}`];
  if (s.identityId) parts.push(Prisma.sql`t.identity_id = ${s.identityId}`);
  if (s.label) parts.push(Prisma.sql`${s.label} = ANY(t.labels)`);
  if (s.cursor) {
    parts.push(
      Prisma.sql`(t.last_message_at < ${s.cursor.at} OR (t.last_message_at = ${s.cursor.at} AND t.id < ${s.cursor.id}))`,
    );
  }
  const message: Prisma.Sql[] = [Prisma.sql`m.thread_id = t.id`];
  if (s.q) {
    message.push(
      Prisma.sql`m.id IN (SELECT x.message_id FROM email_message_search x
                           WHERE x.account_id = ${s.accountId}
                             AND x.search_vector @@ (websearch_to_tsquery('email_english', ${s.q})
                                                     || websearch_to_tsquery('english', ${s.q})))`,
    );
  }
  if (s.from) {
    const domain = s.from.includes('@') ? null : s.from;
    message.push(
      domain
        ? Prisma.sql`right(m.from_address, ${domain.length + 1}) = ${`@${domain}`}`
        : Prisma.sql`m.from_address = ${s.from}`,
    );
  }
  if (s.after) message.push(Prisma.sql`m.sent_at >= ${s.after}`);
  if (s.before) message.push(Prisma.sql`m.sent_at < ${s.before}`);
  parts.push(Prisma.sql`EXISTS (SELECT 1 FROM email_messages m WHERE ${Prisma.join(message, ' AND ')})`);
  const ids = await db.$queryRaw<{ id: string }[]>`
    SELECT t.id FROM email_threads t
     WHERE ${Prisma.join(parts, ' AND ')}
     ORDER BY t.last_message_at DESC, t.id DESC
     LIMIT ${s.take}`;
  if (ids.length === 0) return [];
  const rows = await db.emailThread.findMany({ where: { id: { in: ids.map((r) => r.id) } } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((r) => byId.get(r.id)).filter((r): r is EmailThread => r !== undefined);
}
