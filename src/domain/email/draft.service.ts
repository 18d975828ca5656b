import { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { ConflictError, DomainError, NotFoundError, UnprocessableError, ValidationError } from '../errors.js';
import type { Emit } from '../events/event-log.js';
import type { DomainContext } from '../kernel/context.js';
import type { Tx } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';
import type { ClaimedJob, JobKind } from '../kernel/jobs.js';
import { decodeCursor, encodeCursor, keysetPage, pageQuery } from '../paging.js';
import { decodeAttachments } from './attachments.js';
import { assertNotBlocked } from './blocklist.service.js';
import {
  countDrafts,
  type DraftAttachmentRecord,
  type DraftFields,
  type DraftRecord,
  deleteDraftRow,
  failScheduledDraft,
  findClaimedDraft,
  findDraft,
  findDraftThread,
  insertDraft,
  listDraftRows,
  lockDraft,
  releaseDraftClaim,
  scheduledDraftCondition,
  updateDraftRow,
} from './draft.store.js';
import {
  address,
  attachmentInput,
  body,
  MAX_ATTACHMENTS,
  MAX_HTML_CHARS,
  recipientCount,
  recipients,
  sendFields,
  subject,
} from './email.schemas.js';
import { findActiveIdentity, findIdentity } from './identity.service.js';
import type { EmailIdentity } from './identity.store.js';
import { normalizeAddress } from './mail.rules.js';
import { deleteBlob, readBlob, readBlobBuffer, writeBlob } from './mail-blob.store.js';
import type { OutgoingAttachment } from './mail-transport.port.js';
import { dispatchMessage, queueOutbound, replyPlan, type SentRef } from './outbound.service.js';
import { assertNotSuppressed } from './suppressions.service.js';

/** The job kind that sends drafts whose `sendAt` has come (src/infra/jobs; docs/jobs.md). */
export const DRAFT_SEND_JOB = 'email-draft-send';
/** Scheduled sends attempted before the draft is given back to a person with `lastError` (transient errors). */
export const DRAFT_SEND_MAX_ATTEMPTS = 5;
/** Drafts sent at once per instance by the scheduler. */
const DRAFT_SEND_CONCURRENCY = 5;
/** Farthest a `sendAt` may lie ahead (366 days, in ms). */
export const MAX_SEND_AT_AHEAD_MS = 366 * 24 * 3600_000;
/** Most drafts one identity holds. */
export const MAX_DRAFTS_PER_IDENTITY = 1000;

const toList = z
  .union([address, recipients])
  .transform((v) => (typeof v === 'string' ? [v] : v))
  .describe('Recipient address, or a list of them (may be empty while drafting).');
const sendAt = z
  .string()
  .datetime({ offset: true })
  .transform((v) => new Date(v))
  .describe('ISO 8601 time at which the job queue sends the draft by itself (once, across instances).');

/**
 * Body of POST /api/email/identities/{id}/drafts (issue 21 item 3): the send fields, every one optional while
 * drafting, plus `threadId` (a reply draft: `to`, `subject`, In-Reply-To and References default to the reply's)
 * and `sendAt`. A draft with `sendAt` must be complete (see {@link assertComplete}).
 */
export const createDraftInput = z
  .object({
    threadId: z.string().min(1).max(200).optional().describe('Thread to reply on; omitted: a new thread.'),
    to: toList.optional(),
    cc: sendFields.cc,
    bcc: sendFields.bcc,
    replyTo: address.optional().describe('Reply-To address.'),
    subject: subject.optional(),
    body: body.optional(),
    html: sendFields.html,
    attachments: sendFields.attachments,
    labels: sendFields.labels,
    sendAt: sendAt.optional(),
  })
  .strict()
  .superRefine(recipientCount);
/** Parsed createDraftInput. */
export type CreateDraftInput = z.output<typeof createDraftInput>;

/**
 * Body of PATCH …/drafts/{draftId}: any subset of the creation fields but `threadId`; `null` clears `replyTo`,
 * `body`, `html` and `sendAt` (clearing `sendAt` cancels a scheduled send); `attachments` replaces them all.
 */
export const updateDraftInput = z
  .object({
    to: toList.optional(),
    cc: sendFields.cc,
    bcc: sendFields.bcc,
    replyTo: address.nullable().optional(),
    subject: subject.optional(),
    body: body.nullable().optional(),
    html: z.string().max(MAX_HTML_CHARS).nullable().optional(),
    attachments: z.array(attachmentInput).max(MAX_ATTACHMENTS).optional(),
    labels: sendFields.labels,
    sendAt: sendAt.nullable().optional(),
  })
  .strict()
  .superRefine(recipientCount);
/** Parsed updateDraftInput. */
export type UpdateDraftInput = z.output<typeof updateDraftInput>;

/** Query of GET …/drafts: the one paging rule (`limit` 1–200, default 50, `cursor`; docs/conventions.md). */
export const listDraftsInput = pageQuery;

/** Path parameters `{id}/drafts/{draftId}`. */
export const draftParams = z.object({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, { message: 'must be an id: 1 to 100 characters from A-Z a-z 0-9 _ -' }),
  draftId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, { message: 'must be an id: 1 to 100 characters from A-Z a-z 0-9 _ -' }),
});

/** One attachment of a draft as both surfaces show it. */
export interface DraftAttachmentView {
  attachmentId: string;
  filename: string | null;
  contentType: string;
  /** Decoded size in bytes. */
  size: number;
}

/** REST/GraphQL shape of a draft (issue 21 item 3; AgentMail/Nylas-like). Times are ISO 8601 UTC. */
export interface DraftView {
  draftId: string;
  identityId: string;
  /** The thread a reply draft answers on; null for a new thread. */
  threadId: string | null;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string | null;
  subject: string;
  body: string | null;
  html: string | null;
  attachments: DraftAttachmentView[];
  labels: string[];
  /** Message-ID the draft answers (reply drafts). */
  inReplyTo: string | null;
  references: string[];
  /** When the job queue sends it; null: only on request. */
  sendAt: string | null;
  /** `user` (written through the API) or `agent` (the identity's agent in replyMode draft). */
  createdBy: 'user' | 'agent';
  /** Why a person should look before sending (e.g. SENDER_NOT_AUTHENTICATED); null otherwise. */
  reviewReason: string | null;
  /** Why the last scheduled send failed (`CODE: message`); null otherwise. */
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Converts a record. */
export function draftView(d: DraftRecord): DraftView {
  return {
    draftId: d.id,
    identityId: d.identityId,
    threadId: d.threadId,
    to: d.to,
    cc: d.cc,
    bcc: d.bcc,
    replyTo: d.replyTo,
    subject: d.subject,
    body: d.body,
    html: d.html,
    attachments: d.attachments.map((a) => ({
      attachmentId: a.id,
      filename: a.filename,
      contentType: a.contentType,
      size: a.size,
    })),
    labels: d.labels,
    inReplyTo: d.inReplyTo,
    references: d.references,
    sendAt: d.sendAt?.toISOString() ?? null,
    createdBy: d.createdBy,
    reviewReason: d.reviewReason,
    lastError: d.lastError,
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
  };
}

type DraftEvent = 'email.draft.created' | 'email.draft.updated' | 'email.draft.sent' | 'email.draft.deleted';

/**
 * Emits a draft event on channel `email`: `{event, data: {identityId, draftId, threadId, subject, to, sendAt,
 * createdBy, ...extra}}` (`email.draft.sent` adds `messageId` and the sent message's `threadId`; `email.draft.failed`
 * adds `error`). Carrying `threadId`, reply drafts show up in GraphQL `threadUpdated`.
 */
async function emitDraft(
  emit: Emit,
  type: DraftEvent | 'email.draft.failed',
  d: DraftRecord,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await emit(d.accountId, type, {
    event: type,
    data: {
      identityId: d.identityId,
      draftId: d.id,
      threadId: d.threadId,
      subject: d.subject,
      to: d.to,
      sendAt: d.sendAt?.toISOString() ?? null,
      createdBy: d.createdBy,
      ...extra,
    },
  });
}

/** Lower-cased, de-duplicated addresses. */
const unique = (list: string[]) => [...new Set(list.map(normalizeAddress))];

/** Checks `sendAt` against the clock: in the future and at most {@link MAX_SEND_AT_AHEAD_MS} ahead. */
function checkSendAt(ctx: DomainContext, at: Date | null | undefined): void {
  if (!at) return;
  const now = ctx.clock.now().getTime();
  if (at.getTime() <= now) throw ValidationError.field('sendAt', 'IN_THE_PAST', 'sendAt must be in the future');
  if (at.getTime() > now + MAX_SEND_AT_AHEAD_MS) {
    throw ValidationError.field('sendAt', 'TOO_FAR', 'sendAt must be at most 366 days ahead');
  }
}

/**
 * What a draft needs before it can go: at least one recipient, a subject, and `body` or `html`.
 * @throws UnprocessableError 422 DRAFT_INCOMPLETE naming the first missing field (`to`, `subject`, `body`).
 */
export function assertComplete(d: Pick<DraftFields, 'to' | 'cc' | 'bcc' | 'subject' | 'body' | 'html'>): void {
  const missing =
    d.to.length === 0
      ? 'to'
      : d.subject.trim() === ''
        ? 'subject'
        : (d.body ?? '') === '' && (d.html ?? '') === ''
          ? 'body'
          : undefined;
  if (missing) {
    throw new UnprocessableError(
      'DRAFT_INCOMPLETE',
      `the draft cannot be sent without ${missing === 'body' ? 'body or html' : missing}`,
      missing,
    );
  }
}

/** A draft whose claim another instance holds (the scheduled send runs now). */
function assertNotSending(ctx: DomainContext, d: DraftRecord): void {
  if (d.lockedBy && d.lockedUntil && d.lockedUntil.getTime() > ctx.clock.now().getTime()) {
    throw new ConflictError('DRAFT_SENDING', `draft ${d.id} is being sent right now (sendAt came)`, 'draftId');
  }
}

/** Writes the decoded attachments as blobs (bytes stored once). */
async function storeDraftAttachments(
  tx: Tx,
  list: OutgoingAttachment[],
  now: Date,
): Promise<Omit<DraftAttachmentRecord, 'position'>[]> {
  const out: Omit<DraftAttachmentRecord, 'position'>[] = [];
  for (const a of list) {
    const blob = await writeBlob(tx, a.content, now);
    out.push({ id: uuidv7(), filename: a.filename, contentType: a.contentType, size: blob.size, blobId: blob.id });
  }
  return out;
}

async function dropBlobs(tx: Tx, list: { blobId: string }[]): Promise<void> {
  for (const a of list) await deleteBlob(tx, a.blobId);
}

async function draftOrThrow(db: Tx, identityId: string, draftId: string, lock = false): Promise<DraftRecord> {
  const d = lock ? await lockDraft(db, identityId, draftId) : await findDraft(db, identityId, draftId);
  if (!d) throw new NotFoundError('Draft', draftId, 'draftId');
  return d;
}

/**
 * Writes a draft on `identity` inside `tx` and emits `email.draft.created`: the shared step of
 * {@link createDraft} (a person) and the agent in replyMode `draft` (src/domain/email/agent.responder.ts).
 */
export async function writeDraft(
  tx: Tx,
  emit: Emit,
  ctx: DomainContext,
  identity: Pick<EmailIdentity, 'id' | 'accountId'>,
  fields: DraftFields,
  meta: { createdBy: 'user' | 'agent'; reviewReason: string | null; attachments?: OutgoingAttachment[] },
): Promise<DraftRecord> {
  const now = ctx.clock.now();
  const attachments = await storeDraftAttachments(tx, meta.attachments ?? [], now);
  const draft = await insertDraft(
    tx,
    {
      ...fields,
      id: uuidv7(),
      accountId: identity.accountId,
      identityId: identity.id,
      createdBy: meta.createdBy,
      reviewReason: meta.reviewReason,
      now,
    },
    attachments,
  );
  await emitDraft(emit, 'email.draft.created', draft);
  if (draft.sendAt) await ctx.jobs.notify(tx, DRAFT_SEND_JOB);
  return draft;
}

/**
 * POST /api/email/identities/{id}/drafts (issue 21 item 3): writes a draft (201) and emits `email.draft.created`.
 * With `threadId` it is a reply draft: `to` defaults to the thread's reply recipient, `subject` to `Re: …`, and
 * In-Reply-To/References are those of the thread's newest message. `data` is parsed at the door by
 * `createDraftInput`.
 * @throws NotFoundError (identity `id`, `threadId`); UnprocessableError IDENTITY_DEPROVISIONING, DRAFT_INCOMPLETE
 *   (with `sendAt`), DRAFT_LIMIT_REACHED; ValidationError `sendAt` IN_THE_PAST / TOO_FAR; PayloadTooLargeError
 *   ATTACHMENTS_TOO_LARGE.
 */
export async function createDraft(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  data: CreateDraftInput,
): Promise<DraftView> {
  requireScope(actor, 'email');
  const identity = await findActiveIdentity(ctx, actor.accountId, identityId);
  checkSendAt(ctx, data.sendAt);
  const attachments = decodeAttachments(data.attachments);
  const count = await countDrafts(ctx.db, identity.id);
  if (count >= MAX_DRAFTS_PER_IDENTITY) {
    throw new UnprocessableError(
      'DRAFT_LIMIT_REACHED',
      `an identity holds at most ${MAX_DRAFTS_PER_IDENTITY} drafts; send or delete some first`,
    );
  }
  const thread = data.threadId ? await findDraftThread(ctx.db, identity.id, data.threadId) : null;
  if (data.threadId && !thread) throw new NotFoundError('Thread', data.threadId, 'threadId');
  const draft = await ctx.events.transaction(async (tx, emit) => {
    const plan = thread ? await replyPlan(tx, thread) : undefined;
    const fields: DraftFields = {
      threadId: thread?.id ?? null,
      to: unique(data.to ?? (plan ? [plan.to] : [])),
      cc: unique(data.cc ?? []),
      bcc: unique(data.bcc ?? []),
      replyTo: data.replyTo ? normalizeAddress(data.replyTo) : null,
      subject: data.subject ?? plan?.subject ?? '',
      body: data.body ?? null,
      html: data.html ?? null,
      labels: data.labels ?? [],
      inReplyTo: plan?.inReplyTo ?? null,
      references: plan?.references ?? [],
      sendAt: data.sendAt ?? null,
    };
    if (fields.sendAt) assertComplete(fields);
    return writeDraft(tx, emit, ctx, identity, fields, { createdBy: 'user', reviewReason: null, attachments });
  });
  return draftView(draft);
}

/** GET …/drafts: the identity's drafts, oldest first; `nextCursor` null on the last page. @throws NotFoundError. */
export async function listDrafts(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  query: z.output<typeof listDraftsInput>,
): Promise<{ drafts: DraftView[]; nextCursor: string | null }> {
  requireScope(actor, 'email');
  const identity = await findIdentity(ctx, actor.accountId, identityId);
  const after = decodeCursor(query.cursor);
  const page = await keysetPage(query.limit, (take) => listDraftRows(ctx.db, identity.id, { after, take }));
  return { drafts: page.items.map(draftView), nextCursor: page.last ? encodeCursor(page.last.id) : null };
}

/** GET …/drafts/{draftId}. @throws NotFoundError (`id` or `draftId`). */
export async function getDraft(ctx: DomainContext, actor: Actor, identityId: string, draftId: string) {
  requireScope(actor, 'email');
  const identity = await findIdentity(ctx, actor.accountId, identityId);
  return draftView(await draftOrThrow(ctx.db, identity.id, draftId));
}

/** Path parameters `{id}/drafts/{draftId}/attachments/{attachmentId}`. */
export const draftAttachmentParams = draftParams.extend({
  attachmentId: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, { message: 'must be an id' }),
});

/**
 * GET …/drafts/{draftId}/attachments/{attachmentId}: the attachment's metadata and its decoded bytes as a stream
 * (read from the blob a chunk at a time), so a reviewer can check what will be sent.
 * @throws NotFoundError (`id`, `draftId` or `attachmentId`).
 */
export async function openDraftAttachment(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  draftId: string,
  attachmentId: string,
): Promise<{ attachment: DraftAttachmentView; stream: NodeJS.ReadableStream }> {
  requireScope(actor, 'email');
  const identity = await findIdentity(ctx, actor.accountId, identityId);
  const d = await draftOrThrow(ctx.db, identity.id, draftId);
  const a = d.attachments.find((x) => x.id === attachmentId);
  if (!a) throw new NotFoundError('Attachment', attachmentId, 'attachmentId');
  return {
    attachment: { attachmentId: a.id, filename: a.filename, contentType: a.contentType, size: a.size },
    stream: readBlob(ctx.db, a.blobId),
  };
}

/**
 * PATCH …/drafts/{draftId}: changes the given fields and emits `email.draft.updated`; `sendAt: null` cancels a
 * scheduled send, a new `sendAt` reschedules it (the draft must then be complete). Clears `lastError`.
 * `data` is parsed at the door by `updateDraftInput`.
 * @throws NotFoundError; ConflictError DRAFT_SENDING (its scheduled send is running); UnprocessableError
 *   DRAFT_INCOMPLETE; ValidationError `sendAt`; PayloadTooLargeError ATTACHMENTS_TOO_LARGE.
 */
export async function updateDraft(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  draftId: string,
  data: UpdateDraftInput,
): Promise<DraftView> {
  requireScope(actor, 'email');
  const identity = await findIdentity(ctx, actor.accountId, identityId);
  checkSendAt(ctx, data.sendAt);
  const attachments = data.attachments ? decodeAttachments(data.attachments) : undefined;
  const draft = await ctx.events.transaction(async (tx, emit) => {
    const before = await draftOrThrow(tx, identity.id, draftId, true);
    assertNotSending(ctx, before);
    const patch: Partial<DraftFields> = {};
    if (data.to !== undefined) patch.to = unique(data.to);
    if (data.cc !== undefined) patch.cc = unique(data.cc);
    if (data.bcc !== undefined) patch.bcc = unique(data.bcc);
    if (data.replyTo !== undefined) patch.replyTo = data.replyTo ? normalizeAddress(data.replyTo) : null;
    if (data.subject !== undefined) patch.subject = data.subject;
    if (data.body !== undefined) patch.body = data.body;
    if (data.html !== undefined) patch.html = data.html;
    if (data.labels !== undefined) patch.labels = data.labels;
    if (data.sendAt !== undefined) patch.sendAt = data.sendAt;
    const merged = { ...before, ...patch };
    if (merged.to.length + merged.cc.length + merged.bcc.length > 50) {
      throw ValidationError.field('to', 'TOO_MANY_RECIPIENTS', 'at most 50 recipients in all (to, cc and bcc)');
    }
    if (merged.sendAt) assertComplete(merged);
    const stored = attachments ? await storeDraftAttachments(tx, attachments, ctx.clock.now()) : undefined;
    const after = await updateDraftRow(tx, draftId, patch, stored, ctx.clock.now());
    if (stored) await dropBlobs(tx, before.attachments);
    await emitDraft(emit, 'email.draft.updated', after);
    if (after.sendAt) await ctx.jobs.notify(tx, DRAFT_SEND_JOB);
    return after;
  });
  return draftView(draft);
}

/**
 * DELETE …/drafts/{draftId}: deletes the draft and its attachment bytes (a scheduled send is cancelled with it)
 * and emits `email.draft.deleted`. @throws NotFoundError; ConflictError DRAFT_SENDING.
 */
export async function deleteDraft(ctx: DomainContext, actor: Actor, identityId: string, draftId: string) {
  requireScope(actor, 'email');
  const identity = await findIdentity(ctx, actor.accountId, identityId);
  await ctx.events.transaction(async (tx, emit) => {
    const d = await draftOrThrow(tx, identity.id, draftId, true);
    assertNotSending(ctx, d);
    await deleteDraftRow(tx, d.id);
    await dropBlobs(tx, d.attachments);
    await emitDraft(emit, 'email.draft.deleted', d);
  });
}

/**
 * Sends a locked draft inside `tx`: checks it is complete and that no recipient is blocked or suppressed, queues
 * the message exactly as send/reply do ({@link queueOutbound}: a reply draft threads on its thread with its
 * In-Reply-To/References), deletes the draft and its attachment blobs, and emits `email.draft.sent`
 * `{…, messageId, threadId}`. The caller dispatches the message after the commit.
 */
async function sendLockedDraft(
  tx: Tx,
  emit: Emit,
  ctx: DomainContext,
  identity: EmailIdentity,
  d: DraftRecord,
): Promise<{ rowId: string; sent: SentRef }> {
  assertComplete(d);
  const all = [...d.to, ...d.cc, ...d.bcc];
  await assertNotBlocked(tx, identity, all);
  await assertNotSuppressed(tx, identity.accountId, all);
  const thread = d.threadId ? await findDraftThread(tx, identity.id, d.threadId) : null;
  const attachments: OutgoingAttachment[] = [];
  for (const a of d.attachments) {
    attachments.push({ filename: a.filename, contentType: a.contentType, content: await readBlobBuffer(tx, a.blobId) });
  }
  const message = await queueOutbound(tx, ctx, identity, {
    thread,
    to: d.to,
    cc: d.cc,
    bcc: d.bcc,
    replyTo: d.replyTo,
    subject: d.subject,
    body: d.body ?? '',
    html: d.html,
    attachments,
    labels: d.labels,
    inReplyTo: thread ? d.inReplyTo : null,
    references: thread ? d.references : [],
    autoReplied: false,
  });
  await deleteDraftRow(tx, d.id);
  await dropBlobs(tx, d.attachments);
  await emitDraft(emit, 'email.draft.sent', d, { messageId: message.messageId, threadId: message.threadId });
  return { rowId: message.id, sent: { messageId: message.messageId, threadId: message.threadId } };
}

/**
 * POST …/drafts/{draftId}/send (issue 21 item 3): sends the draft now (202 `{messageId, threadId}`) and deletes it.
 * A scheduled draft sent this way is not sent again at `sendAt` (the row is gone; the scheduler finds nothing).
 * @throws NotFoundError; ConflictError DRAFT_SENDING; UnprocessableError IDENTITY_DEPROVISIONING, DRAFT_INCOMPLETE,
 *   RECIPIENT_BLOCKED, RECIPIENT_SUPPRESSED.
 */
export async function sendDraft(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  draftId: string,
): Promise<SentRef> {
  requireScope(actor, 'email');
  const identity = await findActiveIdentity(ctx, actor.accountId, identityId);
  const out = await ctx.events.transaction(async (tx, emit) => {
    const d = await draftOrThrow(tx, identity.id, draftId, true);
    assertNotSending(ctx, d);
    return sendLockedDraft(tx, emit, ctx, identity, d);
  });
  await dispatchMessage(ctx, out.rowId);
  return out.sent;
}

/**
 * One scheduled send, claimed by the job queue (the claim is the fence: exactly one instance holds it). A draft
 * that cannot go (incomplete, a blocked or suppressed recipient, the identity deprovisioning, or
 * {@link DRAFT_SEND_MAX_ATTEMPTS} attempts failed) stays for a person: `sendAt` cleared, `lastError` set, and
 * `email.draft.failed` emitted. Other errors are thrown, so the claim expires and the send is tried again.
 */
async function sendScheduledDraft(ctx: DomainContext, job: ClaimedJob): Promise<void> {
  const row = await findClaimedDraft(ctx.db, job.id, job.token);
  if (!row) return;
  const identity = await findIdentity(ctx, row.accountId, row.identityId).catch(() => undefined);
  const fail = async (error: string) => {
    await ctx.events.transaction(async (tx, emit) => {
      if (!(await failScheduledDraft(tx, row.id, job.token, error.slice(0, 2000), ctx.clock.now()))) return;
      const d = await findDraft(tx, row.identityId, row.id);
      if (d) await emitDraft(emit, 'email.draft.failed', d, { error: error.slice(0, 2000) });
    });
  };
  if (identity?.status !== 'active') return fail('IDENTITY_DEPROVISIONING: the identity is being deprovisioned');
  let out: { rowId: string; sent: SentRef } | undefined;
  try {
    out = await ctx.events.transaction(async (tx, emit) => {
      const d = await lockDraft(tx, identity.id, row.id);
      if (!d || d.lockedBy !== job.token) return undefined; // sent or deleted meanwhile
      if (!d.sendAt) {
        await releaseDraftClaim(tx, d.id, job.token); // unscheduled meanwhile
        return undefined;
      }
      return sendLockedDraft(tx, emit, ctx, identity, d);
    });
  } catch (err) {
    if (err instanceof DomainError) return fail(`${err.code}: ${err.message}`);
    if (job.attempt >= DRAFT_SEND_MAX_ATTEMPTS) {
      return fail(`SEND_FAILED: ${err instanceof Error ? err.message : String(err)}`);
    }
    throw err;
  }
  if (out) await dispatchMessage(ctx, out.rowId);
}

/** The scheduled-send job kind: drafts whose `send_at` has come, each claimed by one instance. */
export function draftSendJobKind(ctx: DomainContext): JobKind {
  return {
    name: DRAFT_SEND_JOB,
    table: 'email_drafts',
    dueColumn: 'send_at',
    where: scheduledDraftCondition,
    attemptsColumn: 'attempts',
    concurrency: DRAFT_SEND_CONCURRENCY,
    run: (job) => sendScheduledDraft(ctx, job),
  };
}
