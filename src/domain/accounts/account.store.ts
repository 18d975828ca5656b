// The accounts area's store (issue 23): every Prisma call about accounts and API keys. Services call these with
// plain parameters and get the plain records below.

import type { Db } from '../kernel/db.js';

/** An account row. */
export interface AccountRecord {
  id: string;
  name: string;
  createdAt: Date;
}

/** An API key row: only the SHA-256 of its secret part is stored (hex). */
export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  /** Hex SHA-256 of the key's secret part. */
  secretHash: string;
  scopes: string[];
  createdAt: Date;
  revokedAt: Date | null;
}

/** A key to insert. */
export interface NewApiKey {
  id: string;
  accountId: string;
  name: string;
  secretHash: string;
  scopes: string[];
}

/** Inserts an account and its first key in one transaction. */
export async function insertAccountWithKey(
  db: Db,
  account: { id: string; name: string },
  key: NewApiKey,
): Promise<void> {
  await db.$transaction(async (tx) => {
    await tx.account.create({ data: account });
    await tx.apiKey.create({ data: key });
  });
}

/** Inserts an API key. */
export async function insertApiKey(db: Db, key: NewApiKey): Promise<void> {
  await db.apiKey.create({ data: key });
}

/** Key `id` (revoked or not), or null. */
export async function findApiKey(db: Db, id: string): Promise<ApiKeyRecord | null> {
  return db.apiKey.findUnique({ where: { id } });
}

/** The account's unrevoked key `id`, or null. */
export async function findActiveAccountKey(db: Db, accountId: string, id: string): Promise<ApiKeyRecord | null> {
  return db.apiKey.findFirst({ where: { id, accountId, revokedAt: null } });
}

/** Revokes key `id` at `at` unless already revoked (then a no-op). */
export async function revokeApiKey(db: Db, id: string, at: Date): Promise<void> {
  await db.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: at } });
}

/** Whether key `id` exists unrevoked. */
export async function isApiKeyActive(db: Db, id: string): Promise<boolean> {
  const key = await db.apiKey.findUnique({ where: { id }, select: { revokedAt: true } });
  return key !== null && key.revokedAt === null;
}

/** Which of `ids` exist unrevoked, in one query. */
export async function activeApiKeysAmong(db: Db, ids: readonly string[]): Promise<Set<string>> {
  const rows = await db.apiKey.findMany({ where: { id: { in: [...ids] }, revokedAt: null }, select: { id: true } });
  return new Set(rows.map((r) => r.id));
}

/** The account's keys, oldest first. */
export async function keysOfAccount(db: Db, accountId: string): Promise<ApiKeyRecord[]> {
  return db.apiKey.findMany({ where: { accountId }, orderBy: { createdAt: 'asc' } });
}

/** Number of accounts. */
export async function countAccountRows(db: Db): Promise<number> {
  return db.account.count();
}

/** Account `id`, or null. */
export async function findAccount(db: Db, id: string): Promise<AccountRecord | null> {
  return db.account.findUnique({ where: { id } });
}

/** Up to `take` accounts with id above `after`, in id order (a keyset page). */
export async function accountPage(db: Db, after: string | undefined, take: number): Promise<AccountRecord[]> {
  return db.account.findMany({
    where: after !== undefined ? { id: { gt: after } } : {},
    orderBy: { id: 'asc' },
    take,
  });
}
