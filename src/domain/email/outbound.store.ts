import { Prisma } from '../../generated/prisma/client.js';
import type { Database, Statement } from '../kernel/db.js';
import type { EmailMessage } from './thread.store.js';

/*
 * The store of the send path's one write (issue 24): a new outbound message on a new thread, its raw message (one
 * blob chunk) and the thread, in ONE statement below Prisma instead of an interactive transaction of five round
 * trips (BEGIN, blob, thread, message, COMMIT), with the block-list and suppression read of the send in it. Used by POST /api/email/identities/{id}/send for a message without
 * attachments that fits in one chunk; every other write of a message goes through thread.store.ts.
 */

/** The new thread of {@link insertNewThreadMessage}: one message, `participants` merged, `labels` deduplicated. */
export interface NewThreadRow {
  id: string;
  subject: string;
  participants: string[];
  labels: string[];
}

/** The columns the statement writes, in order (SQL name, the row's field, the cast of its parameter). */
const MESSAGE_COLUMNS: [string, keyof EmailMessage, string][] = [
  ['id', 'id', 'text'],
  ['account_id', 'accountId', 'text'],
  ['identity_id', 'identityId', 'text'],
  ['message_id', 'messageId', 'text'],
  ['direction', 'direction', 'text'],
  ['from_address', 'from', 'text'],
  ['to_addresses', 'to', 'text[]'],
  ['cc_addresses', 'cc', 'text[]'],
  ['bcc_addresses', 'bcc', 'text[]'],
  ['reply_to', 'replyTo', 'text'],
  ['subject', 'subject', 'text'],
  ['body', 'body', 'text'],
  ['html', 'html', 'text'],
  ['extracted_text', 'extractedText', 'text'],
  ['labels', 'labels', 'text[]'],
  ['size', 'size', 'int'],
  ['in_reply_to', 'inReplyTo', 'text'],
  ['references', 'references', 'text[]'],
  ['auto_submitted', 'autoSubmitted', 'text'],
  ['status', 'status', 'text'],
  ['status_detail', 'statusDetail', 'text'],
  ['attempts', 'attempts', 'int'],
  ['next_attempt_at', 'nextAttemptAt', 'timestamptz'],
  ['locked_by', 'lockedBy', 'text'],
  ['locked_until', 'lockedUntil', 'timestamptz'],
  ['sent_at', 'sentAt', 'timestamptz'],
];

/** What {@link insertNewThreadMessage} found and did. */
export interface NewThreadMessageResult {
  /** Whether the blob, thread and message were written (the identity is active and no recipient is held). */
  written: boolean;
  /** Whether the identity was `active` (false: deprovisioning, or gone). */
  active: boolean;
  /** The block-list entries and suppressions that matched, as {@link recipientHolds} reads them. */
  holds: RecipientHolds;
}

/**
 * Writes, in one statement (atomic: all or nothing), the blob `raw` (one chunk, so at most BLOB_CHUNK_BYTES), the
 * new thread `thread` and the message `message` (every column of {@link MESSAGE_COLUMNS}; `threadId` and
 * `rawBlobId` point at the two new rows) — only while the message's identity is `active` (its row is share-locked
 * by the statement, so a deprovisioning that commits first makes it write nothing, and one that comes later waits
 * for it) and no recipient is held: the same statement reads the block list and the suppressions exactly as
 * {@link recipientHolds} does (`recipients.candidates`: the recipients' addresses, their domains and parent domains;
 * `recipients.addresses`: the addresses, lower-cased) and writes nothing when one matches. One round trip for the
 * send's read and its write (issue 24). @returns what was found and whether the rows were written.
 */
export async function insertNewThreadMessage(
  database: Pick<Database, 'preparedWrite'>,
  raw: Buffer,
  thread: NewThreadRow,
  message: EmailMessage,
  recipients: { candidates: string[]; addresses: string[] },
): Promise<NewThreadMessageResult> {
  if (message.threadId !== thread.id || !message.rawBlobId)
    throw new Error('message must point at its thread and blob');
  const values = MESSAGE_COLUMNS.map(([, field, cast]) => {
    const v = message[field];
    return Prisma.sql`${v}::${Prisma.raw(cast)}`;
  });
  const columns = MESSAGE_COLUMNS.map(([c]) => `"${c}"`).join(', ');
  const q = Prisma.sql`
    WITH holds AS (
      SELECT 'blocked' AS kind, entry AS value FROM email_blocklist
       WHERE account_id = ${message.accountId} AND direction = 'outbound' AND entry = ANY(${recipients.candidates}::text[])
         AND (identity_id IS NULL OR identity_id = ${message.identityId})
      UNION ALL
      SELECT 'suppressed' AS kind, address AS value FROM email_suppressions
       WHERE account_id = ${message.accountId} AND address = ANY(${recipients.addresses}::text[])
    ),
    ok AS (
      SELECT id FROM email_identities WHERE id = ${message.identityId} AND status = 'active' FOR SHARE
    ),
    go AS (SELECT ok.id FROM ok WHERE NOT EXISTS (SELECT 1 FROM holds)),
    b AS (
      INSERT INTO email_blobs (id, size, chunks, created_at)
      SELECT ${message.rawBlobId}, ${raw.length}::int, 1, ${message.sentAt}::timestamptz FROM go
      RETURNING id
    ),
    c AS (
      INSERT INTO email_blob_chunks (blob_id, seq, data) SELECT b.id, 0, ${new Uint8Array(raw)}::bytea FROM b
      RETURNING blob_id
    ),
    t AS (
      INSERT INTO email_threads (id, account_id, identity_id, subject, participants, labels, message_count,
                                 last_message_at, created_at)
      SELECT ${thread.id}, ${message.accountId}, go.id, ${thread.subject}, ${thread.participants}::text[],
             ${thread.labels}::text[], 1, ${message.sentAt}::timestamptz, ${message.sentAt}::timestamptz FROM go
      RETURNING id
    ),
    m AS (
      INSERT INTO email_messages (${Prisma.raw(columns)}, thread_id, raw_blob_id)
      SELECT ${Prisma.join(values)}, t.id, c.blob_id FROM t, c
      RETURNING id
    )
    SELECT (SELECT count(*)::int FROM m) AS n, (SELECT count(*)::int FROM ok) AS active,
           (SELECT json_agg(json_build_array(kind, value))::text FROM holds) AS holds`;
  const [row] = await database.preparedWrite(q.text, q.values as unknown[]);
  const found = JSON.parse((row?.holds as string | null) ?? '[]') as [string, string][];
  return {
    written: Number(row?.n ?? 0) === 1,
    active: Number(row?.active ?? 0) === 1,
    holds: {
      blocked: found.filter(([kind]) => kind === 'blocked').map(([, value]) => value),
      suppressed: found.filter(([kind]) => kind === 'suppressed').map(([, value]) => value),
    },
  };
}

/** What {@link recipientHolds} found: block-list entries that match, and suppressed addresses. */
export interface RecipientHolds {
  /** Matching `outbound` block-list entries (addresses or domains, as stored). */
  blocked: string[];
  /** Suppressed addresses among the recipients. */
  suppressed: string[];
}

const RECIPIENT_HOLDS: Statement = {
  name: 'email_send_recipient_holds',
  text: `SELECT 'blocked' AS kind, entry AS value FROM email_blocklist
          WHERE account_id = $1 AND direction = 'outbound' AND entry = ANY($2::text[])
            AND (identity_id IS NULL OR identity_id = $3)
         UNION ALL
         SELECT 'suppressed' AS kind, address AS value FROM email_suppressions
          WHERE account_id = $1 AND address = ANY($4::text[])`,
};

/**
 * The block-list and suppression reads of a send in ONE prepared statement below Prisma (issue 24; the two reads
 * of `blockedEntries` and `suppressionsAmong`): `outbound` entries of the account, for every identity or this one,
 * equal to one of `candidates` (the recipients' addresses, their domains and parent domains), and the account's
 * suppressions of `addresses` (lower-cased).
 */
export async function recipientHolds(
  database: Pick<Database, 'read'>,
  identity: { id: string; accountId: string },
  candidates: string[],
  addresses: string[],
): Promise<RecipientHolds> {
  const rows = await database.read<{ kind: string; value: string }>(RECIPIENT_HOLDS, [
    identity.accountId,
    candidates,
    identity.id,
    addresses,
  ]);
  return {
    blocked: rows.filter((r) => r.kind === 'blocked').map((r) => r.value),
    suppressed: rows.filter((r) => r.kind === 'suppressed').map((r) => r.value),
  };
}
