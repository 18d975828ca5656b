import type { Emit } from '../events/event-log.js';
import type { DomainContext } from '../kernel/context.js';
import type { Tx } from '../kernel/db.js';
import {
  type BrandRecord,
  setBrandDecision,
  setBrandVetted,
  setVettingDecision,
  type VettingRecord,
} from './brand.store.js';
import { carrierName, deriveCampaignStatus } from './campaign.rules.js';
import { type CampaignRecord, carriersOf, findCarrier, setCampaignStatus, updateCarrier } from './campaign.store.js';
import type { CarrierStatus, IdentityStatus } from './compliance.enums.js';
import { onCampaignStatus } from './did-lifecycle.js';
import type { FeedbackItem } from './registry.port.js';
import { brandTier } from './throughput.rules.js';

/**
 * Applying the registry's decisions: the state changes and 10dlc events that follow a decision, whichever adapter
 * produced it. Each runs inside the transaction of ctx.events.transaction.
 */

/** Brand identity decision: PENDING → ACTIVE/FAILED, identityStatus and feedback; emits 10dlc.brand.status_changed. */
export async function applyBrandDecision(
  tx: Tx,
  emit: Emit,
  brand: BrandRecord,
  decision: { status: 'ACTIVE' | 'FAILED'; identityStatus: IdentityStatus; feedback: FeedbackItem[] },
  now: Date,
): Promise<void> {
  await setBrandDecision(tx, brand.id, decision, now);
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
 * its identityStatus VETTED_VERIFIED and its score the brand's `vettingScore` (so its throughput tier changes).
 * Emits 10dlc.vetting.completed with the brand's new `throughputTier`.
 */
export async function applyVettingDecision(
  tx: Tx,
  emit: Emit,
  vetting: VettingRecord & { brand: BrandRecord },
  decision: { status: 'APPROVED' | 'FAILED'; vettingScore: number | null },
  now: Date,
): Promise<void> {
  await setVettingDecision(tx, vetting.id, decision, now);
  let identityStatus = vetting.brand.identityStatus;
  let vettingScore = vetting.brand.vettingScore;
  if (decision.status === 'APPROVED' && vetting.brand.status === 'ACTIVE') {
    identityStatus = 'VETTED_VERIFIED';
    // The score of the latest approved vetting sets the brand's throughput tier (throughput.rules.ts).
    vettingScore = decision.vettingScore;
    await setBrandVetted(tx, vetting.brandId, identityStatus, vettingScore, now);
  }
  await emit(vetting.accountId, '10dlc.vetting.completed', {
    brandId: vetting.brandId,
    vettingId: vetting.id,
    evpId: vetting.evpId,
    vettingClass: vetting.vettingClass,
    status: decision.status,
    vettingScore: decision.vettingScore,
    identityStatus,
    previousIdentityStatus: vetting.brand.identityStatus,
    throughputTier: brandTier({ entityType: vetting.brand.entityType, vettingScore }),
  });
}

/**
 * Re-derives a campaign's status from its carrier rows and records a change (10dlc.campaign.status_changed); the
 * campaign's waiting numbers follow it (did-lifecycle.ts: APPROVED starts their warm-up, REJECTED/SUSPENDED fails
 * their assignment). `ctx` gives the lifecycle timings.
 * @returns the campaign's status now.
 */
export async function refreshCampaignStatus(
  tx: Tx,
  emit: Emit,
  campaign: CampaignRecord,
  now: Date,
  ctx: DomainContext,
): Promise<string> {
  const carriers = await carriersOf(tx, campaign.id);
  const status = deriveCampaignStatus(carriers);
  if (status !== campaign.status) {
    await setCampaignStatus(tx, campaign.id, status, now);
    await emit(campaign.accountId, '10dlc.campaign.status_changed', {
      campaignId: campaign.id,
      brandId: campaign.brandId,
      previousStatus: campaign.status,
      status,
    });
    await onCampaignStatus(ctx, tx, emit, campaign.id, status, now);
  }
  return status;
}

/** One carrier's decision on a campaign; emits 10dlc.carrier.status_changed and, if it moved, the campaign's status. */
export async function applyCarrierDecision(
  tx: Tx,
  emit: Emit,
  campaign: CampaignRecord,
  networkId: number,
  decision: { status: Exclude<CarrierStatus, 'PENDING'>; reason: string | null; code?: string | null },
  now: Date,
  ctx: DomainContext,
): Promise<void> {
  const row = await findCarrier(tx, campaign.id, networkId);
  if (!row) return;
  await updateCarrier(
    tx,
    campaign.id,
    networkId,
    {
      status: decision.status,
      approvedAt: decision.status === 'APPROVED' ? now : null,
      rejectionReason: decision.reason,
      rejectionCode: decision.status === 'APPROVED' ? null : (decision.code ?? null),
      estimatedDecisionAt: null,
    },
    now,
  );
  await emit(campaign.accountId, '10dlc.carrier.status_changed', {
    campaignId: campaign.id,
    networkId,
    carrier: carrierName(networkId),
    previousStatus: row.status,
    status: decision.status,
    reason: decision.reason,
    code: decision.code ?? null,
  });
  await refreshCampaignStatus(tx, emit, campaign, now, ctx);
}
