import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../../app-context.js';
import type { EmailIdentity, EmailMessage, EmailThread } from '../../generated/prisma/client.js';
import type { Tx } from '../../infra/db.js';
import type { Worker } from '../../infra/workers.js';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { NotFoundError } from '../errors.js';
import type { Emit } from '../events/event-log.js';
import { parseInput } from '../validation.js';
import { replyInput, sendEmailInput } from './email.schemas.js';
import { findActiveIdentity } from './identity.service.js';
import { deliverInbound, mergeParticipants } from './inbound.service.js';
import { isHostedAddress, normalizeAddress, replyReferences, replySubject } from './mail.rules.js';
import type { OutgoingMail, RelayError } from './mail-transport.port.js';

/** Relay attempts before an outbound message is `failed`, and the delays before attempts 2..5 (ms). */
export const RELAY_MAX_ATTEMPTS = 5;
export const RELAY_RETRY_DELAYS_MS = [30_000, 120_000, 600_000, 3_600_000];
/** How long a dispatcher owns a claimed message before another may retry it (ms). */
export const CLAIM_LEASE_MS = 5 * 60_000;

/** Answer of send and reply (spec 4.4). `messageId` is the RFC 5322 Message-ID, angle brackets included. */
export interface SentRef {
  messageId: string;
  threadId: string;
}

/** A new Message-ID on the identity's domain (RFC 5322 3.6.4: globally unique, `<left@right>`). */
export function newMessageId(identity: EmailIdentity): string {
  return `<${uuidv7()}@${identity.domain}>`;
}

/**
 * Writes an outbound message with status `queued` (to be dispatched after commit) and updates its thread.
 * `autoReplied` marks agent answers `Auto-Submitted: auto-replied` (RFC 3834 5).
 */
export async function queueOutbound(
  tx: Tx,
  ctx: AppContext,
  identity: EmailIdentity,
  m: {
    thread: EmailThread | null;
    to: string;
    subject: string;
    body: string;
    inReplyTo: string | null;
    references: string[];
    autoReplied: boolean;
  },
): Promise<EmailMessage> {
  const now = ctx.clock.now();
  const to = normalizeAddress(m.to);
  let threadId: string;
  if (m.thread) {
    threadId = m.thread.id;
    await tx.emailThread.update({
      where: { id: m.thread.id },
      data: {
        messageCount: { increment: 1 },
        lastMessageAt: now,
        participants: mergeParticipants(m.thread.participants, [identity.address, to]),
      },
    });
  } else {
    threadId = uuidv7();
    await tx.emailThread.create({
      data: {
        id: threadId,
        accountId: identity.accountId,
        identityId: identity.id,
        subject: m.subject,
        participants: mergeParticipants([], [identity.address, to]),
        messageCount: 1,
        lastMessageAt: now,
        createdAt: now,
      },
    });
  }
  return tx.emailMessage.create({
    data: {
      id: uuidv7(),
      accountId: identity.accountId,
      identityId: identity.id,
      threadId,
      messageId: newMessageId(identity),
      direction: 'outbound',
      from: identity.address,
      to: [to],
      subject: m.subject,
      body: m.body,
      inReplyTo: m.inReplyTo,
      references: m.references,
      autoSubmitted: m.autoReplied ? 'auto-replied' : null,
      status: 'queued',
      nextAttemptAt: now,
      sentAt: now,
    },
  });
}

/**
 * POST /api/email/identities/{id}/send (spec 4.4): starts a new thread with one outbound message and delivers it
 * (see {@link dispatchMessage}). @returns `{messageId, threadId}`.
 * @throws ValidationError; NotFoundError; UnprocessableError IDENTITY_DEPROVISIONING.
 */
export async function sendEmail(ctx: AppContext, actor: Actor, identityId: string, input: unknown): Promise<SentRef> {
  requireScope(actor, 'email');
  const data = parseInput(sendEmailInput, input);
  const identity = await findActiveIdentity(ctx, actor.accountId, identityId);
  const message = await ctx.db.$transaction((tx) =>
    queueOutbound(tx, ctx, identity, {
      thread: null,
      to: data.to,
      subject: data.subject,
      body: data.body,
      inReplyTo: null,
      references: [],
      autoReplied: false,
    }),
  );
  await dispatchMessage(ctx, message.id);
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
): Promise<{ to: string; subject: string; inReplyTo: string; references: string[] }> {
  const parent = await db.emailMessage.findFirstOrThrow({
    where: { threadId: thread.id },
    orderBy: [{ sentAt: 'desc' }, { id: 'desc' }],
  });
  const lastInbound = await db.emailMessage.findFirst({
    where: { threadId: thread.id, direction: 'inbound' },
    orderBy: [{ sentAt: 'desc' }, { id: 'desc' }],
  });
  const to = lastInbound?.from ?? parent.to[0] ?? '';
  return {
    to,
    subject: replySubject(thread.subject),
    inReplyTo: parent.messageId,
    references: replyReferences(parent),
  };
}

/**
 * POST /api/email/identities/{id}/reply (spec 4.4): answers on an existing thread with In-Reply-To and References
 * of its newest message and a `Re: ` subject (never `Re: Re: `). @returns `{messageId, threadId}`.
 * @throws ValidationError; NotFoundError (identity or thread); UnprocessableError IDENTITY_DEPROVISIONING.
 */
export async function replyToThread(
  ctx: AppContext,
  actor: Actor,
  identityId: string,
  input: unknown,
): Promise<SentRef> {
  requireScope(actor, 'email');
  const data = parseInput(replyInput, input);
  const identity = await findActiveIdentity(ctx, actor.accountId, identityId);
  const thread = await ctx.db.emailThread.findFirst({ where: { id: data.threadId, identityId: identity.id } });
  if (!thread) throw new NotFoundError('Thread', data.threadId, 'threadId');
  const message = await ctx.db.$transaction(async (tx) => {
    const plan = await replyPlan(tx, thread);
    return queueOutbound(tx, ctx, identity, { thread, body: data.body, autoReplied: false, ...plan });
  });
  await dispatchMessage(ctx, message.id);
  return { messageId: message.messageId, threadId: message.threadId };
}

async function emitOutcome(emit: Emit, m: EmailMessage, type: 'email.sent' | 'email.delivery_failed') {
  await emit(m.accountId, type, {
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
  });
}

async function finish(
  ctx: AppContext,
  m: EmailMessage,
  outcome: { status: string; detail: string; retryAt?: Date },
): Promise<void> {
  await ctx.events.transaction(async (tx, emit) => {
    const updated = await tx.emailMessage.update({
      where: { id: m.id },
      data: { status: outcome.status, statusDetail: outcome.detail, nextAttemptAt: outcome.retryAt ?? null },
    });
    if (outcome.status === 'sent' || outcome.status === 'delivered') await emitOutcome(emit, updated, 'email.sent');
    if (outcome.status === 'undelivered' || outcome.status === 'failed') {
      await emitOutcome(emit, updated, 'email.delivery_failed');
    }
  });
}

/**
 * Delivers one `queued` outbound message, if it is due and no other dispatcher holds it:
 * - to an active identity of this service: composed by the mail port and handed to the inbound path
 *   ({@link deliverInbound}) through the mail port's compose and parse, status `delivered`;
 * - to a deprovisioning identity or an unknown mailbox on a hosted domain (EMAIL_DOMAINS): `failed` (550, as the
 *   listener answers); only hosted domains are delivered locally, so no identity can capture mail for a domain the
 *   service does not host;
 * - elsewhere through SMTP_RELAY_URL: `sent` when the relay accepts; a 5xx answer is `failed` at once, other errors
 *   are retried after {@link RELAY_RETRY_DELAYS_MS} and `failed` after {@link RELAY_MAX_ATTEMPTS} attempts;
 * - with no relay configured: `undelivered` (never pretends it was sent).
 * Emits `email.sent` on `sent`/`delivered` and `email.delivery_failed` on `undelivered`/`failed`.
 * @returns whether the message was claimed.
 */
export async function dispatchMessage(ctx: AppContext, messageRowId: string): Promise<boolean> {
  const now = ctx.clock.now();
  const claim = await ctx.db.emailMessage.updateMany({
    where: { id: messageRowId, status: 'queued', nextAttemptAt: { lte: now } },
    data: { nextAttemptAt: new Date(now.getTime() + CLAIM_LEASE_MS), attempts: { increment: 1 } },
  });
  if (claim.count === 0) return false;
  const m = await ctx.db.emailMessage.findUniqueOrThrow({ where: { id: messageRowId } });
  const identity = await ctx.db.emailIdentity.findUniqueOrThrow({ where: { id: m.identityId } });
  const to = m.to[0] ?? '';
  const mail: OutgoingMail = {
    fromAddress: identity.address,
    fromName: identity.displayName || null,
    to,
    subject: m.subject,
    text: m.body,
    messageId: m.messageId,
    inReplyTo: m.inReplyTo,
    references: m.references,
    headers: m.autoSubmitted ? { 'Auto-Submitted': m.autoSubmitted } : {},
    date: m.sentAt,
  };
  if (isHostedAddress(ctx.config, to)) {
    const local = await ctx.db.emailIdentity.findUnique({ where: { address: to } });
    if (local?.status !== 'active') {
      await finish(ctx, m, { status: 'failed', detail: `550 5.1.1 <${to}>: mailbox unavailable` });
      return true;
    }
    // Composed and parsed again, so local delivery stores exactly what a relay would have carried.
    const parsed = await ctx.mail.parse(await ctx.mail.compose(mail));
    const stored = await deliverInbound(ctx, parsed, { mailFrom: identity.address, rcptTo: [to] });
    await finish(
      ctx,
      m,
      stored.length > 0
        ? { status: 'delivered', detail: 'delivered locally' }
        : { status: 'failed', detail: `550 5.1.1 <${to}>: mailbox unavailable` },
    );
    return true;
  }
  if (!ctx.mail.hasRelay) {
    await finish(ctx, m, {
      status: 'undelivered',
      detail: 'NO_RELAY: SMTP_RELAY_URL is not configured; mail outside this service cannot be sent',
    });
    return true;
  }
  try {
    const response = await ctx.mail.relay(mail);
    await finish(ctx, m, { status: 'sent', detail: response });
  } catch (err) {
    const e = err as RelayError;
    const detail = e.response ?? e.message;
    const permanent = (e.responseCode ?? 0) >= 500;
    if (permanent || m.attempts >= RELAY_MAX_ATTEMPTS) {
      await finish(ctx, m, { status: 'failed', detail });
    } else {
      const delay = RELAY_RETRY_DELAYS_MS[m.attempts - 1] ?? RELAY_RETRY_DELAYS_MS.at(-1)!;
      await ctx.db.emailMessage.update({
        where: { id: m.id },
        data: { statusDetail: detail, nextAttemptAt: new Date(ctx.clock.now().getTime() + delay) },
      });
    }
  }
  return true;
}

/** Worker: retries `queued` outbound messages that are due (relay retries, and any left by a crash). */
export function outboundDispatcher(ctx: AppContext): Worker {
  return {
    name: 'email-outbound-dispatcher',
    async tick() {
      const due = await ctx.db.emailMessage.findMany({
        where: { status: 'queued', nextAttemptAt: { lte: ctx.clock.now() } },
        orderBy: { nextAttemptAt: 'asc' },
        take: 20,
        select: { id: true },
      });
      let n = 0;
      for (const { id } of due) if (await dispatchMessage(ctx, id)) n++;
      return n;
    },
  };
}
