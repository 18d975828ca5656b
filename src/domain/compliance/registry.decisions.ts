import type { Brand, Campaign, Vetting } from '../../generated/prisma/client.js';
import type { Tx } from '../../infra/db.js';
import type { Emit } from '../events/event-log.js';
import { carrierName, deriveCampaignStatus } from './campaign.rules.js';
import type { CarrierStatus, IdentityStatus } from './compliance.enums.js';
import type { FeedbackItem } from './registry.port.js';

/**
 * Applying the registry's decisions: the state changes and 10dlc events that follow a decision, whichever adapter
 * produced it. Each runs inside the transaction of ctx.events.transaction.
 */

/** Brand identity decision: PENDING → ACTIVE/FAILED, identityStatus and feedback; emits 10dlc.brand.status_changed. */
export async function applyBrandDecision(
  tx: Tx,
  emit: Emit,
  brand: Brand,
  decision: { status: 'ACTIVE' | 'FAILED'; identityStatus: IdentityStatus; feedback: FeedbackItem[] },
  now: Date,
): Promise<void> {
  await tx.brand.update({
    where: { id: brand.id },
    data: {
      status: decision.status,
      identityStatus: decision.identityStatus,
      feedback: decision.feedback as unknown as object,
      updatedAt: now,
    },
  });
  await emit(brand.accountId, '10dlc.brand.status_changed', {
    brandId: brand.id,
    previousStatus: brand.status,
    status: decision.status,
    identityStatus: decision.identityStatus,
    feedback: decision.feedback.map((f) => f.id),
  });
}

/**
 * Vetting result: the record gets its status, score and completedAt; an APPROVED vetting of an ACTIVE brand makes
 * its identityStatus VETTED_VERIFIED. Emits 10dlc.vetting.completed.
 */
export async function applyVettingDecision(
  tx: Tx,
  emit: Emit,
  vetting: Vetting & { brand: Brand },
  decision: { status: 'APPROVED' | 'FAILED'; vettingScore: number | null },
  now: Date,
): Promise<void> {
  await tx.vetting.update({
    where: { id: vetting.id },
    data: { status: decision.status, vettingScore: decision.vettingScore, completedAt: now },
  });
  let identityStatus = vetting.brand.identityStatus;
  if (decision.status === 'APPROVED' && vetting.brand.status === 'ACTIVE') {
    identityStatus = 'VETTED_VERIFIED';
    await tx.brand.update({ where: { id: vetting.brandId }, data: { identityStatus, updatedAt: now } });
  }
  await emit(vetting.accountId, '10dlc.vetting.completed', {
    brandId: vetting.brandId,
    vettingId: vetting.id,
    evpId: vetting.evpId,
    vettingClass: vetting.vettingClass,
    status: decision.status,
    vettingScore: decision.vettingScore,
    identityStatus,
  });
}

/**
 * Re-derives a campaign's status from its carrier rows and records a change (10dlc.campaign.status_changed).
 * @returns the campaign's status now.
 */
export async function refreshCampaignStatus(tx: Tx, emit: Emit, campaign: Campaign, now: Date): Promise<string> {
  const carriers = await tx.campaignCarrier.findMany({ where: { campaignId: campaign.id } });
  const status = deriveCampaignStatus(carriers);
  if (status !== campaign.status) {
    await tx.campaign.update({ where: { id: campaign.id }, data: { status, updatedAt: now } });
    await emit(campaign.accountId, '10dlc.campaign.status_changed', {
      campaignId: campaign.id,
      brandId: campaign.brandId,
      previousStatus: campaign.status,
      status,
    });
  }
  return status;
}

/** One carrier's decision on a campaign; emits 10dlc.carrier.status_changed and, if it moved, the campaign's status. */
export async function applyCarrierDecision(
  tx: Tx,
  emit: Emit,
  campaign: Campaign,
  networkId: number,
  decision: { status: Exclude<CarrierStatus, 'PENDING'>; reason: string | null },
  now: Date,
): Promise<void> {
  const row = await tx.campaignCarrier.findUnique({
    where: { campaignId_networkId: { campaignId: campaign.id, networkId } },
  });
  if (!row) return;
  await tx.campaignCarrier.update({
    where: { campaignId_networkId: { campaignId: campaign.id, networkId } },
    data: {
      status: decision.status,
      approvedAt: decision.status === 'APPROVED' ? now : null,
      rejectionReason: decision.reason,
      estimatedDecisionAt: null,
      updatedAt: now,
    },
  });
  await emit(campaign.accountId, '10dlc.carrier.status_changed', {
    campaignId: campaign.id,
    networkId,
    carrier: carrierName(networkId),
    previousStatus: row.status,
    status: decision.status,
    reason: decision.reason,
  });
  await refreshCampaignStatus(tx, emit, campaign, now);
}
