// The store of role mail of custom domains (issue 26; issue 23's store convention): every Prisma call of
// role-mail.service.ts. Plain parameters in, plain shapes out.
import type { Db } from '../kernel/db.js';
import { keysetArgs } from '../paging.js';

/** One stored role message (the row as the service sees it; `body` absent from list reads). */
export interface RoleMessageRow {
  id: string;
  accountId: string;
  recipient: string;
  messageId: string;
  mailFrom: string;
  from: string;
  subject: string;
  remoteAddress: string;
  receivedAt: Date;
  body?: string;
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

/** Inserts `rows`, skipping one already stored (same account, recipient and Message-ID). @returns how many were new. */
export async function insertRoleMessages(db: Db, rows: (RoleMessageRow & { body: string })[]): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await db.accountRoleMessage.createMany({ data: rows, skipDuplicates: true });
  return result.count;
}

/** The account's role messages after `after` (an id), in id order, at most `take`, without bodies. */
export async function roleMessagesOf(
  db: Db,
  accountId: string,
  after: string | undefined,
  take: number,
): Promise<RoleMessageRow[]> {
  const window = keysetArgs('id', { after, limit: take });
  return db.accountRoleMessage.findMany({ ...window, where: { ...window.where, accountId }, omit: { body: true } });
}

/** One role message of the account, with its body; undefined when absent or another account's. */
export async function roleMessageOf(
  db: Db,
  accountId: string,
  id: string,
): Promise<(RoleMessageRow & { body: string }) | undefined> {
  return (await db.accountRoleMessage.findFirst({ where: { id, accountId } })) ?? undefined;
}
