// The phone number (DID) store (issue 23 "one store per area"): every Prisma call and SQL text of provisioned
// numbers and their lifecycle. Services call these with plain parameters and get rows back; the row type is
// exported here under a domain name so no service names a generated Prisma type.

import type { PhoneNumber } from '../../generated/prisma/client.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { Db, Tx } from '../kernel/db.js';
import { type KeysetWindow, keysetArgs } from '../paging.js';

/** A provisioned number (table compliance_numbers). */
export type NumberRecord = PhoneNumber;
/** A number with its campaign's status (the DID mapping). */
export type NumberWithCampaign = NumberRecord & { campaign: { status: string } | null };
/** The lifecycle columns a DID state change may write. */
export type NumberChange = Partial<
  Pick<
    NumberRecord,
    | 'campaignId'
    | 'assignedAt'
    | 'lastCampaignId'
    | 'assignmentStatus'
    | 'stateDueAt'
    | 'lockedBy'
    | 'lockedUntil'
    | 'state'
    | 'stateChangedAt'
  > & { failureReasons: { code: string; message: string }[] }
>;

/** Numbers among `numbers`, of any account when `accountId` is undefined; in the database's order. */
export function numbersIn(db: Db | Tx, numbers: string[], accountId?: string): Promise<NumberRecord[]> {
  return db.phoneNumber.findMany({
    where: accountId === undefined ? { number: { in: numbers } } : { accountId, number: { in: numbers } },
  });
}

/** Numbers among `numbers` (any account), ascending by number. */
export function numbersInOrdered(db: Db | Tx, numbers: string[]): Promise<NumberRecord[]> {
  return db.phoneNumber.findMany({ where: { number: { in: numbers } }, orderBy: { number: 'asc' } });
}

/** Numbers of `accountId` among `numbers` linked to campaign `campaignId`; in the database's order. */
export function linkedNumbersIn(
  tx: Tx,
  accountId: string,
  campaignId: string,
  numbers: string[],
): Promise<NumberRecord[]> {
  return tx.phoneNumber.findMany({ where: { accountId, campaignId, number: { in: numbers } } });
}

/**
 * Inserts `numbers` into `accountId`, skipping numbers that exist (a concurrent provisioning).
 * @returns how many were inserted.
 */
export async function insertNumbers(tx: Tx, accountId: string, numbers: string[], now: Date): Promise<number> {
  const { count } = await tx.phoneNumber.createMany({
    data: numbers.map((number) => ({ number, accountId, createdAt: now })),
    skipDuplicates: true,
  });
  return count;
}

/** Numbers of `accountId` in a keyset window by number. */
export function numberPage(db: Db | Tx, accountId: string, window: KeysetWindow): Promise<NumberRecord[]> {
  const args = keysetArgs('number', window);
  return db.phoneNumber.findMany({ ...args, where: { accountId, ...args.where } });
}

/** Numbers of `accountId` with their campaign's status in a keyset window by number (DID mapping). */
export function numberMappingPage(db: Db | Tx, accountId: string, window: KeysetWindow): Promise<NumberWithCampaign[]> {
  const args = keysetArgs('number', window);
  return db.phoneNumber.findMany({
    ...args,
    where: { accountId, ...args.where },
    include: { campaign: { select: { status: true } } },
  });
}

/** Number `number` of `accountId`, or null. */
export function findNumber(tx: Tx, accountId: string, number: string): Promise<NumberRecord | null> {
  return tx.phoneNumber.findFirst({ where: { number, accountId } });
}

/** Deletes number `number` of `accountId` while it is on no campaign. @returns whether it was deleted. */
export async function deleteUnlinkedNumber(tx: Tx, accountId: string, number: string): Promise<boolean> {
  const { count } = await tx.phoneNumber.deleteMany({ where: { number, accountId, campaignId: null } });
  return count === 1;
}

/** Numbers linked to campaign `campaignId`, ascending by number. */
export function numbersOfCampaign(db: Db | Tx, campaignId: string): Promise<NumberRecord[]> {
  return db.phoneNumber.findMany({ where: { campaignId }, orderBy: { number: 'asc' } });
}

/** Numbers linked to `campaignId` in a keyset window by number (GET /compliance/campaigns/{id}/numbers). */
export function campaignNumberPage(db: Db | Tx, campaignId: string, window: KeysetWindow): Promise<NumberRecord[]> {
  const args = keysetArgs('number', window);
  return db.phoneNumber.findMany({ ...args, where: { campaignId, ...args.where } });
}

/** Numbers of `accountId` linked to any of `campaignIds`, ascending by number. */
export function numbersOfCampaigns(
  db: Db | Tx,
  accountId: string,
  campaignIds: readonly string[],
): Promise<NumberRecord[]> {
  return db.phoneNumber.findMany({
    where: { campaignId: { in: [...campaignIds] }, accountId },
    orderBy: { number: 'asc' },
  });
}

/** How many numbers `accountId` has provisioned. */
export function countNumberRows(db: Db | Tx, accountId: string): Promise<number> {
  return db.phoneNumber.count({ where: { accountId } });
}

/**
 * Links the unlinked `numbers` of `accountId` to campaign `campaignId` (PENDING_ASSIGNMENT).
 * @returns how many were linked (fewer when one was linked concurrently).
 */
export async function linkNumbers(
  tx: Tx,
  accountId: string,
  campaignId: string,
  numbers: string[],
  now: Date,
): Promise<number> {
  const { count } = await tx.phoneNumber.updateMany({
    where: { accountId, number: { in: numbers }, campaignId: null },
    data: {
      campaignId,
      assignedAt: now,
      assignmentStatus: 'PENDING_ASSIGNMENT',
      failureReasons: [],
      lastCampaignId: null,
    },
  });
  return count;
}

/** Writes `change` to number `number`. @returns the number after. */
export function updateNumber(tx: Tx, number: string, change: NumberChange): Promise<NumberRecord> {
  return tx.phoneNumber.update({ where: { number }, data: change as never });
}

/** Numbers of campaign `campaignId` waiting in PENDING_ASSIGNMENT or FAILED_ASSIGNMENT, ascending by number. */
export function waitingNumbersOfCampaign(tx: Tx, campaignId: string): Promise<NumberRecord[]> {
  return tx.phoneNumber.findMany({
    where: { campaignId, assignmentStatus: { in: ['PENDING_ASSIGNMENT', 'FAILED_ASSIGNMENT'] } },
    orderBy: { number: 'asc' },
  });
}

/** Fails the PENDING_ASSIGNMENT numbers of campaign `campaignId` with `reasons` (FAILED_ASSIGNMENT). */
export async function failPendingAssignments(
  tx: Tx,
  campaignId: string,
  reasons: { code: string; message: string }[],
): Promise<void> {
  await tx.phoneNumber.updateMany({
    where: { campaignId, assignmentStatus: 'PENDING_ASSIGNMENT' },
    data: { assignmentStatus: 'FAILED_ASSIGNMENT', failureReasons: reasons },
  });
}

/** Number `number` while it still carries the claim `token` of the lifecycle job, or null. */
export function claimedNumber(tx: Tx, number: string, token: string): Promise<NumberRecord | null> {
  return tx.phoneNumber.findFirst({ where: { number, lockedBy: token } });
}

/** The lifecycle job's filter over compliance_numbers (alias `j`): numbers with a due state move. */
export function dueNumbersWhere(): Prisma.Sql {
  return Prisma.sql`j.state_due_at IS NOT NULL`;
}
