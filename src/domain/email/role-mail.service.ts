import { type Actor, requireScope } from '../accounts/account.service.js';
import { NotFoundError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import type { Db } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';
import { decodeCursor, encodeCursor, keysetPage, type PageQuery } from '../paging.js';
import { hostedDomains, normalizeAddress } from './mail.rules.js';
import type { InboundMessage } from './mail-transport.port.js';
import {
  accountMailbox,
  type FullRoleMessageRow,
  insertRoleMessages,
  isActiveIdentity,
  OPERATOR_MAILBOX,
  type RoleMailbox,
  type RoleMessageRow,
  roleMessageById,
  roleMessagesByIds,
  roleMessagesWindow,
  verifiedDomainOwner,
} from './role-mail.store.js';

/*
 * Stored role messages (issue 26): mail to `postmaster@` (RFC 5321 4.5.1: "MUST support the reserved mailbox
 * postmaster") and `abuse@` (RFC 2142 section 2) of every hosted domain, kept in one of two mailboxes:
 * - the service's own domains (EMAIL_DOMAINS) are shared by every account, so theirs reach the **operator mailbox**,
 *   whatever identities exist, read through the admin API (GET /admin/mail);
 * - an account's verified custom domain is that account's, so theirs are kept **for the account** (REST
 *   GET /api/email/role-mail, GraphQL `roleMail`, event `email.role_mail.received`), unless an identity of that
 *   very address exists (its mail is then an ordinary inbound message). A domain that is not verified is not
 *   hosted, and mail to it is refused like any unknown address.
 * The two mailboxes are one module parameterized by the mailbox ({@link RoleMailbox}): one delivery, one view, one
 * list and one read.
 */

export { OPERATOR_MAILBOX, type RoleMailbox };

/** The role local parts every hosted domain accepts (RFC 5321 2.4: the local part `postmaster` is case-insensitive). */
export const ROLE_LOCAL_PARTS: readonly string[] = ['postmaster', 'abuse'];

/** Longest body kept of a message to a role address, in characters (the rest is cut, with a note). */
export const ROLE_BODY_MAX = 1_000_000;

/**
 * Whether `address` is a role address of this service: `postmaster@` or `abuse@` one of the hosted domains (any
 * case), or `postmaster` alone (RFC 5321 4.5.1 requires `RCPT TO:<Postmaster>` without a domain to be accepted).
 * These reach the operator mailbox.
 */
export function isRoleAddress(config: DomainContext['config'], address: string): boolean {
  const role = roleAddressParts(address);
  return role !== undefined && (role.domain === undefined || hostedDomains(config).includes(role.domain));
}

/**
 * `address` normalized and split when its local part is a role one ({@link ROLE_LOCAL_PARTS}, any case) or it is
 * `postmaster` alone (`domain` then undefined); undefined for any other address. The one reading of a role address
 * for {@link isRoleAddress}, {@link mayBeRoleAddress} and {@link customRoleOwner}.
 */
function roleAddressParts(address: string): { address: string; domain?: string } | undefined {
  const a = normalizeAddress(address);
  if (a === 'postmaster') return { address: a };
  const at = a.lastIndexOf('@');
  if (at <= 0 || !ROLE_LOCAL_PARTS.includes(a.slice(0, at))) return undefined;
  return { address: a, domain: a.slice(at + 1) };
}

/**
 * Whether `address` can be a role address at all, of this service or of a custom domain: `postmaster` alone or a
 * {@link ROLE_LOCAL_PARTS} local part (any case), whatever the domain. False means {@link isRoleAddress} and
 * {@link customRoleOwner} both say no without a look-up, so {@link deliverRoleMail} has nothing to keep for it.
 */
export function mayBeRoleAddress(address: string): boolean {
  return roleAddressParts(address) !== undefined;
}

/**
 * The inbound stream's `alsoDeliver` hook for one SMTP transaction: {@link deliverRoleMail} of the parsed message,
 * or undefined when no recipient can be a role address ({@link mayBeRoleAddress}), so that most mail pays no look-up
 * and no await for it (issue 24).
 */
export function roleMailHook(
  ctx: DomainContext,
  envelope: { mailFrom: string; rcptTo: string[] },
  remoteAddress: string,
): ((parsed: InboundMessage) => Promise<number>) | undefined {
  if (!envelope.rcptTo.some(mayBeRoleAddress)) return undefined;
  return (parsed) => deliverRoleMail(ctx, parsed, envelope, remoteAddress);
}

/**
 * The account that receives mail sent to `address` as a role address of its custom domain: `postmaster@` or
 * `abuse@` (any case) a verified custom domain, when no active identity has that address.
 * @returns the owning account's id, or undefined (not a role address, the service's own domain, not verified, or an
 * identity holds the address).
 */
export async function customRoleOwner(ctx: DomainContext, address: string): Promise<string | undefined> {
  const role = roleAddressParts(address);
  if (role?.domain === undefined) return undefined;
  if (hostedDomains(ctx.config).includes(role.domain)) return undefined; // the operator's (isRoleAddress)
  const owner = await verifiedDomainOwner(ctx.db, role.domain);
  if (!owner || (await isActiveIdentity(ctx.db, role.address))) return undefined;
  return owner;
}

const stripNul = (s: string) => s.replaceAll('\u0000', '');

/** The stored copy of `parsed` for `recipient` (NUL bytes dropped, subject capped at 1000, body at ROLE_BODY_MAX). */
function roleCopy(
  ctx: DomainContext,
  parsed: InboundMessage,
  mailFrom: string,
  remoteAddress: string,
): (recipient: string) => FullRoleMessageRow {
  const messageId = stripNul(parsed.messageId ?? '') || `<${uuidv7()}@${ctx.config.EMAIL_DOMAIN}>`;
  let body = stripNul(parsed.text).replace(/\r\n/g, '\n').replace(/\n+$/, '');
  if (body.length > ROLE_BODY_MAX) body = `${body.slice(0, ROLE_BODY_MAX)}\n[… cut at ${ROLE_BODY_MAX} characters]`;
  const receivedAt = ctx.clock.now();
  return (recipient) => ({
    id: uuidv7(),
    recipient,
    messageId,
    mailFrom: stripNul(mailFrom),
    from: normalizeAddress(stripNul(parsed.from[0] ?? mailFrom)),
    subject: stripNul(parsed.subject).slice(0, 1000),
    body,
    remoteAddress,
    receivedAt,
  });
}

/**
 * Keeps `parsed` for every recipient of `envelope` that is a role address: the service's own domains' in the
 * operator mailbox ({@link isRoleAddress}), a custom domain's for the account owning it ({@link customRoleOwner}).
 * Once per mailbox, recipient and Message-ID: a retried delivery is not doubled. Each message newly kept for an
 * account emits `email.role_mail.received` (payload `{event, data: {id, address, from, subject, receivedAt}}`, no
 * body) in the transaction that stores it; one transaction per account, so no two accounts' event locks are held
 * at once.
 * @param remoteAddress the SMTP client's address. @returns how many were stored (0 when no recipient is a role).
 */
export async function deliverRoleMail(
  ctx: DomainContext,
  parsed: InboundMessage,
  envelope: { mailFrom: string; rcptTo: string[] },
  remoteAddress: string,
): Promise<number> {
  const toOperator: string[] = [];
  const toAccounts = new Map<string, string[]>();
  for (const recipient of new Set(envelope.rcptTo.map(normalizeAddress))) {
    if (isRoleAddress(ctx.config, recipient)) {
      toOperator.push(recipient);
      continue;
    }
    const accountId = await customRoleOwner(ctx, recipient);
    if (accountId) toAccounts.set(accountId, [...(toAccounts.get(accountId) ?? []), recipient]);
  }
  if (toOperator.length === 0 && toAccounts.size === 0) return 0;
  const copy = roleCopy(ctx, parsed, envelope.mailFrom, remoteAddress);
  let stored = (await insertRoleMessages(ctx.db, OPERATOR_MAILBOX, toOperator.map(copy))).length;
  for (const [accountId, recipients] of [...toAccounts].sort(([a], [b]) => a.localeCompare(b))) {
    stored += await ctx.events.transaction(async (tx, emit) => {
      const created = await insertRoleMessages(tx, accountMailbox(accountId), recipients.map(copy));
      for (const m of created) {
        await emit(accountId, 'email.role_mail.received', {
          event: 'email.role_mail.received',
          data: {
            id: m.id,
            address: m.recipient,
            from: m.from,
            subject: m.subject,
            receivedAt: m.receivedAt.toISOString(),
          },
        });
      }
      return created.length;
    });
  }
  return stored;
}

/** A role message as the APIs show it (body only in the single read). */
export interface RoleMessageView {
  id: string;
  /** The role address it was sent to, lower-cased. */
  recipient: string;
  messageId: string;
  /** SMTP reverse-path; empty for the null reverse-path. */
  mailFrom: string;
  from: string;
  subject: string;
  /** The SMTP client's address. */
  remoteAddress: string;
  /** ISO 8601 UTC. */
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
 * One page of `box` in arrival order (ids are UUIDv7), without bodies; `query` is `pageQuery` (src/domain/paging.ts).
 * @returns `{messages, nextCursor}` (null on the last page). @throws BadRequestError 400 INVALID_CURSOR.
 */
export async function listRoleMessages(
  db: Db,
  box: RoleMailbox,
  query: PageQuery,
): Promise<{ messages: RoleMessageView[]; nextCursor: string | null }> {
  const after = decodeCursor(query.cursor);
  const page = await keysetPage(query.limit, (limit) => roleMessagesWindow(db, box, { after, limit }));
  return { messages: page.items.map(view), nextCursor: page.last ? encodeCursor(page.last.id) : null };
}

/** One message of `box` with its text body. @throws NotFoundError (404, field `id`; another account's too). */
export async function getRoleMessage(
  db: Db,
  box: RoleMailbox,
  id: string,
): Promise<RoleMessageView & { body: string }> {
  const m = await roleMessageById(db, box, id);
  if (!m) throw new NotFoundError(box.kind === 'operator' ? 'operator message' : 'role message', id, 'id');
  return { ...view(m), body: m.body };
}

/**
 * The caller's role mail (postmaster@/abuse@ of its custom domains), REST GET /api/email/role-mail.
 * @throws ForbiddenError (403) without the `email` scope; BadRequestError 400 INVALID_CURSOR.
 */
export function listRoleMail(
  ctx: DomainContext,
  actor: Actor,
  query: PageQuery,
): Promise<{ messages: RoleMessageView[]; nextCursor: string | null }> {
  requireScope(actor, 'email');
  return listRoleMessages(ctx.db, accountMailbox(actor.accountId), query);
}

/**
 * One role message of the caller, with its text body (REST GET /api/email/role-mail/{id}).
 * @throws ForbiddenError (403) without the `email` scope; NotFoundError (404, field `id`; another account's too).
 */
export function getRoleMail(ctx: DomainContext, actor: Actor, id: string): Promise<RoleMessageView & { body: string }> {
  requireScope(actor, 'email');
  return getRoleMessage(ctx.db, accountMailbox(actor.accountId), id);
}

/** The cursor of a role message: REST's `nextCursor` for it, also GraphQL `roleMail`'s edge cursor. */
export function roleMailCursor(m: { id: string }): string {
  return encodeCursor(m.id);
}

/**
 * A window of the caller's role mail for a Relay connection (GraphQL `roleMail`), arrival order: messages after
 * the cursor `after` and before `before` (cursors of {@link roleMailCursor}, the same as REST's), at most `limit`;
 * `inverted` (Relay `last`) reads from the `before` end and answers in reverse, the shape Pothos'
 * `resolveCursorConnection` asks for. No bodies.
 * @throws ForbiddenError without the `email` scope; BadRequestError 400 INVALID_CURSOR.
 */
export async function pageRoleMail(
  ctx: DomainContext,
  actor: Actor,
  window: { after?: string; before?: string; limit: number; inverted: boolean },
): Promise<RoleMessageView[]> {
  requireScope(actor, 'email');
  const rows = await roleMessagesWindow(ctx.db, accountMailbox(actor.accountId), {
    after: decodeCursor(window.after),
    before: decodeCursor(window.before),
    limit: window.limit,
    inverted: window.inverted,
  });
  return rows.map(view);
}

/**
 * The caller's role messages with these ids, in the ids' order, null where unknown or another account's (GraphQL
 * `node(id:)`, and the batched `body` of a page with `withBody`). Scope: email.
 */
export async function roleMailByIds(
  ctx: DomainContext,
  actor: Actor,
  ids: readonly string[],
  withBody = false,
): Promise<(RoleMessageView | null)[]> {
  requireScope(actor, 'email');
  const rows = await roleMessagesByIds(ctx.db, accountMailbox(actor.accountId), ids, withBody);
  const byId = new Map(rows.map((r) => [r.id, view(r)]));
  return ids.map((id) => byId.get(id) ?? null);
}
