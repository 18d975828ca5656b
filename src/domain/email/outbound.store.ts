import { Prisma } from '../../generated/prisma/client.js';
import type { Database, Statement } from '../kernel/db.js';
import { settleBatch, type WaitingWrite } from '../kernel/group-commit.js';
import type { EmailMessage } from './thread.store.js';

/*
 * The store of the send path's one write (issue 24): a new outbound message on a new thread, its raw message (one
 * blob chunk) and the thread, in ONE statement below Prisma instead of an interactive transaction of five round
 * trips (BEGIN, blob, thread, message, COMMIT), with the block-list and suppression read of the send in it. Used by POST /api/email/identities/{id}/send for a message without
 * attachments that fits in one chunk; every other write of a message goes through thread.store.ts.
 */

/** The new thread of {@link insertNewThreadMessages}: one message, `participants` merged, `labels` deduplicated. */
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

/** What {@link insertNewThreadMessages} found and did for one send. */
export interface NewThreadMessageResult {
  /** Whether the blob, thread and message were written (the identity is active and no recipient is held). */
  written: boolean;
  /** Whether the identity was `active` (false: deprovisioning, or gone). */
  active: boolean;
  /** The block-list entries and suppressions that matched, as {@link recipientHolds} reads them. */
  holds: RecipientHolds;
}

/** One send's write for {@link insertNewThreadMessages}. */
export interface NewThreadMessage {
  /** The raw message: one blob chunk, so at most BLOB_CHUNK_BYTES. */
  raw: Buffer;
  thread: NewThreadRow;
  /** The message row; `threadId` and `rawBlobId` point at the two new rows. */
  message: EmailMessage;
  /** The recipients' addresses (lower-cased) and their block-list candidates (addresses, domains, parents). */
  recipients: { candidates: string[]; addresses: string[] };
}

/**
 * The CTEs of one send's write (named with suffix `i`) and the three columns the final SELECT reads of it
 * (`n_i`: messages written, `active_i`: the identity is active, `holds_i`: JSON of the holds found).
 */
function newThreadMessageSql(i: number, w: NewThreadMessage): { ctes: Prisma.Sql; columns: Prisma.Sql } {
  const { raw, thread, message, recipients } = w;
  if (message.threadId !== thread.id || !message.rawBlobId)
    throw new Error('message must point at its thread and blob');
  const values = MESSAGE_COLUMNS.map(([, field, cast]) => {
    const v = message[field];
    return Prisma.sql`${v}::${Prisma.raw(cast)}`;
  });
  const columns = MESSAGE_COLUMNS.map(([c]) => `"${c}"`).join(', ');
  const n = (name: string) => Prisma.raw(`${name}_${i}`);
  const ctes = Prisma.sql`
    ${n('holds')} AS (
      SELECT 'blocked' AS kind, entry AS value FROM email_blocklist
       WHERE account_id = ${message.accountId} AND direction = 'outbound' AND entry = ANY(${recipients.candidates}::text[])
         AND (identity_id IS NULL OR identity_id = ${message.identityId})
      UNION ALL
      SELECT 'suppressed' AS kind, address AS value FROM email_suppressions
       WHERE account_id = ${message.accountId} AND address = ANY(${recipients.addresses}::text[])
    ),
    ${n('ok')} AS (
      SELECT id FROM email_identities WHERE id = ${message.identityId} AND status = 'active' FOR SHARE
    ),
    ${n('go')} AS (SELECT id FROM ${n('ok')} WHERE NOT EXISTS (SELECT 1 FROM ${n('holds')})),
    ${n('b')} AS (
      INSERT INTO email_blobs (id, size, chunks, created_at)
      SELECT ${message.rawBlobId}, ${raw.length}::int, 1, ${message.sentAt}::timestamptz FROM ${n('go')}
      RETURNING id
    ),
    ${n('c')} AS (
      INSERT INTO email_blob_chunks (blob_id, seq, data) SELECT id, 0, ${new Uint8Array(raw)}::bytea FROM ${n('b')}
      RETURNING blob_id
    ),
    ${n('t')} AS (
      INSERT INTO email_threads (id, account_id, identity_id, subject, participants, labels, message_count,
                                 last_message_at, created_at)
      SELECT ${thread.id}, ${message.accountId}, id, ${thread.subject}, ${thread.participants}::text[],
             ${thread.labels}::text[], 1, ${message.sentAt}::timestamptz, ${message.sentAt}::timestamptz
        FROM ${n('go')}
      RETURNING id
    ),
    ${n('m')} AS (
      INSERT INTO email_messages (${Prisma.raw(columns)}, thread_id, raw_blob_id)
      SELECT ${Prisma.join(values)}, ${n('t')}.id, ${n('c')}.blob_id FROM ${n('t')}, ${n('c')}
      RETURNING id
    )`;
  const cols = Prisma.sql`(SELECT count(*)::int FROM ${n('m')}) AS ${n('n')},
    (SELECT count(*)::int FROM ${n('ok')}) AS ${n('active')},
    (SELECT json_agg(json_build_array(kind, value))::text FROM ${n('holds')}) AS ${n('holds')}`;
  return { ctes, columns: cols };
}

/**
 * Writes sends in ONE statement (atomic: all or nothing; one commit), for each of `writes` the blob `raw`, the new
 * thread and the message (every column of {@link MESSAGE_COLUMNS}) — only while the message's identity is `active`
 * (its row is share-locked by the statement, so a deprovisioning that commits first makes it write nothing, and one
 * that comes later waits for it) and none of its recipients is held: the same statement reads the block list and
 * the suppressions exactly as {@link recipientHolds} does and writes nothing of that send when one matches. Each
 * send's rows depend only on its own checks. @returns for each write, in order, what was found and whether its rows
 * were written. @throws database errors (nothing written).
 */
export async function insertNewThreadMessages(
  database: Pick<Database, 'preparedWrite'>,
  writes: NewThreadMessage[],
): Promise<NewThreadMessageResult[]> {
  const parts = writes.map((w, i) => newThreadMessageSql(i, w));
  const q = Prisma.sql`WITH ${Prisma.join(
    parts.map((p) => p.ctes),
    ',',
  )}
    SELECT ${Prisma.join(
      parts.map((p) => p.columns),
      ', ',
    )}`;
  const [row] = await database.preparedWrite(q.text, q.values as unknown[]);
  return writes.map((_, i) => {
    const found = JSON.parse((row?.[`holds_${i}`] as string | null) ?? '[]') as [string, string][];
    return {
      written: Number(row?.[`n_${i}`] ?? 0) === 1,
      active: Number(row?.[`active_${i}`] ?? 0) === 1,
      holds: {
        blocked: found.filter(([kind]) => kind === 'blocked').map(([, value]) => value),
        suppressed: found.filter(([kind]) => kind === 'suppressed').map(([, value]) => value),
      },
    };
  });
}

/** Most sends one group-commit statement of {@link SendWriteQueue} takes. */
export const SEND_BATCH_MAX = 20;
/** Most raw bytes one group-commit statement of {@link SendWriteQueue} carries (the first send always goes). */
export const SEND_BATCH_BYTES = 1024 * 1024;

type WaitingSend = WaitingWrite<NewThreadMessage, NewThreadMessageResult>;

/**
 * Group commit of the send path's writes (issue 24), one queue per app: while one statement of
 * {@link insertNewThreadMessages} runs, the sends that come meanwhile wait and then go together in the next one (at
 * most {@link SEND_BATCH_MAX} sends and {@link SEND_BATCH_BYTES} of raw messages), so concurrent sends share a round
 * trip and a commit (one WAL flush) instead of one each. A send is only answered once its statement committed. A
 * batch the database refused (an SQLSTATE outside class 08: nothing was written) is written again send by send, so
 * a bad send fails alone; a lost connection fails the batch as it is (its commit may or may not have happened).
 */
export class SendWriteQueue {
  /** Sends waiting while a statement runs; undefined while none runs. */
  #waiting: WaitingSend[] | undefined;

  /** Writes one send (see {@link insertNewThreadMessages}); resolves after the commit of its statement. */
  write(database: Pick<Database, 'preparedWrite'>, w: NewThreadMessage): Promise<NewThreadMessageResult> {
    return new Promise((resolve, reject) => {
      const entry: WaitingSend = { write: w, resolve, reject };
      if (this.#waiting) {
        this.#waiting.push(entry);
        return;
      }
      this.#waiting = [];
      void this.#run(database, [entry]);
    });
  }

  async #run(database: Pick<Database, 'preparedWrite'>, first: WaitingSend[]): Promise<void> {
    let batch = first;
    while (batch.length > 0) {
      await settleBatch(batch, (ws) => insertNewThreadMessages(database, ws));
      const waiting = this.#waiting!;
      let take = 0;
      let bytes = 0;
      while (
        take < waiting.length &&
        take < SEND_BATCH_MAX &&
        (take === 0 || bytes + waiting[take]!.write.raw.length <= SEND_BATCH_BYTES)
      ) {
        bytes += waiting[take]!.write.raw.length;
        take++;
      }
      batch = waiting.splice(0, take);
    }
    this.#waiting = undefined;
  }
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
