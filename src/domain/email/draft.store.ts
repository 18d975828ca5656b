import { Prisma } from '../../generated/prisma/client.js';
import type { Tx } from '../kernel/db.js';

/*
 * Store of email drafts (issue 21 item 3; issue 23's store convention): every Prisma call and SQL text of drafts.
 * Services get the plain shapes below back. A draft's attachment bytes are blobs (src/domain/email/blobs.ts).
 */

/** One attachment of a draft: metadata plus the blob holding its decoded bytes. */
export interface DraftAttachmentRecord {
  id: string;
  position: number;
  filename: string | null;
  contentType: string;
  /** Decoded size in bytes. */
  size: number;
  blobId: string;
}

/** The content fields of a draft, as written by create and update. */
export interface DraftFields {
  threadId: string | null;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string | null;
  subject: string;
  body: string | null;
  html: string | null;
  labels: string[];
  inReplyTo: string | null;
  references: string[];
  sendAt: Date | null;
}

/** A stored draft (table `email_drafts`): its content fields and its bookkeeping. */
export interface DraftRecord extends DraftFields {
  id: string;
  accountId: string;
  identityId: string;
  createdBy: 'user' | 'agent';
  reviewReason: string | null;
  lastError: string | null;
  attempts: number;
  lockedBy: string | null;
  lockedUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
  attachments: DraftAttachmentRecord[];
}

const withAttachments = { attachments: { orderBy: { position: 'asc' as const } } };

function record(row: Prisma.EmailDraftGetPayload<{ include: typeof withAttachments }>): DraftRecord {
  const { attachments, createdBy, ...rest } = row;
  return {
    ...rest,
    createdBy: createdBy as DraftRecord['createdBy'],
    attachments: attachments.map((a) => ({
      id: a.id,
      position: a.position,
      filename: a.filename,
      contentType: a.contentType,
      size: a.size,
      blobId: a.blobId,
    })),
  };
}

/** Inserts a draft and its attachments' metadata (their blobs are already written). */
export async function insertDraft(
  db: Tx,
  draft: DraftFields & {
    id: string;
    accountId: string;
    identityId: string;
    createdBy: 'user' | 'agent';
    reviewReason: string | null;
    now: Date;
  },
  attachments: Omit<DraftAttachmentRecord, 'position'>[],
): Promise<DraftRecord> {
  const { now, ...fields } = draft;
  const row = await db.emailDraft.create({
    data: {
      ...fields,
      createdAt: now,
      updatedAt: now,
      attachments: { create: attachments.map((a, position) => ({ ...a, position })) },
    },
    include: withAttachments,
  });
  return record(row);
}

/** The identity's draft, or undefined. */
export async function findDraft(db: Tx, identityId: string, draftId: string): Promise<DraftRecord | undefined> {
  const row = await db.emailDraft.findFirst({ where: { id: draftId, identityId }, include: withAttachments });
  return row ? record(row) : undefined;
}

/**
 * The identity's draft, row-locked for the rest of the transaction (`FOR UPDATE`), so a request and the scheduled
 * sender never act on one draft at once. Undefined when unknown.
 */
export async function lockDraft(tx: Tx, identityId: string, draftId: string): Promise<DraftRecord | undefined> {
  const locked = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM email_drafts WHERE id = ${draftId} AND identity_id = ${identityId} FOR UPDATE`;
  if (locked.length === 0) return undefined;
  return findDraft(tx, identityId, draftId);
}

/** A page of the identity's drafts, oldest first (id is a UUIDv7), after the id `after`. */
export async function listDraftRows(
  db: Tx,
  identityId: string,
  window: { after?: string; take: number },
): Promise<DraftRecord[]> {
  const rows = await db.emailDraft.findMany({
    where: { identityId, ...(window.after ? { id: { gt: window.after } } : {}) },
    orderBy: { id: 'asc' },
    take: window.take,
    include: withAttachments,
  });
  return rows.map(record);
}

/**
 * Replaces a draft's content fields (and, when `attachments` is given, its attachments' metadata), clearing
 * `lastError` and the attempt count. @returns the draft as stored.
 */
export async function updateDraftRow(
  tx: Tx,
  draftId: string,
  fields: Partial<DraftFields>,
  attachments: Omit<DraftAttachmentRecord, 'position'>[] | undefined,
  now: Date,
): Promise<DraftRecord> {
  if (attachments) await tx.emailDraftAttachment.deleteMany({ where: { draftId } });
  const row = await tx.emailDraft.update({
    where: { id: draftId },
    data: {
      ...fields,
      lastError: null,
      attempts: 0,
      updatedAt: now,
      ...(attachments ? { attachments: { create: attachments.map((a, position) => ({ ...a, position })) } } : {}),
    },
    include: withAttachments,
  });
  return record(row);
}

/** Deletes a draft (its attachments' metadata goes with it; the caller deletes their blobs). */
export async function deleteDraftRow(tx: Tx, draftId: string): Promise<void> {
  await tx.emailDraft.deleteMany({ where: { id: draftId } });
}

/**
 * Records a failed scheduled send, fenced by the claim `token`: `lastError` set, `sendAt` cleared (the draft stays
 * for a person), the claim released. @returns false when the claim was lost (nothing written).
 */
export async function failScheduledDraft(
  tx: Tx,
  draftId: string,
  token: string,
  error: string,
  now: Date,
): Promise<boolean> {
  const { count } = await tx.emailDraft.updateMany({
    where: { id: draftId, lockedBy: token },
    data: { lastError: error, sendAt: null, lockedBy: null, lockedUntil: null, updatedAt: now },
  });
  return count > 0;
}

/** The claimable condition of the scheduled-send job kind over the job alias `j`: a draft with a `send_at`. */
export const scheduledDraftCondition = (): Prisma.Sql => Prisma.sql`j.send_at IS NOT NULL`;

/** The thread of a reply draft, if it still belongs to the identity (plain fields the send path needs). */
export async function findDraftThread(db: Tx, identityId: string, threadId: string) {
  return db.emailThread.findFirst({ where: { id: threadId, identityId } });
}

/** How many drafts the identity holds. */
export function countDrafts(db: Tx, identityId: string): Promise<number> {
  return db.emailDraft.count({ where: { identityId } });
}

/** The draft `id` while the claim `token` holds it (the scheduled sender's view), or undefined. */
export async function findClaimedDraft(
  db: Tx,
  id: string,
  token: string,
): Promise<{ id: string; accountId: string; identityId: string } | undefined> {
  const row = await db.emailDraft.findFirst({
    where: { id, lockedBy: token },
    select: { id: true, accountId: true, identityId: true },
  });
  return row ?? undefined;
}

/** Releases the claim `token` on a draft (nothing else changes). */
export async function releaseDraftClaim(tx: Tx, id: string, token: string): Promise<void> {
  await tx.emailDraft.updateMany({ where: { id, lockedBy: token }, data: { lockedBy: null, lockedUntil: null } });
}
