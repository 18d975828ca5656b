import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../../app-context.js';
import { type EmailIdentity, type EmailMessage, type EmailThread, Prisma } from '../../generated/prisma/client.js';
import type { Tx } from '../../infra/db.js';
import {
  CLAIM_LEASE_MS,
  type ClaimedJob,
  type JobKind,
  nextAttemptAt,
  SPEC8_SCHEDULE,
} from '../../infra/jobs/job-queue.js';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { NotFoundError } from '../errors.js';
import type { Emit } from '../events/event-log.js';
import { dkimSignerFor } from './dkim.service.js';
import { localAddresses } from './domain.service.js';
import type { ReplyInput, SendEmailInput } from './email.schemas.js';
import { findActiveIdentity } from './identity.service.js';
import { activeIdentitiesFor, addToThread, deliverInbound } from './inbound.service.js';
import { mailHostName, normalizeAddress, replyReferences, replySubject } from './mail.rules.js';
import type { OutgoingMail, RelayError } from './mail-transport.port.js';
import { localDeliveryAuthentication } from './sender-auth.js';

/** The job kind of outbound mail in the job queue (src/infra/jobs; docs/jobs.md). */
export const OUTBOUND_JOB = 'email-outbound';
/** Relay retries: 5 attempts, after 30 s, 2 min, 10 min, 1 h (the spec 8 schedule, as webhooks). */
export const RELAY_SCHEDULE = SPEC8_SCHEDULE;
/** How long a dispatcher owns a claimed message before another may retry it (ms); extended while it runs. */
export { CLAIM_LEASE_MS };

/** Outbound messages relayed at once per instance. */
const OUTBOUND_CONCURRENCY = 20;

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
    /** One recipient, or several (SMTP submission: every envelope recipient). */
    to: string | string[];
    subject: string;
    body: string;
    inReplyTo: string | null;
    references: string[];
    autoReplied: boolean;
    /** The client's own Message-ID (SMTP submission); default a new one on the identity's domain. */
    messageId?: string;
    /** The client's Auto-Submitted value (SMTP submission keeps loop headers, RFC 3834). */
    autoSubmitted?: string | null;
  },
): Promise<EmailMessage> {
  const now = ctx.clock.now();
  const to = [...new Set((Array.isArray(m.to) ? m.to : [m.to]).map(normalizeAddress))];
  const threadId = await addToThread(tx, identity, m.thread, {
    subject: m.subject,
    participants: [identity.address, ...to],
    now,
  });
  return tx.emailMessage.create({
    data: {
      id: uuidv7(),
      accountId: identity.accountId,
      identityId: identity.id,
      threadId,
      messageId: m.messageId ?? newMessageId(identity),
      direction: 'outbound',
      from: identity.address,
      to,
      subject: m.subject,
      body: m.body,
      inReplyTo: m.inReplyTo,
      references: m.references,
      autoSubmitted: m.autoReplied ? 'auto-replied' : (m.autoSubmitted ?? null),
      status: 'queued',
      nextAttemptAt: now,
      sentAt: now,
    },
  });
}

/**
 * POST /api/email/identities/{id}/send (spec 4.4): starts a new thread with one outbound message and delivers it
 * (see {@link dispatchMessage}). @returns `{messageId, threadId}`.
 * `data` is parsed at the door by `sendEmailInput`. @throws NotFoundError; UnprocessableError IDENTITY_DEPROVISIONING.
 */
export async function sendEmail(
  ctx: AppContext,
  actor: Actor,
  identityId: string,
  data: SendEmailInput,
): Promise<SentRef> {
  requireScope(actor, 'email');
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
 * `data` is parsed at the door by `replyInput`.
 * @throws NotFoundError (identity or thread); UnprocessableError IDENTITY_DEPROVISIONING.
 */
export async function replyToThread(
  ctx: AppContext,
  actor: Actor,
  identityId: string,
  data: ReplyInput,
): Promise<SentRef> {
  requireScope(actor, 'email');
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

/**
 * Writes a message's final status and its event, fenced by the claim (`locked_by = token`): a dispatcher whose
 * lease ran out and was taken over writes nothing.
 */
async function finish(
  ctx: AppContext,
  m: EmailMessage,
  token: string,
  outcome: { status: string; detail: string },
): Promise<void> {
  await ctx.events.transaction(async (tx, emit) => {
    const { count } = await tx.emailMessage.updateMany({
      where: { id: m.id, lockedBy: token },
      data: {
        status: outcome.status,
        statusDetail: outcome.detail,
        nextAttemptAt: null,
        lockedBy: null,
        lockedUntil: null,
      },
    });
    if (count === 0) return;
    const updated = await tx.emailMessage.findUniqueOrThrow({ where: { id: m.id } });
    if (outcome.status === 'sent' || outcome.status === 'delivered') await emitOutcome(emit, updated, 'email.sent');
    if (outcome.status === 'undelivered' || outcome.status === 'failed') {
      await emitOutcome(emit, updated, 'email.delivery_failed');
    }
  });
}

/**
 * Delivers one `queued` outbound message now, in the caller's request, if it is due and no dispatcher holds it
 * (through the job queue's claim, so it is fenced like any other attempt); see {@link deliverClaimed}.
 * @returns whether the message was claimed.
 */
export function dispatchMessage(ctx: AppContext, messageRowId: string): Promise<boolean> {
  return ctx.jobs.runner(OUTBOUND_JOB).runNow(messageRowId);
}

/**
 * Makes one delivery attempt of a claimed outbound message (the claim counted it in `attempts`):
 * - to an active identity of this service: composed by the mail port and handed to the inbound path
 *   ({@link deliverInbound}) through the mail port's compose and parse, status `delivered`;
 * - to a deprovisioning identity or an unknown mailbox on a hosted domain (EMAIL_DOMAINS): `failed` (550, as the
 *   listener answers); only hosted domains are delivered locally, so no identity can capture mail for a domain the
 *   service does not host;
 * - elsewhere through SMTP_RELAY_URL: `sent` when the relay accepts; a 5xx answer is `failed` at once, other errors
 *   are retried on {@link RELAY_SCHEDULE} and `failed` after its last attempt;
 * - with no relay configured: `undelivered` (never pretends it was sent).
 * Emits `email.sent` on `sent`/`delivered` and `email.delivery_failed` on `undelivered`/`failed`. Every write is
 * fenced by the claim token.
 */
async function deliverClaimed(ctx: AppContext, job: ClaimedJob): Promise<void> {
  const m = await ctx.db.emailMessage.findFirst({ where: { id: job.id, lockedBy: job.token } });
  if (!m) return;
  const identity = await ctx.db.emailIdentity.findUniqueOrThrow({ where: { id: m.identityId } });
  const mail: OutgoingMail = {
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
  };
  const local = await localAddresses(ctx, m.to);
  const remote = m.to.filter((a) => !local.includes(a));
  const refused: string[] = [];
  if (local.length > 0) {
    const active = new Set((await activeIdentitiesFor(ctx, local)).map((i) => i.address));
    for (const a of local) if (!active.has(a)) refused.push(`550 5.1.1 <${a}>: mailbox unavailable`);
    if (active.size > 0) {
      // Composed and parsed again, so local delivery stores exactly what a relay would have carried. A retry
      // delivers again; the inbound path stores one copy per Message-ID and identity.
      const parsed = await ctx.mail.parse(await ctx.mail.compose(mail));
      // Never crossed a network and written by this identity: authenticated as such (docs/email.md "Who sees what").
      const auth = localDeliveryAuthentication(identity.address, mailHostName(ctx.config));
      const stored = await deliverInbound(ctx, parsed, { mailFrom: identity.address, rcptTo: [...active] }, auth);
      if (stored.length === 0) for (const a of active) refused.push(`550 5.1.1 <${a}>: mailbox unavailable`);
    }
  }
  const localOk = local.length > refused.length;
  if (remote.length === 0) {
    await finish(
      ctx,
      m,
      job.token,
      localOk
        ? { status: 'delivered', detail: ['delivered locally', ...refused].join('; ') }
        : { status: 'failed', detail: refused.join('; ') },
    );
    return;
  }
  if (!ctx.mail.hasRelay) {
    await finish(ctx, m, job.token, {
      status: localOk ? 'delivered' : 'undelivered',
      detail: [
        ...(localOk ? ['delivered locally'] : []),
        'NO_RELAY: SMTP_RELAY_URL is not configured; mail outside this service cannot be sent',
        ...refused,
      ].join('; '),
    });
    return;
  }
  try {
    const response = await ctx.mail.relay({ ...mail, envelopeTo: remote });
    await finish(ctx, m, job.token, { status: 'sent', detail: [response, ...refused].join('; ') });
  } catch (err) {
    const e = err as RelayError;
    const detail = e.response ?? e.message;
    const permanent = (e.responseCode ?? 0) >= 500;
    const retryAt = permanent ? undefined : nextAttemptAt(RELAY_SCHEDULE, m.attempts, ctx.clock.now());
    if (!retryAt) {
      await finish(ctx, m, job.token, { status: 'failed', detail: [detail, ...refused].join('; ') });
    } else {
      await ctx.db.emailMessage.updateMany({
        where: { id: m.id, lockedBy: job.token },
        data: { statusDetail: detail, nextAttemptAt: retryAt, lockedBy: null, lockedUntil: null },
      });
    }
  }
}

/**
 * The outbound mail job kind: `queued` messages that are due (sent by a request and not yet attempted, relay
 * retries, and any left by a crash), each attempt counted by its claim.
 */
export function outboundJobKind(ctx: AppContext): JobKind {
  return {
    name: OUTBOUND_JOB,
    table: 'email_messages',
    dueColumn: 'next_attempt_at',
    where: () => Prisma.sql`j.status = 'queued'`,
    attemptsColumn: 'attempts',
    concurrency: OUTBOUND_CONCURRENCY,
    run: (job) => deliverClaimed(ctx, job),
  };
}
