import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { NotFoundError, UnprocessableError, ValidationError } from '../errors.js';
import type { Emit } from '../events/event-log.js';
import type { DomainContext } from '../kernel/context.js';
import type { Tx } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';
import { CLAIM_LEASE_MS, type ClaimedJob, type JobKind, nextAttemptAt, SPEC8_SCHEDULE } from '../kernel/jobs.js';
import { decodeAttachments, loadAttachments, storeAttachments } from './attachments.js';
import { assertNotBlocked, blockCandidates, recipientsBlocked } from './blocklist.service.js';
import { type BounceRecipient, recordBounces, statusOfReply } from './bounces.js';
import { extractReplyText, sanitizeEmailHtml } from './content.js';
import { dkimSignerFor } from './dkim.service.js';
import { localAddresses } from './domain.service.js';
import { OUTBOUND_JOB } from './email.jobs.js';
import { type ForwardInput, MAX_RECIPIENTS, type ReplyInput, type SendEmailInput } from './email.schemas.js';
import type { sentShape } from './email.shapes.js';
import { activeIdentitiesFor, activeIdentityForSend, findActiveIdentity, forgetIdentity } from './identity.service.js';
import { type EmailIdentity, identityByIdOrThrow } from './identity.store.js';
import type { LocalDelivery } from './local-delivery.port.js';
import {
  forwardContent,
  mailHostName,
  mergeParticipants,
  normalizeAddress,
  replyReferences,
  replySubject,
} from './mail.rules.js';
import { BLOB_CHUNK_BYTES, readBlob, writeBlob } from './mail-blob.store.js';
import type { InboundAttachment, OutgoingAttachment, OutgoingMail, RelayError } from './mail-transport.port.js';
import { type RecipientHolds, recipientHolds } from './outbound.store.js';
import { localDeliveryAuthentication } from './sender-auth.js';
import { assertNotSuppressed, recipientsSuppressed } from './suppressions.service.js';
import { getMessageRow } from './thread.service.js';
import {
  addToThread,
  claimedMessage,
  claimStillHeld,
  type EmailMessage,
  type EmailThread,
  finishClaimedSql,
  insertMessage,
  inTransaction,
  messageById,
  newestInboundOfThread,
  newestMessageOfThread,
  queuedOutboundMessages,
  threadOfIdentity,
  updateClaimedMessage,
} from './thread.store.js';

export { OUTBOUND_JOB };
/** Relay retries: 5 attempts, after 30 s, 2 min, 10 min, 1 h (the spec 8 schedule, as webhooks). */
export const RELAY_SCHEDULE = SPEC8_SCHEDULE;
/** How long a dispatcher owns a claimed message before another may retry it (ms); extended while it runs. */
export { CLAIM_LEASE_MS };

/** Outbound messages relayed at once per instance. */
const OUTBOUND_CONCURRENCY = 20;

/** Answer of send and reply (spec 4.4). `messageId` is the RFC 5322 Message-ID, angle brackets included. */
export type SentRef = z.output<typeof sentShape>;

/** A new Message-ID on the identity's domain (RFC 5322 3.6.4: globally unique, `<left@right>`). */
export function newMessageId(identity: EmailIdentity): string {
  return `<${uuidv7()}@${identity.domain}>`;
}

/** What {@link queueOutbound} writes: the headers and parts of one outbound message. */
export interface OutboundContent {
  thread: EmailThread | null;
  /** One address or several (header To). */
  to: string | string[];
  cc?: string[];
  /** Envelope-only recipients (never in a header). */
  bcc?: string[];
  replyTo?: string | null;
  subject: string;
  /** Plain text; derived from `html` when empty and `html` is given. */
  body: string;
  html?: string | null;
  attachments?: OutgoingAttachment[];
  /** Custom labels besides the system label `sent`. */
  labels?: string[];
  inReplyTo: string | null;
  references: string[];
  autoReplied: boolean;
  /** The client's own Message-ID (SMTP submission); default a new one on the identity's domain. */
  messageId?: string;
  /** The client's Auto-Submitted value (SMTP submission keeps loop headers, RFC 3834). */
  autoSubmitted?: string | null;
}

/** The raw bytes {@link queueOutbound} composed and stored for a row (kept as long as the row object lives). */
const composedRaw = new WeakMap<EmailMessage, Buffer>();
/**
 * Messages whose send request is delivering them right now (row id → the row it wrote, its identity and the raw
 * bytes it stored): the in-request delivery uses them instead of reading the row, the identity and the blob back
 * (four round trips less per send; issue 24). Only this instance's claim of that row reads an entry.
 */
const inRequest = new Map<string, { message: EmailMessage; identity: EmailIdentity; raw: Buffer | undefined }>();

/**
 * Runs the delivery of a message the caller's request just committed (see {@link dispatchMessage}), handing it the
 * row, the identity and the composed bytes so it reads none of them back.
 */
async function deliverInRequest(
  ctx: DomainContext,
  message: EmailMessage,
  identity: EmailIdentity,
  claimed?: ClaimedJob,
): Promise<void> {
  inRequest.set(message.id, { message, identity, raw: composedRaw.get(message) });
  try {
    if (claimed) await ctx.jobs.runner(OUTBOUND_JOB).runClaimed(claimed);
    else await dispatchMessage(ctx, message.id);
  } finally {
    inRequest.delete(message.id);
  }
}

/**
 * Writes an outbound message with status `queued` (to be dispatched after commit) and updates its thread. The
 * message is composed once (nodemailer) and its raw bytes stored once ({@link writeBlob}); delivery sends those
 * bytes, attachments are read back from them. Bcc addresses ride only in the envelope (stored on the row for the
 * sender's eyes). `autoReplied` marks agent answers `Auto-Submitted: auto-replied` (RFC 3834 5).
 */
export async function queueOutbound(
  tx: Tx,
  ctx: DomainContext,
  identity: EmailIdentity,
  m: OutboundContent,
): Promise<EmailMessage> {
  const c = await composeOutbound(ctx, identity, m, tx);
  const blob = await writeBlob(tx, c.raw, c.now);
  const threadId = await addToThread(tx, identity, m.thread, {
    subject: m.subject,
    participants: c.participants,
    now: c.now,
    labels: c.fields.labels,
  });
  const row = await insertMessage(tx, { ...c.fields, threadId, size: blob.size, rawBlobId: blob.id });
  await storeAttachments(tx, row, c.parsed.attachments ?? []);
  composedRaw.set(row, c.raw);
  return row;
}

/** What {@link composeOutbound} gives: the raw bytes, their parse (when one was needed) and the row's columns. */
interface ComposedOutbound {
  now: Date;
  raw: Buffer;
  parsed: { text?: string; attachments?: InboundAttachment[] };
  /** The thread's participants this message adds (the identity, To and Cc). */
  participants: string[];
  /** The message row but its thread, blob and size. */
  fields: Omit<
    EmailMessage,
    | 'threadId'
    | 'rawBlobId'
    | 'size'
    | 'attempts'
    | 'lockedBy'
    | 'lockedUntil'
    | 'statusDetail'
    | 'authentication'
    | 'authenticationResults'
  >;
}

/**
 * Composes and DKIM-signs an outbound message once (nodemailer) and derives its row's columns (see
 * {@link queueOutbound}). `db` is where the DKIM key is read (and, the first time, written).
 */
async function composeOutbound(
  ctx: DomainContext,
  identity: EmailIdentity,
  m: OutboundContent,
  db: Tx,
): Promise<ComposedOutbound> {
  const now = ctx.clock.now();
  const unique = (list: string[]) => [...new Set(list.map(normalizeAddress))];
  const to = unique(Array.isArray(m.to) ? m.to : [m.to]);
  const cc = unique(m.cc ?? []).filter((a) => !to.includes(a));
  const bcc = unique(m.bcc ?? []).filter((a) => !to.includes(a) && !cc.includes(a));
  const messageId = m.messageId ?? newMessageId(identity);
  const autoSubmitted = m.autoReplied ? 'auto-replied' : (m.autoSubmitted ?? null);
  // DKIM-signed once here (issue 20 section 4): the stored raw message is what every delivery sends.
  const raw = await ctx.mail.compose({
    fromAddress: identity.address,
    fromName: identity.displayName || null,
    to,
    cc,
    bcc,
    replyTo: m.replyTo ?? null,
    subject: m.subject,
    text: m.body,
    html: m.html ?? null,
    attachments: m.attachments ?? [],
    messageId,
    inReplyTo: m.inReplyTo,
    references: m.references,
    headers: autoSubmitted ? { 'Auto-Submitted': autoSubmitted } : {},
    date: now,
    dkim: await dkimSignerFor(ctx, identity.domain, db),
  });
  // Read back only for what composing decided: the attachments' positions, or the text of an HTML-only body.
  // A text mail without attachments has neither, so it is not parsed a second time (issue 24).
  const needsParse = (m.attachments?.length ?? 0) > 0 || (m.body === '' && Boolean(m.html));
  const parsed = needsParse ? await ctx.mail.parse(raw) : { text: '', attachments: [] };
  const labels = ['sent', ...(m.labels ?? [])];
  const body = m.body !== '' || !m.html ? m.body : (parsed.text ?? '').replace(/\r\n/g, '\n').trim();
  const fields: ComposedOutbound['fields'] = {
    id: uuidv7(),
    accountId: identity.accountId,
    identityId: identity.id,
    messageId,
    direction: 'outbound',
    from: identity.address,
    to,
    cc,
    bcc,
    replyTo: m.replyTo ? normalizeAddress(m.replyTo) : null,
    subject: m.subject,
    body,
    html: sanitizeEmailHtml(m.html),
    extractedText: extractReplyText(body),
    labels,
    inReplyTo: m.inReplyTo,
    references: m.references,
    autoSubmitted,
    status: 'queued',
    nextAttemptAt: now,
    sentAt: now,
  };
  return { now, raw, parsed, participants: [identity.address, ...to, ...cc], fields };
}

/**
 * {@link queueOutbound} of a message on a new thread without attachments, written with ONE statement
 * (`insertNewThreadMessages` through the app's group-commit queue: blob, thread and message, only while the identity is active and no recipient is on
 * the block list or suppressed, read by that same statement) instead of an interactive transaction, and already
 * claimed for the delivery the request runs (its first attempt counted, the job returned: no claim statement; a
 * crash before that delivery leaves it to the outbound job once the lease has run out). A raw message larger than
 * one blob chunk goes through {@link queueOutbound} (unclaimed), after its own read of the holds. The message is
 * composed (and signed) before the holds are known, so a refused send costs its composing too.
 * @throws NotFoundError; UnprocessableError IDENTITY_DEPROVISIONING (the identity changed since it was cached),
 * RECIPIENT_BLOCKED, RECIPIENT_SUPPRESSED.
 */
async function queueNewThreadMessage(
  ctx: DomainContext,
  accountId: string,
  identity: EmailIdentity,
  m: OutboundContent,
  recipients: SendRecipients,
): Promise<{ message: EmailMessage; claimed?: ClaimedJob }> {
  const c = await composeOutbound(ctx, identity, m, ctx.db);
  if (c.raw.length > BLOB_CHUNK_BYTES) {
    await assertRecipientsFree(ctx, identity, recipients);
    // Read again, not cached: this write does not check the identity itself. Before the transaction (PGlite has
    // one connection: a read outside an open transaction would wait for it).
    const fresh = await findActiveIdentity(ctx, accountId, identity.id);
    return { message: await inTransaction(ctx.db, (tx) => queueOutbound(tx, ctx, fresh, m)) };
  }
  const token = randomUUID();
  const row: EmailMessage = {
    ...c.fields,
    threadId: uuidv7(),
    rawBlobId: uuidv7(),
    size: c.raw.length,
    attempts: 1,
    lockedBy: token,
    lockedUntil: new Date(c.now.getTime() + ctx.jobs.runner(OUTBOUND_JOB).leaseMs),
    statusDetail: null,
    authentication: null,
    authenticationResults: null,
  };
  const thread = {
    id: row.threadId,
    subject: m.subject,
    participants: mergeParticipants([], c.participants),
    labels: [...new Set(row.labels)],
  };
  const result = await ctx.emailCaches.sendWrites.write(ctx.database, { raw: c.raw, thread, message: row, recipients });
  // A held recipient first, as when the read ran before the write: nothing was written.
  const refused = refusal(recipients, result.holds);
  if (refused) throw refused;
  if (!result.written) {
    // Deprovisioned (or deleted) since it was cached: answer as an uncached read would.
    forgetIdentity(ctx, identity.id);
    await findActiveIdentity(ctx, accountId, identity.id);
    throw new UnprocessableError(
      'IDENTITY_DEPROVISIONING',
      `Email identity ${identity.id} is deprovisioning; it neither sends nor receives mail.`,
    );
  }
  composedRaw.set(row, c.raw);
  const claimed: ClaimedJob = {
    id: row.id,
    token,
    attempt: 1,
    recovered: false,
    previousLeaseUntil: null,
    keys: [],
    data: {},
  };
  return { message: row, claimed };
}

/**
 * {@link queueOutbound} in its own transaction for a send with attachments, with the identity read again (not
 * cached: this write does not check it itself) before the transaction opens (PGlite has one connection).
 */
async function queueWithAttachments(
  ctx: DomainContext,
  accountId: string,
  identity: EmailIdentity,
  m: OutboundContent,
  recipients: SendRecipients,
): Promise<{ message: EmailMessage; claimed?: ClaimedJob }> {
  await assertRecipientsFree(ctx, identity, recipients);
  const fresh = await findActiveIdentity(ctx, accountId, identity.id);
  return { message: await inTransaction(ctx.db, (tx) => queueOutbound(tx, ctx, fresh, m)) };
}

/** The recipients of a send (To, Cc and Bcc, lower-cased, distinct) and their block-list candidates. */
interface SendRecipients {
  addresses: string[];
  /** {@link blockCandidates} of `addresses`: the addresses, their domains and parent domains. */
  candidates: string[];
}

/** The refusal of a send given what the block list and suppressions hold (blocked before suppressed), if any. */
function refusal(recipients: SendRecipients, holds: RecipientHolds): UnprocessableError | undefined {
  return recipientsBlocked(recipients.addresses, holds.blocked) ?? recipientsSuppressed(holds.suppressed);
}

/**
 * The block list and the suppressions of a send in one read (one statement, not two), for the sends not written by
 * `insertNewThreadMessages` (which reads them itself). @throws UnprocessableError RECIPIENT_BLOCKED or
 * RECIPIENT_SUPPRESSED (a recipient both blocked and suppressed gets RECIPIENT_BLOCKED).
 */
async function assertRecipientsFree(
  ctx: DomainContext,
  identity: EmailIdentity,
  recipients: SendRecipients,
): Promise<void> {
  const refused = refusal(
    recipients,
    await recipientHolds(ctx.database, identity, recipients.candidates, recipients.addresses),
  );
  if (refused) throw refused;
}

/**
 * POST /api/email/identities/{id}/send (spec 4.4): starts a new thread with one outbound message and delivers it
 * (see {@link dispatchMessage}). @returns `{messageId, threadId}`.
 * `data` is parsed at the door by `sendEmailInput`. @throws NotFoundError; UnprocessableError IDENTITY_DEPROVISIONING.
 */
export async function sendEmail(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  data: SendEmailInput,
): Promise<SentRef> {
  requireScope(actor, 'email');
  // Cached: the one-statement write below stores nothing unless the identity is still active at its commit.
  const identity = await activeIdentityForSend(ctx, actor.accountId, identityId);
  const attachments = decodeAttachments(data.attachments);
  // The block list and the suppressions are read on every send: by the one statement that writes the message
  // (nothing written when a recipient is held), else in one read before the write. A recipient both blocked and
  // suppressed gets RECIPIENT_BLOCKED, as when they ran one after the other.
  const addresses = [...new Set([...data.to, ...(data.cc ?? []), ...(data.bcc ?? [])].map(normalizeAddress))];
  const recipients: SendRecipients = { addresses, candidates: blockCandidates(addresses) };
  const content: OutboundContent = {
    thread: null,
    to: data.to,
    cc: data.cc ?? [],
    bcc: data.bcc ?? [],
    replyTo: data.replyTo ?? null,
    subject: data.subject,
    body: data.body ?? '',
    html: data.html ?? null,
    attachments,
    labels: data.labels ?? [],
    inReplyTo: null,
    references: [],
    autoReplied: false,
  };
  const { message, claimed } =
    attachments.length === 0
      ? await queueNewThreadMessage(ctx, actor.accountId, identity, content, recipients)
      : await queueWithAttachments(ctx, actor.accountId, identity, content, recipients);
  // The delivery this request runs sends the row and bytes just written, without reading them back.
  await deliverInRequest(ctx, message, identity, claimed);
  return { messageId: message.messageId, threadId: message.threadId };
}

/**
 * The headers of a reply on `thread`: the parent is the thread's newest message; the recipient is the sender of
 * its newest inbound message (or, when there is none, the recipient of the newest outbound one); the subject is
 * `Re: ` + the thread subject without earlier prefixes.
 */
export async function replyPlan(
  db: Tx,
  thread: EmailThread,
): Promise<{ to: string; subject: string; inReplyTo: string; references: string[]; answered: EmailMessage }> {
  const parent = await newestMessageOfThread(db, thread.id);
  const lastInbound = await newestInboundOfThread(db, thread.id);
  // RFC 5322 3.6.2: replies go to Reply-To when the author set one.
  const to = lastInbound ? (lastInbound.replyTo ?? lastInbound.from) : (parent.to[0] ?? '');
  return {
    to,
    subject: replySubject(thread.subject),
    inReplyTo: parent.messageId,
    references: replyReferences(parent),
    answered: lastInbound ?? parent,
  };
}

/**
 * POST /api/email/identities/{id}/reply (spec 4.4): answers on an existing thread with In-Reply-To and References
 * of its newest message and a `Re: ` subject (never `Re: Re: `). @returns `{messageId, threadId}`.
 * `data` is parsed at the door by `replyInput`.
 * @throws NotFoundError (identity or thread); UnprocessableError IDENTITY_DEPROVISIONING.
 */
export async function replyToThread(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  data: ReplyInput,
): Promise<SentRef> {
  requireScope(actor, 'email');
  const identity = await findActiveIdentity(ctx, actor.accountId, identityId);
  const thread = await threadOfIdentity(ctx.db, identity.id, data.threadId);
  if (!thread) throw new NotFoundError('Thread', data.threadId, 'threadId');
  const attachments = decodeAttachments(data.attachments);
  const message = await inTransaction(ctx.db, async (tx) => {
    const { answered, ...plan } = await replyPlan(tx, thread);
    const self = identity.address;
    let to = [plan.to, ...(data.to ?? [])];
    let cc = data.cc ?? [];
    if (data.replyAll) {
      // Every participant of the answered message but the identity itself.
      to = [...to, ...answered.to];
      cc = [...answered.cc, ...cc];
    }
    to = [...new Set(to.map(normalizeAddress))].filter((a) => a !== self && a !== '');
    if (to.length === 0) to = [plan.to];
    cc = [...new Set(cc.map(normalizeAddress))].filter((a) => a !== self && !to.includes(a));
    if (to.length + cc.length + (data.bcc?.length ?? 0) > MAX_RECIPIENTS) {
      throw ValidationError.field(
        'to',
        'TOO_MANY_RECIPIENTS',
        `at most ${MAX_RECIPIENTS} recipients in all (to, cc and bcc together); got ${to.length + cc.length + (data.bcc?.length ?? 0)}`,
      );
    }
    await assertNotBlocked(tx, identity, [...to, ...cc, ...(data.bcc ?? [])]);
    await assertNotSuppressed(tx, identity.accountId, [...to, ...cc, ...(data.bcc ?? [])]);
    return queueOutbound(tx, ctx, identity, {
      thread,
      ...plan,
      to,
      cc,
      bcc: data.bcc ?? [],
      replyTo: data.replyTo ?? null,
      body: data.body ?? '',
      html: data.html ?? null,
      attachments,
      labels: data.labels ?? [],
      autoReplied: false,
    });
  });
  await deliverInRequest(ctx, message, identity);
  return { messageId: message.messageId, threadId: message.threadId };
}

/**
 * POST /api/email/identities/{id}/messages/{messageId}/forward (issue 21): a new thread with subject `Fwd: ` + the
 * original subject, `body`/`html` above the forwarded message's headers and text, and the original attachments
 * (inline ones stay inline). `messageId` is the RFC 5322 Message-ID of a message of this identity.
 * @throws NotFoundError (identity, field `messageId`); UnprocessableError IDENTITY_DEPROVISIONING.
 */
export async function forwardMessage(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  messageId: string,
  data: ForwardInput,
): Promise<SentRef> {
  requireScope(actor, 'email');
  const identity = await findActiveIdentity(ctx, actor.accountId, identityId);
  const original = await getMessageRow(ctx, actor, identityId, messageId);
  await assertNotBlocked(ctx.db, identity, [...data.to, ...(data.cc ?? []), ...(data.bcc ?? [])]);
  await assertNotSuppressed(ctx.db, identity.accountId, [...data.to, ...(data.cc ?? []), ...(data.bcc ?? [])]);
  const attachments: OutgoingAttachment[] = await loadAttachments(ctx, original);
  const content = forwardContent(original, { body: data.body ?? '', html: data.html ?? null });
  const message = await inTransaction(ctx.db, (tx) =>
    queueOutbound(tx, ctx, identity, {
      thread: null,
      to: data.to,
      cc: data.cc ?? [],
      bcc: data.bcc ?? [],
      ...content,
      attachments,
      labels: data.labels ?? [],
      inReplyTo: null,
      references: [],
      autoReplied: false,
    }),
  );
  await deliverInRequest(ctx, message, identity);
  return { messageId: message.messageId, threadId: message.threadId };
}

type OutcomeEvent = 'email.sent' | 'email.delivery_failed';

/** The event of a final status: `email.sent` on `sent`/`delivered`, `email.delivery_failed` on `undelivered`/`failed`. */
function outcomeEvent(status: string): OutcomeEvent | undefined {
  if (status === 'sent' || status === 'delivered') return 'email.sent';
  if (status === 'undelivered' || status === 'failed') return 'email.delivery_failed';
  return undefined;
}

async function emitOutcome(emit: Emit, m: EmailMessage, type: OutcomeEvent) {
  await emit(m.accountId, type, outcomePayload(m, type));
}

function outcomePayload(m: EmailMessage, type: OutcomeEvent): Record<string, unknown> {
  return {
    event: type,
    data: {
      identityId: m.identityId,
      from: m.from,
      to: m.to[0] ?? '',
      subject: m.subject,
      threadId: m.threadId,
      messageId: m.messageId,
      status: m.status,
      ...(type === 'email.delivery_failed' ? { error: m.statusDetail ?? '' } : {}),
    },
  };
}

/**
 * Writes a message's final status and its event, fenced by the claim (`locked_by = token`): a dispatcher whose
 * lease ran out and was taken over writes nothing. Without bounces to record, status and event commit in ONE
 * statement ({@link EventLog.write}: one round trip where the transaction took five; issue 24), shared with the
 * account's other finishes and ingests waiting at that moment (group commit: the guard reads only this row).
 */
async function finish(
  ctx: DomainContext,
  m: EmailMessage,
  token: string,
  outcome: { status: string; detail: string; bounces?: BounceRecipient[] },
): Promise<void> {
  if ((outcome.bounces ?? []).length === 0) {
    const type = outcomeEvent(outcome.status);
    const updated: EmailMessage = { ...m, status: outcome.status, statusDetail: outcome.detail, nextAttemptAt: null };
    await ctx.events.write({
      accountId: m.accountId,
      // The claim is on this message's own row, which no other write changes: a precondition, so concurrent finishes
      // of the account share one commit (issue 24).
      precondition: claimStillHeld(m.id, token),
      changes: [finishClaimedSql(m.id, token, { status: outcome.status, statusDetail: outcome.detail })],
      events: type ? [{ eventType: type, payload: outcomePayload(updated, type) }] : [],
    });
    return;
  }
  await ctx.events.transaction(async (tx, emit) => {
    const count = await updateClaimedMessage(tx, m.id, token, {
      status: outcome.status,
      statusDetail: outcome.detail,
      nextAttemptAt: null,
    });
    if (count === 0) return;
    const updated = await messageById(tx, m.id);
    if (outcome.status === 'sent' || outcome.status === 'delivered') await emitOutcome(emit, updated, 'email.sent');
    if (outcome.status === 'undelivered' || outcome.status === 'failed') {
      await emitOutcome(emit, updated, 'email.delivery_failed');
    }
    // A 5xx at send time is a bounce as a DSN would report it (issue 21 item 5).
    await recordBounces(tx, emit, updated, outcome.bounces ?? [], 'relay_rejected', ctx.clock.now());
  });
}

/**
 * Delivers one `queued` outbound message now, in the caller's request, if it is due and no dispatcher holds it
 * (through the job queue's claim, so it is fenced like any other attempt); see {@link deliverClaimed}.
 * @returns whether the message was claimed.
 */
export function dispatchMessage(ctx: DomainContext, messageRowId: string): Promise<boolean> {
  return ctx.jobs.runner(OUTBOUND_JOB).runNow(messageRowId);
}

/**
 * Makes one delivery attempt of a claimed outbound message (the claim counted it in `attempts`) to every
 * recipient (To, Cc and Bcc; Bcc in the envelope only), sending the stored DKIM-signed raw message:
 * - recipients on the service's domains (EMAIL_DOMAINS or a verified custom domain) that are active identities:
 *   parsed from the stored raw and handed to the inbound path (`deliverLocal`, the {@link LocalDelivery} port) with
 *   {@link localDeliveryAuthentication}, sharing the sender's raw message; a deprovisioning identity or an unknown
 *   mailbox there is a `550 5.1.1` (as the listener answers) and a permanent bounce;
 * - the others through SMTP_RELAY_URL in one envelope: a 5xx answer is permanent (a bounce for each rejected
 *   recipient, issue 21 item 5), other errors are retried on {@link RELAY_SCHEDULE} and `failed` after its last
 *   attempt; with no relay configured they are not sent (NO_RELAY; never pretends it was sent);
 * - status: `sent` when the relay accepted, else `delivered` when a local copy was stored, else `undelivered`
 *   (no relay) or `failed`; the failures of single recipients are in the detail.
 * Emits `email.sent` on `sent`/`delivered` and `email.delivery_failed` on `undelivered`/`failed`. Every write is
 * fenced by the claim token.
 */
async function deliverClaimed(ctx: DomainContext, deliverLocal: LocalDelivery, job: ClaimedJob): Promise<void> {
  // The row and identity the send request just wrote and read (this claim counted one more attempt), else read.
  const inHand = inRequest.get(job.id);
  const m = inHand ? { ...inHand.message, attempts: job.attempt } : await claimedMessage(ctx.db, job.id, job.token);
  if (!m) return;
  const identity = inHand?.identity ?? (await identityByIdOrThrow(ctx.db, m.identityId));
  // Mail stored before raw messages were kept is composed again from its fields.
  const legacy: Buffer | null = m.rawBlobId
    ? null
    : await ctx.mail.compose({
        fromAddress: identity.address,
        fromName: identity.displayName || null,
        to: m.to,
        subject: m.subject,
        text: m.body,
        messageId: m.messageId,
        inReplyTo: m.inReplyTo,
        references: m.references,
        headers: m.autoSubmitted ? { 'Auto-Submitted': m.autoSubmitted } : {},
        date: m.sentAt,
        dkim: await dkimSignerFor(ctx, identity.domain),
      } satisfies OutgoingMail);
  // The raw message just stored by this request's send (identical bytes), else read back from the blob store.
  const held = inHand?.raw;
  const raw = () =>
    held ? Readable.from([held]) : m.rawBlobId ? readBlob(ctx.db, m.rawBlobId) : Readable.from([legacy as Buffer]);
  const recipients = [...new Set([...m.to, ...m.cc, ...m.bcc])];
  // Recipients on the service's domains (EMAIL_DOMAINS or a verified custom domain) are delivered in process.
  const local = await localAddresses(ctx, recipients);
  const remote = recipients.filter((a) => !local.includes(a));
  const failures: string[] = [];
  const done: string[] = [];
  const bounces: BounceRecipient[] = [];
  const bounce = (recipient: string, reply: string, code: number) =>
    bounces.push({
      recipient,
      action: 'failed',
      status: statusOfReply(reply, code),
      diagnosticCode: `smtp; ${reply}`.slice(0, 998),
      type: 'permanent',
    });

  if (local.length > 0) {
    const found = await activeIdentitiesFor(ctx, local);
    const active = found.map((i) => i.address);
    for (const a of local) {
      if (active.includes(a)) continue;
      failures.push(`550 5.1.1 <${a}>: mailbox unavailable`);
      bounce(a, `550 5.1.1 <${a}>: mailbox unavailable`, 550);
    }
    if (active.length > 0) {
      // Parsed from the stored bytes, so local delivery stores exactly what a relay would have carried, and the
      // recipients' copies share the sender's raw message (stored once).
      const parsed = await ctx.mail.parseStream(raw());
      // Never crossed a network and written by this identity: authenticated as such (docs/email.md "Who sees what").
      const auth = localDeliveryAuthentication(identity.address, mailHostName(ctx.config));
      const stored = await deliverLocal(ctx, parsed, { mailFrom: identity.address, rcptTo: active }, auth, {
        rawBlobId: m.rawBlobId,
      });
      const got = new Set(stored.map((x) => x.identityId));
      for (const i of found) {
        if (!got.has(i.id)) failures.push(`550 5.1.1 <${i.address}>: mailbox unavailable`);
      }
      if (stored.length > 0) done.push('delivered locally');
    }
  }

  let status: string | undefined;
  let relayed = false;
  if (remote.length > 0 && !ctx.mail.hasRelay) {
    // Local copies stored stay delivered; the rest cannot leave the service.
    status = done.length > 0 ? 'delivered' : 'undelivered';
    failures.unshift('NO_RELAY: SMTP_RELAY_URL is not configured; mail outside this service cannot be sent');
  } else if (remote.length > 0) {
    try {
      // The bytes in hand as they are (the relay streams a Buffer itself, and again if a dropped connection asks).
      done.push(await ctx.mail.relayRaw({ from: identity.address, to: remote }, held ?? raw()));
      relayed = true;
    } catch (err) {
      const e = err as RelayError;
      const detail = e.response ?? e.message;
      const permanent = (e.responseCode ?? 0) >= 500;
      const retryAt = permanent ? undefined : nextAttemptAt(RELAY_SCHEDULE, m.attempts, ctx.clock.now());
      if (retryAt) {
        // Local recipients already stored are not stored twice on the retry (one Message-ID per identity).
        await updateClaimedMessage(ctx.db, m.id, job.token, { statusDetail: detail, nextAttemptAt: retryAt });
        return;
      }
      failures.push(detail);
      const rejected = (err as { rejected?: string[] }).rejected;
      const who = Array.isArray(rejected) && rejected.length > 0 ? rejected.map(normalizeAddress) : remote;
      if (permanent) for (const a of who) bounce(a, detail, e.responseCode ?? 550);
    }
  }
  // Some recipients reached (locally or by the relay): sent/delivered, the failures of the others in the detail.
  status ??= relayed ? 'sent' : done.length > 0 ? 'delivered' : 'failed';
  await finish(ctx, m, job.token, { status, detail: [...failures, ...done].join('; '), bounces });
}

/**
 * The outbound mail job kind: `queued` messages that are due (sent by a request and not yet attempted, relay
 * retries, and any left by a crash), each attempt counted by its claim. `deliverLocal` is the inbound path that
 * stores mail for identities hosted here (`deliverInbound`, passed by `setupEmail`).
 */
export function outboundJobKind(ctx: DomainContext, deliverLocal: LocalDelivery): JobKind {
  return {
    name: OUTBOUND_JOB,
    table: 'email_messages',
    dueColumn: 'next_attempt_at',
    where: queuedOutboundMessages,
    attemptsColumn: 'attempts',
    concurrency: OUTBOUND_CONCURRENCY,
    run: (job) => deliverClaimed(ctx, deliverLocal, job),
  };
}
