import {
  type AgentJob,
  type EmailAttachment,
  type EmailIdentity,
  type EmailMessage,
  type EmailThread,
  Prisma,
} from '../../generated/prisma/client.js';
import { WRITE_OK } from '../events/event-log.js';
import type { Db, Tx } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';
import type { RowSelection } from './agent.store.js';
import { mergeParticipants } from './mail.rules.js';

/*
 * The store of threads, messages, their attachments' metadata and labels: every Prisma call and SQL text about
 * them (issue 23). Functions take the transaction (`Tx`) or the client they run on, plain parameters, and return
 * rows. The row types are re-exported here so services name them without importing Prisma.
 */

export type { EmailAttachment, EmailMessage, EmailThread };

/** A message with its agent job (if any) and its attachments in MIME order: what the message view shows. */
export type MessageWithDetails = EmailMessage & { agentJob?: AgentJob | null; attachments?: EmailAttachment[] };

/** The include that gives a {@link MessageWithDetails}. */
const DETAILS = { agentJob: true, attachments: { orderBy: { position: 'asc' } } } as const;

/** Runs `fn` in one database transaction (Prisma interactive transaction) and returns its result. */
export function inTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.$transaction(fn);
}

/** Threads of the account among `ids` (any order). */
export function threadsByIds(db: Tx, accountId: string, ids: readonly string[]): Promise<EmailThread[]> {
  return db.emailThread.findMany({ where: { id: { in: [...ids] }, accountId } });
}

/** The thread by id. @throws when there is none (Prisma's not-found error). */
export function threadById(db: Tx, threadId: string): Promise<EmailThread> {
  return db.emailThread.findUniqueOrThrow({ where: { id: threadId } });
}

/** The identity's thread, or null. */
export function threadOfIdentity(db: Tx, identityId: string, threadId: string): Promise<EmailThread | null> {
  return db.emailThread.findFirst({ where: { id: threadId, identityId } });
}

/** The account's thread with the adapter's `selection`, or null. */
export function threadRowSelected(
  db: Tx,
  accountId: string,
  threadId: string,
  selection: RowSelection,
): Promise<EmailThread | null> {
  return db.emailThread.findFirst({ ...selection, where: { id: threadId, accountId } }) as Promise<EmailThread | null>;
}

/** The identity's thread with every message (oldest first, with details), or null. */
export function threadWithMessages(
  db: Tx,
  identityId: string,
  threadId: string,
): Promise<(EmailThread & { messages: MessageWithDetails[] }) | null> {
  return db.emailThread.findFirst({
    where: { id: threadId, identityId },
    include: { messages: { orderBy: [{ sentAt: 'asc' }, { id: 'asc' }], include: DETAILS } },
  });
}

/**
 * One keyset window of the identity's threads, newest activity first (lastMessageAt, id descending; ascending
 * when `inverted`): rows after `after` and before `before` (decoded cursors), at most `limit`, only those with
 * `label` when given.
 */
export function threadWindow(
  db: Tx,
  identityId: string,
  w: {
    label?: string;
    after?: { at: Date; id: string };
    before?: { at: Date; id: string };
    limit: number;
    inverted: boolean;
  },
): Promise<EmailThread[]> {
  const { after, before } = w;
  const dir = w.inverted ? 'asc' : 'desc';
  return db.emailThread.findMany({
    where: {
      identityId,
      ...(w.label ? { labels: { has: w.label } } : {}),
      AND: [
        after ? { OR: [{ lastMessageAt: { lt: after.at } }, { lastMessageAt: after.at, id: { lt: after.id } }] } : {},
        before
          ? { OR: [{ lastMessageAt: { gt: before.at } }, { lastMessageAt: before.at, id: { gt: before.id } }] }
          : {},
      ],
    },
    orderBy: [{ lastMessageAt: dir }, { id: dir }],
    take: w.limit,
  });
}

/** The thread's labels, or null when it is gone. */
export async function threadLabels(tx: Tx, threadId: string): Promise<string[] | null> {
  const t = await tx.emailThread.findUnique({ where: { id: threadId }, select: { labels: true } });
  return t ? t.labels : null;
}

/** Writes the thread's labels. */
export async function writeThreadLabels(tx: Tx, threadId: string, labels: string[]): Promise<void> {
  await tx.emailThread.update({ where: { id: threadId }, data: { labels } });
}

/** Writes the message's labels. */
export async function writeMessageLabels(tx: Tx, messageRowId: string, labels: string[]): Promise<void> {
  await tx.emailMessage.update({ where: { id: messageRowId }, data: { labels } });
}

/** Writes the message's labels. @returns the message with its details. */
export function writeMessageLabelsDetailed(
  tx: Tx,
  messageRowId: string,
  labels: string[],
): Promise<MessageWithDetails> {
  return tx.emailMessage.update({ where: { id: messageRowId }, data: { labels }, include: DETAILS });
}

/** The message by row id. @throws when there is none (Prisma's not-found error). */
export function messageById(db: Tx, messageRowId: string): Promise<EmailMessage> {
  return db.emailMessage.findUniqueOrThrow({ where: { id: messageRowId } });
}

/** The identity's message with the RFC 5322 Message-ID `messageId` (unique per identity), or null. */
export function messageOfIdentity(db: Tx, identityId: string, messageId: string): Promise<EmailMessage | null> {
  return db.emailMessage.findUnique({ where: { identityId_messageId: { identityId, messageId } } });
}

/** The identity's message with Message-ID `messageId`, or null (the same as {@link messageOfIdentity}, as a filter). */
export function findMessageOfIdentity(db: Tx, identityId: string, messageId: string): Promise<EmailMessage | null> {
  return db.emailMessage.findFirst({ where: { identityId, messageId } });
}

/** The identity's outbound message with Message-ID `messageId` (what a DSN reports on), or null. */
export function outboundMessageOfIdentity(db: Tx, identityId: string, messageId: string): Promise<EmailMessage | null> {
  return db.emailMessage.findFirst({ where: { identityId, messageId, direction: 'outbound' } });
}

/** Inserts a message. */
export function insertMessage(tx: Tx, data: Prisma.EmailMessageUncheckedCreateInput): Promise<EmailMessage> {
  return tx.emailMessage.create({ data });
}

/** The thread of the identity's newest message among the Message-IDs `refs`, or null (RFC 5322 3.6.4 threading). */
export async function threadOfAnyMessage(tx: Tx, identityId: string, refs: string[]): Promise<EmailThread | null> {
  const parent =
    refs.length > 0
      ? await tx.emailMessage.findFirst({
          where: { identityId, messageId: { in: refs } },
          orderBy: { sentAt: 'desc' },
          select: { threadId: true },
        })
      : null;
  return parent ? tx.emailThread.findUniqueOrThrow({ where: { id: parent.threadId } }) : null;
}

/** The thread's newest message (sentAt, id). @throws when the thread has none. */
export function newestMessageOfThread(db: Tx, threadId: string): Promise<EmailMessage> {
  return db.emailMessage.findFirstOrThrow({ where: { threadId }, orderBy: [{ sentAt: 'desc' }, { id: 'desc' }] });
}

/** The thread's newest inbound message, or null. */
export function newestInboundOfThread(db: Tx, threadId: string): Promise<EmailMessage | null> {
  return db.emailMessage.findFirst({
    where: { threadId, direction: 'inbound' },
    orderBy: [{ sentAt: 'desc' }, { id: 'desc' }],
  });
}

/** The newest `take` messages of `inbound`'s thread other than it, from or to `sender`, newest first. */
export function earlierMessagesWith(
  db: Tx,
  inbound: Pick<EmailMessage, 'id' | 'threadId'>,
  sender: string,
  take: number,
): Promise<EmailMessage[]> {
  return db.emailMessage.findMany({
    where: {
      threadId: inbound.threadId,
      id: { not: inbound.id },
      OR: [{ from: sender }, { to: { has: sender } }],
    },
    orderBy: [{ sentAt: 'desc' }, { id: 'desc' }],
    take,
  });
}

/** The outbound message still claimed by `token`, or null. */
export function claimedMessage(db: Tx, messageRowId: string, token: string): Promise<EmailMessage | null> {
  return db.emailMessage.findFirst({ where: { id: messageRowId, lockedBy: token } });
}

/**
 * Writes `data` to the message while the claim `token` holds it, and releases the claim.
 * @returns how many rows were written (0 when the claim was lost).
 */
export async function updateClaimedMessage(
  db: Tx,
  messageRowId: string,
  token: string,
  data: Partial<Pick<EmailMessage, 'status' | 'statusDetail' | 'nextAttemptAt'>>,
): Promise<number> {
  const { count } = await db.emailMessage.updateMany({
    where: { id: messageRowId, lockedBy: token },
    data: { ...data, lockedBy: null, lockedUntil: null },
  });
  return count;
}

/**
 * Guard of a single-statement write (EventLog.write): the claim `token` still holds message `messageRowId`. The row
 * is locked until the statement commits, so a dispatcher that took the message over cannot slip in between the
 * guard and {@link finishClaimedSql}.
 */
export function claimStillHeld(messageRowId: string, token: string): Prisma.Sql {
  return Prisma.sql`EXISTS (SELECT 1 FROM email_messages WHERE id = ${messageRowId} AND locked_by = ${token} FOR UPDATE)`;
}

/**
 * A change of a single-statement write (see WRITE_OK): the final status of a claimed message, releasing the claim
 * (what {@link updateClaimedMessage} writes with `nextAttemptAt: null`).
 */
export function finishClaimedSql(
  messageRowId: string,
  token: string,
  data: { status: string; statusDetail: string },
): Prisma.Sql {
  return Prisma.sql`UPDATE email_messages SET status = ${data.status}, status_detail = ${data.statusDetail},
      next_attempt_at = NULL, locked_by = NULL, locked_until = NULL
    WHERE id = ${messageRowId} AND locked_by = ${token} AND ${WRITE_OK} RETURNING id`;
}

/** The job queue's condition on `email_messages` rows (alias `j`) that are work: queued outbound mail. */
export function queuedOutboundMessages(): Prisma.Sql {
  return Prisma.sql`j.status = 'queued'`;
}

/** Inserts the attachment metadata rows of a stored message. */
export async function insertAttachments(
  tx: Tx,
  rows: Pick<
    EmailAttachment,
    'id' | 'accountId' | 'messageRowId' | 'position' | 'filename' | 'contentType' | 'size' | 'inline' | 'contentId'
  >[],
): Promise<void> {
  await tx.emailAttachment.createMany({ data: rows });
}

/** The message's attachment `attachmentId`, or null. */
export function attachmentOfMessage(
  db: Tx,
  messageRowId: string,
  attachmentId: string,
): Promise<EmailAttachment | null> {
  return db.emailAttachment.findFirst({ where: { id: attachmentId, messageRowId } });
}

/** The message's attachments in MIME order. */
export function attachmentsOfMessage(db: Tx, messageRowId: string): Promise<EmailAttachment[]> {
  return db.emailAttachment.findMany({ where: { messageRowId }, orderBy: { position: 'asc' } });
}

/**
 * The thread upsert of every stored message, inbound or outbound: `thread` gets one more message (count, last
 * activity, participants and labels merged into the row as it is when updated, see {@link addToThreadSql}); with no
 * thread, a new one is created with `subject`.
 * @returns the thread id.
 */
export async function addToThread(
  tx: Tx,
  identity: EmailIdentity,
  thread: Pick<EmailThread, 'id' | 'participants' | 'labels'> | null,
  m: { subject: string; participants: string[]; now: Date; labels?: string[] },
): Promise<string> {
  const { sql, threadId } = addToThreadSql(identity, thread, uuidv7(), m);
  await tx.$executeRaw`WITH write_ok AS (SELECT true AS ok) ${sql}`;
  return threadId;
}

/**
 * The identity's thread holding any of `refs`, updated with one more message; otherwise a new thread.
 * @returns the thread id.
 */
export async function threadFor(
  tx: Tx,
  identity: EmailIdentity,
  refs: string[],
  m: { subject: string; participants: string[]; now: Date; labels?: string[] },
): Promise<string> {
  return addToThread(tx, identity, await threadOfAnyMessage(tx, identity.id, refs), m);
}

/*
 * Single-statement inbound delivery (issue 24): the changes of one stored inbound message as CTE bodies of an
 * EventLog.write (see WRITE_OK), so the thread, the message, its attachments' metadata and its events commit in ONE
 * statement instead of an interactive transaction of six round trips. Every value is cast: in `INSERT … SELECT`
 * PostgreSQL resolves an untyped parameter as text, which it does not assign to text[], jsonb or timestamptz.
 */

/** An opaque SQL fragment for the single-statement event write (EventLog.write `guard` / `changes`). */
export type SqlFragment = Prisma.Sql;

/**
 * Guard of a single-statement inbound delivery that joins `thread` (read before): it still exists with the
 * participants and labels read, as of the statement's snapshot (else the caller's transaction re-reads it). A change
 * that commits while the statement runs is not caught here; {@link addToThreadSql} merges into the row as the UPDATE
 * finds it, so it is kept. A message already stored under its Message-ID is refused by the unique index instead (see
 * {@link isMessageIdTaken}), so a delivery starting a thread needs no guard and can share a group commit.
 */
export function threadUnchangedSql(thread: Pick<EmailThread, 'id' | 'participants' | 'labels'>): SqlFragment {
  return Prisma.sql`EXISTS (SELECT 1 FROM email_threads WHERE id = ${thread.id}
    AND participants = ${thread.participants}::text[] AND labels = ${thread.labels}::text[])`;
}

/**
 * Whether `err` (from a single-statement write) is PostgreSQL's unique violation (SQLSTATE 23505) of the identity's
 * Message-ID (`email_messages_identity_id_message_id_key`): the message is already stored, nothing was written.
 */
export function isMessageIdTaken(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; constraint?: unknown };
  return (
    e.code === '23505' && (e.constraint === undefined || e.constraint === 'email_messages_identity_id_message_id_key')
  );
}

/**
 * The changes of {@link addToThread} as a CTE body: `thread` (read before, see {@link threadUnchangedSql}) gets one
 * more message; with no thread, a new one `newId` is inserted with `subject`. @returns the SQL and the thread id.
 */
export function addToThreadSql(
  identity: Pick<EmailIdentity, 'id' | 'accountId'>,
  thread: Pick<EmailThread, 'id' | 'participants' | 'labels'> | null,
  newId: string,
  m: { subject: string; participants: string[]; now: Date; labels?: string[] },
): { sql: SqlFragment; threadId: string } {
  if (thread) {
    // Merged in SQL into the row as the UPDATE finds it, not into the copy read before: when another write of the
    // thread commits while this statement waits for the row (two replies in flight), PostgreSQL re-evaluates these
    // expressions on the committed row (READ COMMITTED), so neither write's participants or labels are lost, and
    // `last_message_at` only moves forward (an older message committing after a newer one keeps the newer time).
    const more = mergeParticipants([], m.participants);
    const labels = [...new Set(m.labels ?? [])];
    return {
      threadId: thread.id,
      sql: Prisma.sql`UPDATE email_threads SET message_count = message_count + 1,
        last_message_at = GREATEST(last_message_at, ${m.now}::timestamptz),
        participants = participants || ARRAY(SELECT p FROM unnest(${more}::text[]) WITH ORDINALITY AS u(p, o)
          WHERE p <> ALL (email_threads.participants) ORDER BY o),
        labels = labels || ARRAY(SELECT l FROM unnest(${labels}::text[]) WITH ORDINALITY AS u(l, o)
          WHERE l <> ALL (email_threads.labels) ORDER BY o)
        WHERE id = ${thread.id} AND ${WRITE_OK}`,
    };
  }
  return {
    threadId: newId,
    sql: Prisma.sql`INSERT INTO email_threads (id, account_id, identity_id, subject, participants, labels, message_count,
        last_message_at, created_at)
      SELECT ${newId}, ${identity.accountId}, ${identity.id}, ${m.subject}, ${mergeParticipants([], m.participants)}::text[],
        ${[...new Set(m.labels ?? [])]}::text[], 1, ${m.now}::timestamptz, ${m.now}::timestamptz WHERE ${WRITE_OK}`,
  };
}

/** The columns a stored inbound message writes (the rest keep their defaults). */
export type InboundMessageRow = Pick<
  EmailMessage,
  | 'id'
  | 'accountId'
  | 'identityId'
  | 'threadId'
  | 'messageId'
  | 'direction'
  | 'from'
  | 'to'
  | 'subject'
  | 'body'
  | 'cc'
  | 'replyTo'
  | 'html'
  | 'extractedText'
  | 'labels'
  | 'size'
  | 'rawBlobId'
  | 'inReplyTo'
  | 'references'
  | 'autoSubmitted'
  | 'status'
  | 'sentAt'
  | 'authenticationResults'
> & { authentication: Record<string, unknown> | null };

/** {@link insertMessage} as a CTE body of a single-statement write (runs where WRITE_OK holds). */
export function insertMessageSql(r: InboundMessageRow): SqlFragment {
  return Prisma.sql`INSERT INTO email_messages (id, account_id, identity_id, thread_id, message_id, direction,
      from_address, to_addresses, subject, body, cc_addresses, reply_to, html, extracted_text, labels, size, raw_blob_id,
      in_reply_to, "references", auto_submitted, status, sent_at, authentication, authentication_results)
    SELECT ${r.id}, ${r.accountId}, ${r.identityId}, ${r.threadId}, ${r.messageId}, ${r.direction}, ${r.from},
      ${r.to}::text[], ${r.subject}, ${r.body}, ${r.cc}::text[], ${r.replyTo}::text, ${r.html}::text,
      ${r.extractedText}::text, ${r.labels}::text[], ${r.size}::int, ${r.rawBlobId}::text, ${r.inReplyTo}::text,
      ${r.references}::text[], ${r.autoSubmitted}::text, ${r.status}, ${r.sentAt}::timestamptz,
      ${r.authentication === null ? null : JSON.stringify(r.authentication)}::jsonb, ${r.authenticationResults}::text
    WHERE ${WRITE_OK}`;
}

/** {@link insertAttachments} as a CTE body of a single-statement write (runs where WRITE_OK holds). */
export function insertAttachmentsSql(
  rows: Pick<
    EmailAttachment,
    'id' | 'accountId' | 'messageRowId' | 'position' | 'filename' | 'contentType' | 'size' | 'inline' | 'contentId'
  >[],
): SqlFragment {
  const col = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k]);
  return Prisma.sql`INSERT INTO email_attachments (id, account_id, message_row_id, position, filename, content_type, size,
      inline, content_id)
    SELECT a.id, a.account_id, a.message_row_id, a.position, a.filename, a.content_type, a.size, a.inline, a.content_id
      FROM unnest(${col('id')}::text[], ${col('accountId')}::text[], ${col('messageRowId')}::text[],
                  ${col('position')}::int[], ${col('filename')}::text[], ${col('contentType')}::text[],
                  ${col('size')}::int[], ${col('inline')}::boolean[], ${col('contentId')}::text[])
        AS a(id, account_id, message_row_id, position, filename, content_type, size, inline, content_id)
     WHERE ${WRITE_OK}`;
}
