import type { EmailBlockEntry, EmailSuppression } from '../../generated/prisma/client.js';
import type { Tx } from '../kernel/db.js';
import { keysetArgs } from '../paging.js';

/*
 * The store of what stops mail: the suppression list (permanent bounces) and the block list (issue 23): every
 * Prisma call about them. Functions take the client or transaction they run on (`Tx`) and plain parameters, and
 * return rows; the row types are re-exported here so services name them without importing Prisma.
 */

export type { EmailBlockEntry, EmailSuppression };

/** One keyset page of the account's suppressions in id order: after the id `after`, at most `take` rows. */
export function suppressionsPage(
  db: Tx,
  accountId: string,
  after: string | undefined,
  take: number,
): Promise<EmailSuppression[]> {
  const k = keysetArgs('id', { after, limit: take });
  return db.emailSuppression.findMany({ where: { accountId, ...k.where }, orderBy: k.orderBy, take });
}

/** Removes `address` from the account's suppression list. @returns how many rows went (0 or 1). */
export async function deleteSuppressionRow(db: Tx, accountId: string, address: string): Promise<number> {
  const { count } = await db.emailSuppression.deleteMany({ where: { accountId, address } });
  return count;
}

/** The account's suppressions among `addresses`. */
export function suppressionsAmong(db: Tx, accountId: string, addresses: string[]): Promise<EmailSuppression[]> {
  return db.emailSuppression.findMany({ where: { accountId, address: { in: addresses } } });
}

/** Adds a suppression unless the account already has one for the address (the first bounce's details stay). */
export async function addSuppressionOnce(tx: Tx, row: EmailSuppression): Promise<void> {
  await tx.emailSuppression.createMany({ data: [row], skipDuplicates: true });
}

/** Inserts a block list entry. */
export function insertBlockEntry(db: Tx, row: EmailBlockEntry): Promise<EmailBlockEntry> {
  return db.emailBlockEntry.create({ data: row });
}

/** One keyset page of the account's block list in id order: after the id `after`, at most `take` rows. */
export function blockEntriesPage(
  db: Tx,
  accountId: string,
  after: string | undefined,
  take: number,
): Promise<EmailBlockEntry[]> {
  const k = keysetArgs('id', { after, limit: take });
  return db.emailBlockEntry.findMany({ where: { accountId, ...k.where }, orderBy: k.orderBy, take });
}

/** Deletes the account's block list entry. @returns how many rows went (0 or 1). */
export async function deleteBlockEntryRow(db: Tx, accountId: string, id: string): Promise<number> {
  const { count } = await db.emailBlockEntry.deleteMany({ where: { id, accountId } });
  return count;
}

/**
 * The entries among `entries` (addresses and domains) on the account's block list in `direction` that apply to the
 * identity (account-wide or its own). `limitOne` stops at the first hit.
 */
export async function blockedEntries(
  db: Tx,
  identity: { id: string; accountId: string },
  direction: 'inbound' | 'outbound',
  entries: string[],
  limitOne = false,
): Promise<string[]> {
  const where = {
    accountId: identity.accountId,
    direction,
    entry: { in: entries },
    OR: [{ identityId: null }, { identityId: identity.id }],
  };
  if (limitOne) {
    const hit = await db.emailBlockEntry.findFirst({ where, select: { entry: true } });
    return hit ? [hit.entry] : [];
  }
  const rows = await db.emailBlockEntry.findMany({ where, select: { entry: true } });
  return rows.map((r) => r.entry);
}
