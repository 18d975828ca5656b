// The campaign store (issue 23 "one store per area"): every Prisma call of campaigns and their carrier reviews.
// Services call these with plain parameters and get rows back; the row types are exported here under domain names
// so no service names a generated Prisma type.

import type { Campaign, CampaignCarrier, Prisma } from '../../generated/prisma/client.js';
import type { Db, Tx } from '../kernel/db.js';
import { type KeysetWindow, keysetArgs } from '../paging.js';

/** A stored campaign (table compliance_campaigns). */
export type CampaignRecord = Campaign;
/** A stored carrier review of a campaign (table compliance_campaign_carriers). */
export type CarrierRecord = CampaignCarrier;

/** A campaign as loaded for output: with carriers, the brand's status and the number count. */
export type CampaignWithState = CampaignRecord & {
  carriers: CarrierRecord[];
  brand: { status: string; entityType: string; vettingScore: number | null };
  _count: { numbers: number };
};

/** Prisma `include` that loads a {@link CampaignWithState}. */
const campaignStateInclude = {
  carriers: { orderBy: { networkId: 'asc' } },
  brand: { select: { status: true, entityType: true, vettingScore: true } },
  _count: { select: { numbers: true } },
} as const;

/** The campaign fields a client sets (creation and update). */
export type CampaignFields = Omit<
  CampaignRecord,
  'id' | 'accountId' | 'brandId' | 'usecase' | 'status' | 'expedited' | 'createdAt' | 'updatedAt'
>;

/** The campaign `id` of the account `accountId`, or null when missing or another account's. */
export function findCampaign(db: Db | Tx, accountId: string, id: string): Promise<CampaignRecord | null> {
  return db.campaign.findFirst({ where: { id, accountId } });
}

/** Whether the account has a campaign `id` (history's existence check). */
export async function campaignExists(db: Db | Tx, accountId: string, id: string): Promise<boolean> {
  return !!(await db.campaign.findFirst({ where: { id, accountId }, select: { id: true } }));
}

/** Campaign `id` with its state (carriers, brand status, number count). @throws when missing (Prisma). */
export function campaignWithState(db: Db | Tx, id: string): Promise<CampaignWithState> {
  return db.campaign.findUniqueOrThrow({ where: { id }, include: campaignStateInclude });
}

/** Campaigns of `accountId` with their state, by id, in any order (other accounts' ids are left out). */
export function campaignsWithStateIn(
  db: Db | Tx,
  accountId: string,
  ids: readonly string[],
): Promise<CampaignWithState[]> {
  return db.campaign.findMany({ where: { id: { in: [...ids] }, accountId }, include: campaignStateInclude });
}

/** Campaigns of `accountId` (of one brand when given) with their state in a keyset window by id. */
export function campaignPage(
  db: Db | Tx,
  accountId: string,
  window: KeysetWindow,
  brandId?: string,
): Promise<CampaignWithState[]> {
  const args = keysetArgs('id', window);
  return db.campaign.findMany({
    ...args,
    where: { accountId, ...(brandId ? { brandId } : {}), ...args.where },
    include: campaignStateInclude,
  });
}

/** How many campaigns `accountId` (or one of its brands) has. */
export function countCampaignRows(db: Db | Tx, accountId: string, brandId?: string): Promise<number> {
  return db.campaign.count({ where: { accountId, ...(brandId ? { brandId } : {}) } });
}

/** Inserts a campaign row (every column but `expedited`, which defaults to false). @returns it. */
export function insertCampaign(tx: Tx, c: Prisma.CampaignUncheckedCreateInput): Promise<CampaignRecord> {
  return tx.campaign.create({ data: c });
}

/** Writes `fields` (those given) and `updatedAt` to campaign `id`. @returns the campaign after. */
export function updateCampaignFields(
  tx: Tx,
  id: string,
  fields: Partial<CampaignFields> & { expedited?: boolean },
  now: Date,
): Promise<CampaignRecord> {
  return tx.campaign.update({ where: { id }, data: { ...fields, updatedAt: now } });
}

/** Sets campaign `id`'s derived status. */
export async function setCampaignStatus(tx: Tx, id: string, status: string, now: Date): Promise<void> {
  await tx.campaign.update({ where: { id }, data: { status, updatedAt: now } });
}

/** Deletes campaign `id` (its carrier rows go with it, ON DELETE CASCADE). */
export async function deleteCampaignRow(tx: Tx, id: string): Promise<void> {
  await tx.campaign.delete({ where: { id } });
}

/** Inserts the carrier review rows of a new campaign. */
export async function insertCarriers(
  tx: Tx,
  rows: Pick<CarrierRecord, 'campaignId' | 'networkId' | 'carrier' | 'status' | 'estimatedDecisionAt' | 'updatedAt'>[],
): Promise<void> {
  await tx.campaignCarrier.createMany({ data: rows });
}

/**
 * Carrier rows of campaign `campaignId`: only those of `status` when given; ascending by networkId when `ordered`
 * (else in the database's order, as the status derivation and re-review read them).
 */
export function carriersOf(
  db: Db | Tx,
  campaignId: string,
  opts: { status?: string; ordered?: boolean } = {},
): Promise<CarrierRecord[]> {
  return db.campaignCarrier.findMany({
    where: { campaignId, ...(opts.status !== undefined ? { status: opts.status } : {}) },
    ...(opts.ordered ? { orderBy: { networkId: 'asc' as const } } : {}),
  });
}

/** The carrier row of (`campaignId`, `networkId`), or null. */
export function findCarrier(tx: Tx, campaignId: string, networkId: number): Promise<CarrierRecord | null> {
  return tx.campaignCarrier.findUnique({ where: { campaignId_networkId: { campaignId, networkId } } });
}

/** Writes `fields` and `updatedAt` to the carrier row of (`campaignId`, `networkId`). */
export async function updateCarrier(
  tx: Tx,
  campaignId: string,
  networkId: number,
  fields: Partial<
    Pick<CarrierRecord, 'status' | 'approvedAt' | 'rejectionReason' | 'rejectionCode' | 'estimatedDecisionAt'>
  >,
  now: Date,
): Promise<void> {
  await tx.campaignCarrier.update({
    where: { campaignId_networkId: { campaignId, networkId } },
    data: { ...fields, updatedAt: now },
  });
}
