import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { NotFoundError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import { decodeCursor, encodeCursor, keysetPage } from '../paging.js';
import { decimalInt } from '../validation.js';
import { hostedDomains, normalizeAddress } from './mail.rules.js';
import type { InboundMessage } from './mail-transport.port.js';
import { OPERATOR_BODY_MAX, ROLE_LOCAL_PARTS } from './operator-mail.service.js';
import {
  insertRoleMessages,
  isActiveIdentity,
  type RoleMessageRow,
  roleMessageOf,
  roleMessagesOf,
  verifiedDomainOwner,
} from './role-mail.store.js';

/*
 * Role mail of custom domains (issue 26). RFC 5321 4.5.1 makes `postmaster` mandatory for every domain a server
 * accepts mail for, and RFC 2142 section 2 names `abuse`; for a custom domain (an account's verified domain) the
 * people responsible for it are the account that owns it, not the service's operator, so its postmaster@ and
 * abuse@ mail is kept for that account (GET /api/email/role-mail). An identity the account made at that very
 * address takes precedence (its mail is an ordinary inbound message). The service's own domains (EMAIL_DOMAINS)
 * keep theirs in the operator mailbox (operator-mail.service.ts); a domain that is not verified is not hosted, and
 * mail to it is refused like any unknown address.
 */

/**
 * The account that receives mail sent to `address` as a role address of its custom domain: `postmaster@` or
 * `abuse@` (any case) a verified custom domain, when no active identity has that address.
 * @returns the owning account's id, or undefined (not a role address, the service's own domain, not verified, or an
 * identity holds the address).
 */
export async function customRoleOwner(ctx: DomainContext, address: string): Promise<string | undefined> {
  const a = normalizeAddress(address);
  const at = a.lastIndexOf('@');
  if (at <= 0 || !ROLE_LOCAL_PARTS.includes(a.slice(0, at))) return undefined;
  const domain = a.slice(at + 1);
  if (hostedDomains(ctx.config).includes(domain)) return undefined; // the operator's (operator-mail.service.ts)
  const owner = await verifiedDomainOwner(ctx.db, domain);
  if (!owner || (await isActiveIdentity(ctx.db, a))) return undefined;
  return owner;
}

const stripNul = (s: string) => s.replaceAll('\u0000', '');

/**
 * Keeps `parsed` for the owner of every recipient of `envelope` that is a role address of a custom domain
 * ({@link customRoleOwner}), once per account, recipient and Message-ID (a retried delivery is not doubled). The
 * text body is kept up to OPERATOR_BODY_MAX characters, as in the operator mailbox.
 * @param remoteAddress the SMTP client's address. @returns how many were stored.
 */
export async function deliverToDomainOwners(
  ctx: DomainContext,
  parsed: InboundMessage,
  envelope: { mailFrom: string; rcptTo: string[] },
  remoteAddress: string,
): Promise<number> {
  const rows: (RoleMessageRow & { body: string })[] = [];
  const messageId = stripNul(parsed.messageId ?? '') || `<${uuidv7()}@${ctx.config.EMAIL_DOMAIN}>`;
  let body = stripNul(parsed.text).replace(/\r\n/g, '\n').replace(/\n+$/, '');
  if (body.length > OPERATOR_BODY_MAX) {
    body = `${body.slice(0, OPERATOR_BODY_MAX)}\n[… cut at ${OPERATOR_BODY_MAX} characters]`;
  }
  for (const recipient of new Set(envelope.rcptTo.map(normalizeAddress))) {
    const accountId = await customRoleOwner(ctx, recipient);
    if (!accountId) continue;
    rows.push({
      id: uuidv7(),
      accountId,
      recipient,
      messageId,
      mailFrom: stripNul(envelope.mailFrom),
      from: normalizeAddress(stripNul(parsed.from[0] ?? envelope.mailFrom)),
      subject: stripNul(parsed.subject).slice(0, 1000),
      body,
      remoteAddress,
      receivedAt: ctx.clock.now(),
    });
  }
  return insertRoleMessages(ctx.db, rows);
}

/** Query of GET /api/email/role-mail. */
export const roleMailQuery = z
  .object({
    limit: decimalInt(1, 200).default(50).describe('Messages per page, 1–200, default 50.'),
    cursor: z.string().min(1).max(200).optional().describe('`nextCursor` of the previous page.'),
  })
  .strict();
/** Parsed roleMailQuery. */
export type RoleMailQuery = z.output<typeof roleMailQuery>;

/** A role message as the API shows it (body only in the single read). */
export interface RoleMessageView {
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

function view(m: RoleMessageRow): RoleMessageView {
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
 * The caller's role mail (postmaster@/abuse@ of its custom domains) in arrival order (ids are UUIDv7), without
 * bodies. @returns `{messages, nextCursor}` (null on the last page).
 * @throws ForbiddenError (403) without the `email` scope; BadRequestError 400 INVALID_CURSOR.
 */
export async function listRoleMail(
  ctx: DomainContext,
  actor: Actor,
  query: RoleMailQuery,
): Promise<{ messages: RoleMessageView[]; nextCursor: string | null }> {
  requireScope(actor, 'email');
  const after = decodeCursor(query.cursor);
  const page = await keysetPage(query.limit, (take) => roleMessagesOf(ctx.db, actor.accountId, after, take));
  return { messages: page.items.map(view), nextCursor: page.last ? encodeCursor(page.last.id) : null };
}

/**
 * One role message of the caller, with its text body.
 * @throws ForbiddenError (403) without the `email` scope; NotFoundError (404, field `id`; another account's too).
 */
export async function getRoleMail(
  ctx: DomainContext,
  actor: Actor,
  id: string,
): Promise<RoleMessageView & { body: string }> {
  requireScope(actor, 'email');
  const m = await roleMessageOf(ctx.db, actor.accountId, id);
  if (!m) throw new NotFoundError('role message', id, 'id');
  return { ...view(m), body: m.body };
}
