import { UnprocessableError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import type { EmailIdentity } from './identity.store.js';
import { identityById } from './identity.store.js';
import { stripNul } from './inbound.service.js';
import { messageIdsIn, normalizeAddress } from './mail.rules.js';
import type { InboundMessage, OutgoingAttachment } from './mail-transport.port.js';
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
 * locally or through SMTP_RELAY_URL; `email.sent` / `email.delivery_failed`). The message keeps what the client
 * wrote: text and HTML parts, attachments (with their Content-ID when inline), To and Cc as in its headers; envelope
 * recipients in neither header are its Bcc (RFC 5322 3.6.3: they ride only in the envelope). It is composed and
 * signed again from those parts, as POST …/send would compose it. The same Message-ID submitted again is accepted
 * once (a client retry after a lost 250 does not send twice). Delivery is started, not awaited: the 250 means
 * stored. `attachmentBytes(position)` gives the decoded bytes of the parsed message's attachments (read from the
 * raw message the listener holds).
 * @returns `{messageId, threadId}`.
 * @throws UnprocessableError IDENTITY_DEPROVISIONING (deprovisioned since AUTH), FROM_NOT_IDENTITY (field `from`
 *   or `mailFrom`).
 */
export async function submitMessage(
  ctx: DomainContext,
  identityId: string,
  parsed: InboundMessage,
  envelope: { mailFrom: string; rcptTo: string[] },
  attachmentBytes: (position: number) => Promise<Buffer | null> = async () => null,
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
  // To and Cc as the client's headers name them (only those it also gave as envelope recipients); the rest of the
  // envelope is Bcc. A message whose headers name none of its recipients goes To all of them.
  const rcpt = [...new Set(envelope.rcptTo.map((r) => normalizeAddress(r)))];
  const named = (list: string[]) => list.map((x) => normalizeAddress(stripNul(x))).filter((x) => rcpt.includes(x));
  let to = named(parsed.to);
  const cc = named(parsed.cc).filter((x) => !to.includes(x));
  let bcc = rcpt.filter((x) => !to.includes(x) && !cc.includes(x));
  if (to.length === 0 && cc.length === 0) [to, bcc] = [rcpt, []];
  else if (to.length === 0) [to, bcc] = [bcc, []];
  const attachments: OutgoingAttachment[] = [];
  for (const a of parsed.attachments ?? []) {
    const content = await attachmentBytes(a.position);
    if (content)
      attachments.push({
        filename: a.filename,
        contentType: a.contentType,
        content,
        contentId: a.inline ? a.contentId : null,
      });
  }
  const refs = parsed.references;
  const references = messageIdsIn(Array.isArray(refs) ? refs.map(stripNul) : refs ? stripNul(refs) : undefined);
  const message = await inTransaction(ctx.db, async (tx) => {
    const lookup = [...(inReplyTo ? [inReplyTo] : []), ...references];
    const thread = await threadOfAnyMessage(tx, identity.id, lookup);
    return queueOutbound(tx, ctx, identity, {
      thread,
      to,
      cc,
      bcc,
      subject: stripNul(parsed.subject),
      body: stripNul(parsed.text).replace(/\r\n/g, '\n').replace(/\n+$/, ''),
      html: parsed.html ? stripNul(parsed.html) : null,
      attachments,
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
