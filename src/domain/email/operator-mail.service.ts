import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { NotFoundError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import type { Db } from '../kernel/db.js';
import { decodeCursor, encodeCursor, keysetPage } from '../paging.js';
import { decimalInt } from '../validation.js';
import { hostedDomains, normalizeAddress } from './mail.rules.js';
import type { InboundMessage } from './mail-transport.port.js';
import { insertOperatorMessages, operatorMessageById, operatorMessagesPage } from './operator-mail.store.js';

/**
 * The role addresses every hosted domain accepts (issue 26): `postmaster` (RFC 5321 4.5.1: "MUST support the
 * reserved mailbox postmaster"; RFC 5321 2.4: its local part is case-insensitive) and `abuse` (RFC 2142 section 2).
 */
export const ROLE_LOCAL_PARTS: readonly string[] = ['postmaster', 'abuse'];

/** Longest body kept of a message to a role address, in characters (the rest is cut, with a note). */
export const OPERATOR_BODY_MAX = 1_000_000;

/**
 * Whether `address` is a role address of this service: `postmaster@` or `abuse@` one of the hosted domains (any
 * case), or `postmaster` alone (RFC 5321 4.5.1 requires `RCPT TO:<Postmaster>` without a domain to be accepted).
 * Hosted domains (EMAIL_DOMAINS) are the service's own, shared by every account, so these reach the operator,
 * whatever identities exist.
 */
export function isRoleAddress(config: DomainContext['config'], address: string): boolean {
  const a = normalizeAddress(address);
  if (a === 'postmaster') return true;
  const at = a.lastIndexOf('@');
  if (at <= 0) return false;
  return ROLE_LOCAL_PARTS.includes(a.slice(0, at)) && hostedDomains(config).includes(a.slice(at + 1));
}

const stripNul = (s: string) => s.replaceAll('\u0000', '');

/**
 * Stores a message for each role recipient of `envelope` in the operator mailbox (table operator_messages), once
 * per recipient and Message-ID (a retried delivery is not doubled).
 * @param remoteAddress the SMTP client's address. @returns how many were stored (0 when no recipient is a role).
 */
export async function deliverToOperator(
  ctx: DomainContext,
  parsed: InboundMessage,
  envelope: { mailFrom: string; rcptTo: string[] },
  remoteAddress: string,
): Promise<number> {
  const recipients = [...new Set(envelope.rcptTo.filter((r) => isRoleAddress(ctx.config, r)).map(normalizeAddress))];
  if (recipients.length === 0) return 0;
  const messageId = stripNul(parsed.messageId ?? '') || `<${uuidv7()}@${ctx.config.EMAIL_DOMAIN}>`;
  let body = stripNul(parsed.text).replace(/\r\n/g, '\n').replace(/\n+$/, '');
  if (body.length > OPERATOR_BODY_MAX)
    body = `${body.slice(0, OPERATOR_BODY_MAX)}\n[… cut at ${OPERATOR_BODY_MAX} characters]`;
  return insertOperatorMessages(
    ctx.db,
    recipients.map((recipient) => ({
      id: uuidv7(),
      recipient,
      messageId,
      mailFrom: stripNul(envelope.mailFrom),
      from: normalizeAddress(stripNul(parsed.from[0] ?? envelope.mailFrom)),
      subject: stripNul(parsed.subject).slice(0, 1000),
      body,
      remoteAddress,
      receivedAt: ctx.clock.now(),
    })),
  );
}

/** Query of GET /admin/mail. */
export const operatorMailQuery = z
  .object({
    limit: decimalInt(1, 200).default(50).describe('Messages per page, 1–200, default 50.'),
    cursor: z.string().min(1).max(200).optional().describe('`nextCursor` of the previous page.'),
  })
  .strict();
/** Parsed operatorMailQuery. */
export type OperatorMailQuery = z.output<typeof operatorMailQuery>;

/** A message of the operator mailbox as the admin API shows it (body only in the single read). */
export interface OperatorMessageView {
  id: string;
  recipient: string;
  messageId: string;
  mailFrom: string;
  from: string;
  subject: string;
  remoteAddress: string;
  receivedAt: string;
  body?: string;
}

function view(m: {
  id: string;
  recipient: string;
  messageId: string;
  mailFrom: string;
  from: string;
  subject: string;
  remoteAddress: string;
  receivedAt: Date;
  body?: string;
}): OperatorMessageView {
  return {
    id: m.id,
    recipient: m.recipient,
    messageId: m.messageId,
    mailFrom: m.mailFrom,
    from: m.from,
    subject: m.subject,
    remoteAddress: m.remoteAddress,
    receivedAt: m.receivedAt.toISOString(),
    ...(m.body === undefined ? {} : { body: m.body }),
  };
}

/**
 * The operator mailbox in arrival order (ids are UUIDv7), `limit` per page, without bodies.
 * @returns `{messages, nextCursor}` (null on the last page). @throws BadRequestError 400 INVALID_CURSOR.
 */
export async function listOperatorMail(
  db: Db,
  query: OperatorMailQuery,
): Promise<{ messages: OperatorMessageView[]; nextCursor: string | null }> {
  const after = decodeCursor(query.cursor);
  const page = await keysetPage(query.limit, (take) => operatorMessagesPage(db, after, take));
  return {
    messages: page.items.map(view),
    nextCursor: page.last ? encodeCursor(page.last.id) : null,
  };
}

/** One message of the operator mailbox with its body. @throws NotFoundError (404). */
export async function getOperatorMail(db: Db, id: string): Promise<OperatorMessageView & { body: string }> {
  const m = await operatorMessageById(db, id);
  if (!m) throw new NotFoundError('operator message', id, 'id');
  return { ...view(m), body: m.body };
}
