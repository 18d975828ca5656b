import type { Emit } from '../events/event-log.js';
import type { DomainContext } from '../kernel/context.js';
import { uuidv7 } from '../kernel/ids.js';
import { emitAgentSkipped } from './agent.events.js';
import { insertAgentJob } from './agent.store.js';
import { attachmentRows, storeAttachments } from './attachments.js';
import { blockCandidates } from './blocklist.service.js';
import { deliveryReportOf, recordBounces } from './bounces.js';
import { extractReplyText, sanitizeEmailHtml } from './content.js';
import { localAddresses } from './domain.service.js';
import { AGENT_JOB } from './email.jobs.js';
import {
  deliverableIdentitiesAt,
  type EmailIdentity,
  identityOwnerOf,
  identityStillPlainSql,
  type RcptIdentity,
  rcptIdentityAt,
} from './identity.store.js';
import type { Envelope, StoredInbound } from './local-delivery.port.js';
import { autoReplyBlocker, messageIdsIn, normalizeAddress } from './mail.rules.js';
import type { InboundMessage } from './mail-transport.port.js';
import { RcptAnswers } from './send-caches.js';
import { authLabels, type SenderAuthOutcome } from './sender-auth.js';
import {
  addToThreadSql,
  insertAttachmentsSql,
  insertMessage,
  insertMessageSql,
  isMessageIdTaken,
  messageOfIdentity,
  outboundMessageOfIdentity,
  type SqlFragment,
  threadFor,
  threadOfAnyMessage,
  threadUnchangedSql,
} from './thread.store.js';

export type { Envelope, StoredInbound };

/**
 * Every recipient identity that takes mail at the end of DATA has the sender on its `inbound` block list (issue 24:
 * a block added while RCPT's answer was cached, see send-caches.ts `RCPT_CACHE_TTL_MS`): nothing was stored. The SMTP
 * listener answers `550 5.7.1`, as RCPT would have.
 */
export class SenderBlockedError extends Error {
  constructor() {
    super('every recipient has blocked the sender');
    this.name = 'SenderBlockedError';
  }
}

/** The block-list entries that would hold envelope sender `sender` (none for the null sender `''`). */
function senderEntriesOf(sender: string): string[] {
  return sender.includes('@') ? blockCandidates([sender]) : [];
}

/**
 * The active identities among `rcptTo` on a hosted domain that do not block the sender (one read, identity.store.ts
 * `deliverableIdentitiesAt`). @throws SenderBlockedError when `refuse` (every recipient was an identity at RCPT, so
 * nothing else takes the message) and some are active and every one of them blocks it.
 */
async function deliverableIdentitiesFor(
  ctx: DomainContext,
  rcptTo: string[],
  senderEntries: string[],
  refuse: boolean,
): Promise<EmailIdentity[]> {
  const hosted = await localAddresses(ctx, rcptTo);
  if (hosted.length === 0) return [];
  const { identities, blocked } = await deliverableIdentitiesAt(ctx, hosted, senderEntries);
  if (refuse && identities.length === 0 && blocked.length > 0) throw new SenderBlockedError();
  return identities;
}

/** Mail whose sender is not known to be anyone: what a message gets when no authentication was run. */
const UNCHECKED: SenderAuthOutcome = {
  authentication: {
    spf: 'none',
    dkim: 'none',
    dmarc: 'none',
    arc: 'none',
    authenticated: false,
    authenticatedBy: null,
  },
  authenticationResults: '',
  disposition: 'accept',
};

/**
 * `s` without U+0000. PostgreSQL `text` cannot hold NUL (error 22021), so a NUL byte anywhere in a stored field
 * would fail the insert on every delivery attempt and the mail would never be stored.
 */
export function stripNul(s: string): string {
  return s.includes('\u0000') ? s.replaceAll('\u0000', '') : s;
}

/** Header fields of inbound mail are capped as on the send API: one line of at most 998 characters (RFC 5322 2.1.1). */
export const MAX_HEADER_CHARS = 998;
/** Most addresses kept per address header (To, Cc) of inbound mail; the raw message keeps them all. */
export const MAX_HEADER_ADDRESSES = 100;
/** Most Message-IDs kept from an inbound References header. */
export const MAX_REFERENCES = 20;

function capAddress(a: string): string {
  return a.length > 320 ? '' : a;
}

/**
 * Stores one inbound message, parsed from RFC 5322 by the mail port (U+0000 removed from every stored field, see {@link stripNul}) for every active identity among the envelope recipients and emits
 * `email.received` per copy (spec 6.1 payload) in the same transaction. Threading (RFC 5322 3.6.4): the message
 * joins the identity's thread that holds any id of its In-Reply-To or References, else it starts a new thread.
 * When the identity has an agent, a durable agent job is written in the same transaction: `pending`, or `skipped`
 * with the reason when RFC 3834 forbids an answer (see {@link autoReplyBlocker}) or the mail is the agent's own
 * (OWN_IDENTITY: sent by this identity or by another identity the same agent is assigned to). Nothing here waits for the agent, so inbound mail is never lost to a
 * model failure. This is the one inbound path: the SMTP listener and local delivery between identities both call it.
 * `auth` is the sender authentication (src/domain/email/sender-auth.ts; absent: unchecked, so not authenticated):
 * stored with the message with its labels (`spam` when quarantined, `unauthenticated`), carried in `email.received`,
 * and an agent never answers a sender that is not authenticated (job `skipped` SENDER_NOT_AUTHENTICATED, with
 * `email.agent.skipped` like every skip decided here). Labels (system): `received`, the authentication's `spam` /
 * `unauthenticated`, and `bounced` for a DSN (RFC 3464) about mail the identity sent, which also records the bounce
 * (`email.bounced`, suppression list; bounces.ts) and is never answered (BOUNCE). `stored.rawBlobId` is the raw
 * message already in the blob store (shared by every recipient's copy), with cc, reply-to, sanitised html,
 * extracted text, attachments' metadata and size from `parsed`; header fields are capped (998 characters,
 * 100 addresses, 20 References). `stored.rcptIdentities`: the identities the SMTP listener's RCPT commands found
 * (one per recipient, every recipient known, possibly from the RCPT cache); a single one without an agent is not
 * looked up again, the delivery's statement checks it instead ({@link identityStillPlainSql}). The envelope sender
 * is checked against each identity's `inbound` block list here again (RCPT's answer may be cached): a blocked
 * identity gets no copy.
 * @returns one entry per recipient identity stored.
 * @throws SenderBlockedError when every recipient was an identity at RCPT (`stored.rcptIdentities`) and those still
 * active all block the sender (nothing stored; with a role address among the recipients, that copy is still kept).
 */
export async function deliverInbound(
  ctx: DomainContext,
  parsed: InboundMessage,
  envelope: Envelope,
  auth: SenderAuthOutcome = UNCHECKED,
  stored: { rawBlobId: string | null; pendingBlob?: PendingBlob; rcptIdentities?: EmailIdentity[] } = {
    rawBlobId: null,
  },
): Promise<StoredInbound[]> {
  // The identity RCPT found is not looked up again (issue 24) when the message takes the one-statement path: that
  // statement's precondition checks it is still active and without an agent. Anything else looks them up here.
  // RCPT's answer may be up to RCPT_CACHE_TTL_MS old (send-caches.ts): the block list is checked again here, in the
  // one statement's precondition or in the read below, so a block added since is never bypassed.
  const senderEntries = senderEntriesOf(envelope.mailFrom);
  const rcpt = stored.rcptIdentities;
  const trusted = rcpt && rcpt.length === 1 && !rcpt[0]!.agentId ? rcpt : undefined;
  let identities = trusted ?? (await deliverableIdentitiesFor(ctx, envelope.rcptTo, senderEntries, rcpt !== undefined));
  if (identities.length === 0) return [];
  const from = capAddress(normalizeAddress(stripNul(parsed.from[0] ?? envelope.mailFrom ?? '')));
  const addressList = (list: string[]) =>
    list
      .slice(0, MAX_HEADER_ADDRESSES)
      .map((a) => capAddress(normalizeAddress(stripNul(a))))
      .filter((a) => a !== '');
  const to = addressList(parsed.to);
  const cc = addressList(parsed.cc);
  const replyTo = parsed.replyTo ? capAddress(normalizeAddress(stripNul(parsed.replyTo))) || null : null;
  const parsedId = parsed.messageId ? stripNul(parsed.messageId).slice(0, MAX_HEADER_CHARS) : '';
  const messageId = parsedId ? (messageIdsIn(parsedId)[0] ?? parsedId) : `<${uuidv7()}@${ctx.config.EMAIL_DOMAIN}>`;
  const inReplyTo = messageIdsIn(parsed.inReplyTo ? stripNul(parsed.inReplyTo) : undefined)[0] ?? null;
  const refs = parsed.references;
  const allRefs = messageIdsIn(Array.isArray(refs) ? refs.map(stripNul) : refs ? stripNul(refs) : undefined);
  // As replies trim them (RFC 5322 3.6.4): the first and the newest ids.
  const references =
    allRefs.length <= MAX_REFERENCES ? allRefs : [allRefs[0]!, ...allRefs.slice(allRefs.length - (MAX_REFERENCES - 1))];
  // Capped as on the send API (issue 26 item 3): one header line of at most 998 characters.
  const subject = stripNul(parsed.subject)
    .replace(/[\r\n]+/g, ' ')
    .slice(0, MAX_HEADER_CHARS);
  const body = stripNul(parsed.text).replace(/\r\n/g, '\n').replace(/\n+$/, '');
  const html = sanitizeEmailHtml(parsed.html ? stripNul(parsed.html) : null);
  const extractedText = extractReplyText(body);
  const autoSubmitted = parsed.autoSubmitted === null ? null : stripNul(parsed.autoSubmitted);
  const blocker = autoReplyBlocker({
    returnPath: envelope.mailFrom,
    from,
    headers: parsed.headers,
    contentType: parsed.contentType,
  });
  const now = ctx.clock.now();
  const report = deliveryReportOf(parsed);

  // The common case (one recipient identity without an agent, not a DSN about our mail) in ONE statement.
  const only = identities.length === 1 ? identities[0]! : null;
  if (only && !only.agentId && !report?.originalMessageId) {
    const one = await deliverInOneStatement(ctx, only, {
      from,
      to,
      cc,
      replyTo,
      messageId,
      inReplyTo,
      references,
      subject,
      body,
      html,
      extractedText,
      autoSubmitted,
      now,
      size: parsed.size ?? 0,
      attachments: parsed.attachments ?? [],
      auth,
      rawBlobId: stored.rawBlobId,
      blobChanges: stored.pendingBlob?.changes ?? [],
      senderEntries,
    });
    // null: a re-delivery, the thread changed since it was read, or the identity is no longer active without an
    // agent: the transaction below decides, with the identities as they are now.
    if (one) return [one];
    if (trusted) {
      identities = await deliverableIdentitiesFor(ctx, envelope.rcptTo, senderEntries, true);
      if (identities.length === 0) return [];
    }
  }
  // Read only when a recipient has an agent: it decides OWN_IDENTITY, nothing else (one round trip less per mail).
  const senderIdentity = identities.some((i) => i.agentId) ? await identityOwnerOf(ctx.db, from) : null;
  // The transaction below names the raw message: it is stored first (the caller deletes it if nothing is kept).
  await stored.pendingBlob?.write();

  return ctx.events.transaction(async (tx, emit) => {
    const out: StoredInbound[] = [];
    for (const identity of identities) {
      const existing = await messageOfIdentity(tx, identity.id, messageId);
      if (existing) {
        out.push({ identityId: identity.id, threadId: existing.threadId, messageId, created: false });
        continue;
      }
      const recipients = to.length > 0 ? to : [identity.address];
      // A DSN about mail this identity sent joins that mail's thread and marks it bounced (issue 21 item 5).
      const bounced = report?.originalMessageId
        ? await outboundMessageOfIdentity(tx, identity.id, report.originalMessageId)
        : null;
      const refs = [...(bounced ? [bounced.messageId] : []), ...(inReplyTo ? [inReplyTo] : []), ...references];
      // System labels: received, spam/unauthenticated from the sender authentication, bounced for a DSN of ours.
      const labels = ['received', ...authLabels(auth), ...(bounced ? ['bounced'] : [])];
      const threadId = await threadFor(tx, identity, refs, {
        subject,
        participants: [from, ...recipients, ...cc],
        now,
        labels,
      });
      const rowId = uuidv7();
      const row = await insertMessage(tx, {
        id: rowId,
        accountId: identity.accountId,
        identityId: identity.id,
        threadId,
        messageId,
        direction: 'inbound',
        from,
        to: recipients,
        subject,
        body,
        cc,
        replyTo,
        html,
        extractedText,
        labels,
        size: parsed.size ?? 0,
        rawBlobId: stored.rawBlobId,
        inReplyTo,
        references,
        autoSubmitted,
        status: 'received',
        sentAt: now,
        authentication: { ...auth.authentication },
        authenticationResults: auth.authenticationResults || null,
      });
      await storeAttachments(tx, row, parsed.attachments ?? []);
      let skipped: { agentId: string; reason: string } | undefined;
      if (identity.agentId) {
        // The agent's own mail: sent by this identity or by another identity that the same agent serves.
        const own =
          senderIdentity?.accountId === identity.accountId &&
          (senderIdentity.id === identity.id || senderIdentity.agentId === identity.agentId);
        // replyMode draft: a sender that is not authenticated still gets a draft a person reviews (never spam).
        const reviewable = identity.replyMode === 'draft' && !labels.includes('spam');
        const unauthenticated =
          auth.authentication.authenticated || reviewable ? undefined : 'SENDER_NOT_AUTHENTICATED';
        const reason = blocker ?? (own ? 'OWN_IDENTITY' : unauthenticated);
        await insertAgentJob(tx, {
          id: uuidv7(),
          accountId: identity.accountId,
          identityId: identity.id,
          agentId: identity.agentId,
          messageRowId: rowId,
          status: reason ? 'skipped' : 'pending',
          reason: reason ?? null,
          nextAttemptAt: now,
          sender: from,
          createdAt: now,
          updatedAt: now,
        });
        if (!reason) await ctx.jobs.notify(tx, AGENT_JOB);
        else skipped = { agentId: identity.agentId, reason };
      }
      if (bounced && report) await recordBounces(tx, emit, bounced, report.recipients, 'bounce', now);
      await emitReceived(emit, identity, { from, subject, threadId, messageId, auth, labels });
      if (skipped) await emitAgentSkipped(emit, identity, { ...skipped, threadId, messageId });
      out.push({ identityId: identity.id, threadId, messageId, created: true });
    }
    return out;
  });
}

/**
 * RCPT TO of inbound mail (the SMTP listener): the active identity at `address` when it is hosted here (a configured
 * domain or a verified custom one, localAddresses) and whether the account's inbound block list holds `sender` (its
 * address, domain or a parent domain; the null sender `''` is never blocked), in one prepared read, or none when
 * this instance found the same recipient for the same sender active and not blocked in the last RCPT_CACHE_TTL_MS
 * (send-caches.ts `RcptAnswers`; only such positive answers are kept, and a block-list or identity change made here
 * empties them; the delivery re-checks both, see {@link deliverInbound}).
 * @returns null when no active identity has the address (the listener answers 550 5.1.1 unless it is a role address).
 */
export async function recipientAtRcpt(
  ctx: DomainContext,
  address: string,
  sender: string,
): Promise<RcptIdentity | null> {
  const [hosted] = await localAddresses(ctx, [address]);
  if (!hosted) return null;
  // A positive answer of the last RCPT_CACHE_TTL_MS is reused (send-caches.ts): the delivery re-checks it.
  const cache = ctx.emailCaches.rcptAnswers;
  const key = RcptAnswers.key(hosted, sender);
  const hit = cache.get(key);
  if (hit) return { identity: hit, blocked: false };
  const generation = cache.generation();
  const found = await rcptIdentityAt(ctx, hosted, senderEntriesOf(sender));
  if (found && !found.blocked) cache.set(key, found.identity, generation);
  return found;
}

/**
 * A raw message not written yet (one chunk): `changes` write it inside the single-statement delivery (EventLog.write
 * CTE bodies, mail-blob.store.ts `singleStatementChanges`), `write` stores it on its own when the delivery takes
 * the transaction instead.
 */
export interface PendingBlob {
  changes: SqlFragment[];
  write(): Promise<unknown>;
}

/** What {@link deliverInOneStatement} stores: the message's fields as {@link deliverInbound} computed them. */
interface OneDelivery {
  from: string;
  to: string[];
  cc: string[];
  replyTo: string | null;
  messageId: string;
  inReplyTo: string | null;
  references: string[];
  subject: string;
  body: string;
  html: string | null;
  extractedText: string | null;
  autoSubmitted: string | null;
  now: Date;
  size: number;
  attachments: InboundMessage['attachments'];
  auth: SenderAuthOutcome;
  rawBlobId: string | null;
  /** Writes the raw message in the same statement (see {@link PendingBlob}); empty when it is stored already. */
  blobChanges: SqlFragment[];
  /** The block-list entries that hold the envelope sender (none for the null sender): checked by the precondition. */
  senderEntries: string[];
}

/**
 * {@link deliverInbound} for one identity without an agent and a message that is not a DSN about our mail, as ONE
 * SQL statement (EventLog.write, issue 24): the thread (joined or new), the message, its attachments' metadata and
 * `email.received` commit together, where the interactive transaction took six round trips (BEGIN, the Message-ID
 * check, the thread, the message, the event, COMMIT) and held the account's event-order lock across two of them.
 * The thread of a reply is read before (one read, only when the message names any Message-ID); the statement's
 * guard then checks that the thread did not change since. A message starting a thread has no guard, so concurrent
 * deliveries to one account share one statement and one commit (EventLog's group commit); a Message-ID already
 * stored fails the unique index, and nothing is written.
 * @returns the stored copy, or null when the guard failed or the Message-ID is taken (nothing written; the
 * caller's transaction decides).
 */
async function deliverInOneStatement(
  ctx: DomainContext,
  identity: EmailIdentity,
  m: OneDelivery,
): Promise<StoredInbound | null> {
  const recipients = m.to.length > 0 ? m.to : [identity.address];
  const refs = [...(m.inReplyTo ? [m.inReplyTo] : []), ...m.references];
  const labels = ['received', ...authLabels(m.auth)];
  const thread = refs.length > 0 ? await threadOfAnyMessage(ctx.db, identity.id, refs) : null;
  const joined = addToThreadSql(identity, thread, uuidv7(), {
    subject: m.subject,
    participants: [m.from, ...recipients, ...m.cc],
    now: m.now,
    labels,
  });
  const rowId = uuidv7();
  const attachments = attachmentRows({ id: rowId, accountId: identity.accountId }, m.attachments ?? []);
  const write = {
    accountId: identity.accountId,
    // Only joining a thread needs a guard; unguarded writes of one account share a statement (group commit).
    ...(thread ? { guard: threadUnchangedSql(thread) } : {}),
    // The identity may have been looked up at RCPT (or cached since): still active, without an agent and not
    // blocking the sender, or nothing is written.
    precondition: identityStillPlainSql(identity.id, m.senderEntries),
    changes: [
      ...m.blobChanges,
      joined.sql,
      insertMessageSql({
        id: rowId,
        accountId: identity.accountId,
        identityId: identity.id,
        threadId: joined.threadId,
        messageId: m.messageId,
        direction: 'inbound',
        from: m.from,
        to: recipients,
        subject: m.subject,
        body: m.body,
        cc: m.cc,
        replyTo: m.replyTo,
        html: m.html,
        extractedText: m.extractedText,
        labels,
        size: m.size,
        rawBlobId: m.rawBlobId,
        inReplyTo: m.inReplyTo,
        references: m.references,
        autoSubmitted: m.autoSubmitted,
        status: 'received',
        sentAt: m.now,
        authentication: { ...m.auth.authentication },
        authenticationResults: m.auth.authenticationResults || null,
      }),
      ...(attachments.length > 0 ? [insertAttachmentsSql(attachments)] : []),
    ],
    events: [
      {
        eventType: 'email.received',
        payload: receivedPayload(identity, { ...m, threadId: joined.threadId, labels }),
      },
    ],
  };
  try {
    if (!(await ctx.events.write(write))) return null;
  } catch (err) {
    // Already stored under this Message-ID (a re-delivery): nothing written; the transaction answers created: false.
    if (isMessageIdTaken(err)) return null;
    throw err;
  }
  return { identityId: identity.id, threadId: joined.threadId, messageId: m.messageId, created: true };
}

/**
 * Spec 6.1: `{event: "email.received", data: {identityId, from, to, subject, threadId, messageId}}`, plus ours:
 * `authentication` ({spf, dkim, dmarc, arc, authenticated, authenticatedBy}) and `labels`.
 */
function receivedPayload(
  identity: EmailIdentity,
  m: { from: string; subject: string; threadId: string; messageId: string; auth: SenderAuthOutcome; labels: string[] },
): Record<string, unknown> {
  return {
    event: 'email.received',
    data: {
      identityId: identity.id,
      from: m.from,
      to: identity.address,
      subject: m.subject,
      threadId: m.threadId,
      messageId: m.messageId,
      authentication: { ...m.auth.authentication },
      labels: m.labels,
    },
  };
}

/** Records `email.received` ({@link receivedPayload}) in the caller's transaction. */
async function emitReceived(
  emit: Emit,
  identity: EmailIdentity,
  m: { from: string; subject: string; threadId: string; messageId: string; auth: SenderAuthOutcome; labels: string[] },
): Promise<void> {
  await emit(identity.accountId, 'email.received', receivedPayload(identity, m));
}
