import type { DkimKey, EmailDomain } from '../../generated/prisma/client.js';
import type { Tx } from '../kernel/db.js';

/*
 * The store of the accounts' custom email domains and the DKIM keys of every sending domain (issue 23): every
 * Prisma call about them. Functions take the client or transaction they run on (`Tx`) and plain parameters, and
 * return rows; the row types are re-exported here so services name them without importing Prisma.
 */

export type { DkimKey, EmailDomain };

/** The account's custom domains, oldest first. */
export function domainsOf(db: Tx, accountId: string): Promise<EmailDomain[]> {
  return db.emailDomain.findMany({ where: { accountId }, orderBy: [{ createdAt: 'asc' }, { domain: 'asc' }] });
}

/** The account's custom domain `domain` (lower-cased), or null. */
export function domainOf(db: Tx, accountId: string, domain: string): Promise<EmailDomain | null> {
  return db.emailDomain.findFirst({ where: { domain, accountId } });
}

/** Inserts a custom domain. @throws Prisma P2002 when the domain is taken (by any account). */
export async function insertDomain(db: Tx, data: Pick<EmailDomain, 'domain' | 'accountId' | 'status' | 'createdAt'>) {
  await db.emailDomain.create({ data });
}

/** Deletes the account's custom domain. */
export async function deleteDomainRow(db: Tx, accountId: string, domain: string): Promise<void> {
  await db.emailDomain.deleteMany({ where: { domain, accountId } });
}

/** Which of `domains` are verified custom domains (of any account). */
export async function verifiedAmong(db: Tx, domains: string[]): Promise<Set<string>> {
  const rows = await db.emailDomain.findMany({
    where: { domain: { in: domains }, status: 'verified' },
    select: { domain: true },
  });
  return new Set(rows.map((r) => r.domain));
}

/** Marks the account's pending domain verified at `at`. @returns how many rows moved (0 when not pending). */
export async function markDomainVerified(tx: Tx, accountId: string, domain: string, at: Date): Promise<number> {
  const { count } = await tx.emailDomain.updateMany({
    where: { domain, accountId, status: 'pending' },
    data: { status: 'verified', verifiedAt: at, checkedAt: at },
  });
  return count;
}

/** Records when the account's domain was last checked. */
export async function markDomainChecked(db: Tx, accountId: string, domain: string, at: Date): Promise<void> {
  await db.emailDomain.updateMany({ where: { domain, accountId }, data: { checkedAt: at } });
}

/** The domain's DKIM key, or null. */
export function dkimKeyOf(db: Tx, domain: string): Promise<DkimKey | null> {
  return db.dkimKey.findUnique({ where: { domain } });
}

/** The domain's DKIM key. @throws when there is none (Prisma's not-found error). */
export function dkimKeyOrThrow(db: Tx, domain: string): Promise<DkimKey> {
  return db.dkimKey.findUniqueOrThrow({ where: { domain } });
}

/** Inserts the domain's DKIM key unless one exists (a concurrent insert wins; read it back after). */
export async function insertDkimKeyOnce(db: Tx, key: DkimKey): Promise<void> {
  await db.dkimKey.createMany({ data: [key], skipDuplicates: true });
}

/** Deletes the domain's DKIM key, if any. */
export async function deleteDkimKeyRow(db: Tx, domain: string): Promise<void> {
  await db.dkimKey.deleteMany({ where: { domain } });
}
