// The store of stored role messages (issue 26; issue 23's store convention): every Prisma call of
// role-mail.service.ts, for both mailboxes. Mail to postmaster@/abuse@ of the service's own domains is kept in the
// operator mailbox (table operator_messages); of an account's verified custom domain, for that account (table
// account_role_messages). Both tables have the same columns (the account's has `account_id`), so every function
// takes the mailbox it reads or writes. Plain parameters in, plain shapes out.
import type { Db, Tx } from '../kernel/db.js';
import { type KeysetWindow, keysetArgs } from '../paging.js';

/** Whose role mail: one account's (its custom domains') or the operator's (the service's own domains'). */
export type RoleMailbox = { kind: 'account'; accountId: string } | { kind: 'operator' };

/** The operator mailbox. */
export const OPERATOR_MAILBOX: RoleMailbox = { kind: 'operator' };

/** The mailbox of account `accountId`. */
export function accountMailbox(accountId: string): RoleMailbox {
  return { kind: 'account', accountId };
}

/** One stored role message (the row as the service sees it; `body` absent from list reads). */
export interface RoleMessageRow {
  /** UUIDv7: arrival order. */
  id: string;
  /** The role address, lower-cased (`postmaster@…`, `abuse@…`, or `postmaster` alone in the operator mailbox). */
  recipient: string;
  messageId: string;
  /** SMTP reverse-path; empty for the null reverse-path. */
  mailFrom: string;
  from: string;
  subject: string;
  /** The SMTP client's address. */
  remoteAddress: string;
  receivedAt: Date;
  body?: string;
}

/** A role message with its body, as written. */
export type FullRoleMessageRow = RoleMessageRow & { body: string };

/** The mailbox's rows by `where` (the account's filter added), as the two Prisma delegates share one shape. */
function accountWhere(box: RoleMailbox, where: Record<string, unknown>) {
  return box.kind === 'account' ? { ...where, accountId: box.accountId } : where;
}

/**
 * Inserts `rows` into `box`, skipping one already stored (same recipient and Message-ID, in the same account).
 * @returns the rows that were new (with their bodies), in `rows`' order.
 */
export async function insertRoleMessages(
  db: Tx,
  box: RoleMailbox,
  rows: FullRoleMessageRow[],
): Promise<FullRoleMessageRow[]> {
  if (rows.length === 0) return [];
  const created =
    box.kind === 'account'
      ? await db.accountRoleMessage.createManyAndReturn({
          data: rows.map((r) => ({ ...r, accountId: box.accountId })),
          skipDuplicates: true,
        })
      : await db.operatorMessage.createManyAndReturn({ data: rows, skipDuplicates: true });
  const byId = new Map<string, FullRoleMessageRow>(created.map((r) => [r.id, r]));
  return rows.flatMap((r) => byId.get(r.id) ?? []);
}

/** One keyset window of `box` in id (arrival) order, without bodies (Relay `before`/`last` through `window`). */
export async function roleMessagesWindow(db: Db, box: RoleMailbox, window: KeysetWindow): Promise<RoleMessageRow[]> {
  const args = keysetArgs('id', window);
  const query = { ...args, where: accountWhere(box, args.where), omit: { body: true } } as const;
  return box.kind === 'account' ? db.accountRoleMessage.findMany(query) : db.operatorMessage.findMany(query);
}

/** The messages of `box` with these ids (any order; others' ids are absent), with bodies only when `withBody`. */
export async function roleMessagesByIds(
  db: Db,
  box: RoleMailbox,
  ids: readonly string[],
  withBody: boolean,
): Promise<RoleMessageRow[]> {
  const query = { where: accountWhere(box, { id: { in: [...ids] } }), omit: { body: !withBody } };
  return box.kind === 'account' ? db.accountRoleMessage.findMany(query) : db.operatorMessage.findMany(query);
}

/** One message of `box` with its body; undefined when absent (or another account's). */
export async function roleMessageById(db: Db, box: RoleMailbox, id: string): Promise<FullRoleMessageRow | undefined> {
  const where = accountWhere(box, { id });
  const row =
    box.kind === 'account'
      ? await db.accountRoleMessage.findFirst({ where })
      : await db.operatorMessage.findFirst({ where });
  return row ?? undefined;
}

/** The account owning `domain` when it is a custom domain with status `verified`; undefined otherwise. */
export async function verifiedDomainOwner(db: Db, domain: string): Promise<string | undefined> {
  const row = await db.emailDomain.findFirst({
    where: { domain, status: 'verified' },
    select: { accountId: true },
  });
  return row?.accountId;
}

/** Whether `address` is an active identity (of any account). */
export async function isActiveIdentity(db: Db, address: string): Promise<boolean> {
  return (await db.emailIdentity.count({ where: { address, status: 'active' } })) > 0;
}
