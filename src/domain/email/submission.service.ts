import { UnprocessableError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import type { EmailIdentity } from './identity.store.js';
import { identityById } from './identity.store.js';
import { stripNul } from './inbound.service.js';
import { messageIdsIn, normalizeAddress } from './mail.rules.js';
import type { InboundMessage } from './mail-transport.port.js';
import { dispatchMessage, queueOutbound, type SentRef } from './outbound.service.js';
import { inTransaction, messageOfIdentity, threadOfAnyMessage } from './thread.store.js';

/** Most recipients of one submitted message (issue 20 section 3). */
export const SUBMISSION_MAX_RECIPIENTS = 50;

/**
 * The rule of MAIL FROM on the submission listener (issue 20 section 3; RFC 6409 6.1 lets a submission server
 * refuse a sender the user may not use): the reverse-path must be the authenticated identity's address.
 * @throws UnprocessableError FROM_NOT_IDENTITY (field `mailFrom`).
 */
export function requireOwnSender(identity: Pick<EmailIdentity, 'address'>, mailFrom: string): void {
  if (normalizeAddress(mailFrom) !== identity.address) {
    throw new UnprocessableError(
      'FROM_NOT_IDENTITY',
      `5.7.1 Sender <${mailFrom}> is not the authenticated identity <${identity.address}>`,
      'mailFrom',
    );
  }
}

/**
 * A message submitted over SMTP by an authenticated identity (issue 20 section 3): the same path as POST …/send.
 * The From header must hold exactly the identity's address and MAIL FROM must be it. The message is stored as an
 * outbound message of the identity on the thread holding any id of its In-Reply-To/References (else a new thread),
 * with the client's Message-ID (a new one when it has none), to every envelope recipient, keeping its
 * Auto-Submitted header (RFC 3834 loop protection); then it is delivered like any outbound message (DKIM-signed,
 * locally or through SMTP_RELAY_URL; `email.sent` / `email.delivery_failed`). The text part is what is stored and
 * sent (HTML-only mail as mailparser's text). The same Message-ID submitted again is accepted once (a client retry
 * after a lost 250 does not send twice). Delivery is started, not awaited: the 250 means stored.
 * @returns `{messageId, threadId}`.
 * @throws UnprocessableError IDENTITY_DEPROVISIONING (deprovisioned since AUTH), FROM_NOT_IDENTITY (field `from`
 *   or `mailFrom`).
 */
export async function submitMessage(
  ctx: DomainContext,
  identityId: string,
  parsed: InboundMessage,
  envelope: { mailFrom: string; rcptTo: string[] },
): Promise<SentRef & { created: boolean }> {
  const identity = await identityById(ctx.db, identityId);
  if (identity?.status !== 'active') {
    throw new UnprocessableError(
      'IDENTITY_DEPROVISIONING',
      `5.7.1 Identity ${identityId} is deprovisioning; it cannot send`,
    );
  }
  requireOwnSender(identity, envelope.mailFrom);
  const from = parsed.from.map((a) => normalizeAddress(stripNul(a)));
  if (from.length !== 1 || from[0] !== identity.address) {
    throw new UnprocessableError(
      'FROM_NOT_IDENTITY',
      `5.7.1 From: ${from.join(', ') || '(none)'} is not the authenticated identity <${identity.address}>`,
      'from',
    );
  }
  const clientId = parsed.messageId ? messageIdsIn(stripNul(parsed.messageId))[0] : undefined;
  if (clientId) {
    const existing = await messageOfIdentity(ctx.db, identity.id, clientId);
    if (existing) return { messageId: existing.messageId, threadId: existing.threadId, created: false };
  }
  const inReplyTo = messageIdsIn(parsed.inReplyTo ? stripNul(parsed.inReplyTo) : undefined)[0] ?? null;
  const refs = parsed.references;
  const references = messageIdsIn(Array.isArray(refs) ? refs.map(stripNul) : refs ? stripNul(refs) : undefined);
  const message = await inTransaction(ctx.db, async (tx) => {
    const lookup = [...(inReplyTo ? [inReplyTo] : []), ...references];
    const thread = await threadOfAnyMessage(tx, identity.id, lookup);
    return queueOutbound(tx, ctx, identity, {
      thread,
      to: envelope.rcptTo,
      subject: stripNul(parsed.subject),
      body: stripNul(parsed.text).replace(/\r\n/g, '\n').replace(/\n+$/, ''),
      inReplyTo,
      references,
      autoReplied: false,
      messageId: clientId,
      autoSubmitted: parsed.autoSubmitted === null ? null : stripNul(parsed.autoSubmitted),
    });
  });
  dispatchMessage(ctx, message.id).catch((err: unknown) =>
    ctx.log.error({ err, messageId: message.messageId }, 'submitted mail: first delivery attempt failed to run'),
  );
  return { messageId: message.messageId, threadId: message.threadId, created: true };
}
