// The contacts area's store (issue 23): every Prisma call about contacts and their handles (the addresses and
// numbers, each of which belongs to at most one contact of an account). Services call these with plain parameters.

import type { Db, Tx } from '../kernel/db.js';

/** A contact row. */
export interface ContactRecord {
  id: string;
  accountId: string;
  name: string;
  /** Lower-cased addresses. */
  emails: string[];
  /** E.164 numbers. */
  phones: string[];
  createdAt: Date;
  updatedAt: Date;
}

/** Handle kinds: an address or a number. */
export type HandleKind = 'email' | 'phone';

/** The account's contact `id`, or null. */
export async function findContactRow(db: Db, accountId: string, id: string): Promise<ContactRecord | null> {
  return db.contact.findFirst({ where: { id, accountId } });
}

/** Runs `fn` in one transaction. */
export async function inContactTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.$transaction(fn);
}

/** Inserts a contact. @returns the row. */
export async function insertContact(tx: Tx, data: ContactRecord): Promise<ContactRecord> {
  return tx.contact.create({ data });
}

/** Updates contact `id` (absent fields keep their value). @returns the row after. */
export async function updateContactRow(
  tx: Tx,
  id: string,
  data: { name?: string; emails?: string[]; phones?: string[]; updatedAt: Date },
): Promise<ContactRecord> {
  return tx.contact.update({ where: { id }, data });
}

/** Deletes the account's contact `id` (its handles go with it). @returns false when there was none. */
export async function deleteContactRow(db: Db, accountId: string, id: string): Promise<boolean> {
  const { count } = await db.contact.deleteMany({ where: { id, accountId } });
  return count > 0;
}

/** Which of `values` another contact than `contactId` of the account holds: value → that contact's id. */
export async function handleOwners(
  tx: Tx,
  accountId: string,
  contactId: string,
  values: string[],
): Promise<Map<string, string>> {
  const taken = await tx.contactHandle.findMany({
    where: { accountId, value: { in: values }, contactId: { not: contactId } },
  });
  return new Map(taken.map((h) => [h.value, h.contactId]));
}

/** Replaces the handles of kind `kind` of `contactId` with `values`. */
export async function replaceHandles(
  tx: Tx,
  accountId: string,
  contactId: string,
  kind: HandleKind,
  values: string[],
): Promise<void> {
  await tx.contactHandle.deleteMany({ where: { contactId, kind } });
  if (values.length > 0) {
    await tx.contactHandle.createMany({ data: values.map((value) => ({ accountId, value, kind, contactId })) });
  }
}

/** Up to `take` contacts of the account with id above `after`, in id order (a keyset page). */
export async function contactPage(
  db: Db,
  accountId: string,
  after: string | undefined,
  take: number,
): Promise<ContactRecord[]> {
  return db.contact.findMany({
    where: { accountId, ...(after !== undefined ? { id: { gt: after } } : {}) },
    orderBy: { id: 'asc' },
    take,
  });
}

/**
 * The account's contacts oldest first, with `selection` (the query arguments @pothos/plugin-prisma computes for a
 * GraphQL selection: `select`/`include`, and a connection's `take`/`skip`/`cursor`).
 */
export async function selectContacts(
  db: Db,
  accountId: string,
  selection: Record<string, unknown>,
): Promise<ContactRecord[]> {
  return db.contact.findMany({
    ...selection,
    where: { accountId },
    orderBy: [{ id: 'asc' }],
  }) as Promise<ContactRecord[]>;
}

/** The account's contact `id` with `selection` (as {@link selectContacts}), or null. */
export async function selectContact(
  db: Db,
  accountId: string,
  id: string,
  selection: Record<string, unknown>,
): Promise<ContactRecord | null> {
  return (await db.contact.findFirst({ ...selection, where: { id, accountId } })) as ContactRecord | null;
}

/** The number of the account's contacts. */
export async function countContactRows(db: Db, accountId: string): Promise<number> {
  return db.contact.count({ where: { accountId } });
}

/** Contacts of the account among `ids`, in no particular order. */
export async function contactsAmong(db: Db, accountId: string, ids: readonly string[]): Promise<ContactRecord[]> {
  return db.contact.findMany({ where: { id: { in: [...ids] }, accountId } });
}

/** The contact of the account holding `value` (already normalised) as a handle, with the handle's kind; or null. */
export async function contactByHandle(
  db: Db,
  accountId: string,
  value: string,
): Promise<{ kind: string; contact: ContactRecord } | null> {
  return db.contactHandle.findUnique({
    where: { accountId_value: { accountId, value } },
    include: { contact: true },
  });
}
