import { z } from 'zod';
import type { CarrierStatus, IdentityStatus } from '../../../domain/compliance/compliance.enums.js';
import { CARRIERS } from '../../../domain/compliance/compliance.enums.js';
import {
  applyBrandDecision,
  applyCarrierDecision,
  applyVettingDecision,
} from '../../../domain/compliance/registry.decisions.js';
import type { DomainContext } from '../../../domain/kernel/context.js';

/**
 * One TCR webhook event (research §4.14: `{eventType, cspId, cspName, brandId, brandName, brandReferenceId,
 * campaignId?, campaignReferenceId?, brandIdentityStatus?, description, mock}`). `mnoId` (MNO network id of a
 * MNO_CAMPAIGN_OPERATION_* event) and `vettingId`/`vettingScore` (EVP_REPORT_*) are read when present; their names
 * are assumptions, and without `mnoId` the campaign's operation status is fetched from TCR instead.
 */
export const tcrEventSchema = z
  .object({
    eventType: z.string().min(1).max(100),
    brandId: z.string().max(50).optional(),
    campaignId: z.string().max(50).optional(),
    brandIdentityStatus: z.string().max(50).optional(),
    mnoId: z.union([z.number().int(), z.string().regex(/^\d{1,9}$/)]).optional(),
    vettingId: z.string().max(100).optional(),
    vettingScore: z.union([z.number(), z.string().regex(/^\d{1,3}$/)]).optional(),
    brandReferenceId: z.string().max(100).optional(),
    campaignReferenceId: z.string().max(100).optional(),
    description: z.string().max(10_000).optional(),
    mock: z.boolean().optional(),
  })
  .passthrough();

/** A parsed TCR event. */
export type TcrEvent = z.infer<typeof tcrEventSchema>;

/** What became of one event: `applied` (our state changed), `unchanged` (already so), `ignored` (no mapping), `unknown` (not ours). */
export interface TcrEventOutcome {
  eventType: string;
  outcome: 'applied' | 'unchanged' | 'ignored' | 'unknown' | 'queued';
  detail?: string;
}

/** TCR MNO operation status → ours (TCR REVIEW = our PENDING, so it changes nothing). */
const MNO_STATUS: Record<string, Exclude<CarrierStatus, 'PENDING'> | undefined> = {
  APPROVED: 'APPROVED',
  REJECTED: 'REJECTED',
  SUSPENDED: 'SUSPENDED',
};

/** MNO_CAMPAIGN_OPERATION_* event → carrier status. */
const MNO_EVENT: Record<string, Exclude<CarrierStatus, 'PENDING'> | 'REVIEW'> = {
  MNO_CAMPAIGN_OPERATION_APPROVED: 'APPROVED',
  MNO_CAMPAIGN_OPERATION_UNSUSPENDED: 'APPROVED',
  MNO_CAMPAIGN_OPERATION_REJECTED: 'REJECTED',
  MNO_CAMPAIGN_OPERATION_SUSPENDED: 'SUSPENDED',
  MNO_CAMPAIGN_OPERATION_REVIEW: 'REVIEW',
};

/** TCR brand identity status → our brand decision (UNVERIFIED fails the registration; research §4.2). */
function brandDecisionOf(
  identity: string,
): { status: 'ACTIVE' | 'FAILED'; identityStatus: IdentityStatus } | undefined {
  switch (identity) {
    case 'VERIFIED':
    case 'VETTED_VERIFIED':
    case 'SELF_DECLARED':
      return { status: 'ACTIVE', identityStatus: identity };
    case 'UNVERIFIED':
      return { status: 'FAILED', identityStatus: 'UNVERIFIED' };
    default:
      return undefined;
  }
}

/**
 * Our id for TCR's id. When the mapping is not written yet (the event overtook the job that records TCR's answer),
 * the event's `brandReferenceId` / `campaignReferenceId` (our id, sent as TCR's referenceId) is used if such a row
 * exists, so an early notification is not lost.
 */
async function localId(
  ctx: DomainContext,
  entity: 'brand' | 'campaign' | 'vetting',
  tcrId: string | undefined,
  referenceId?: string,
) {
  if (tcrId) {
    const ref = await ctx.db.tcrRef.findUnique({ where: { entity_tcrId: { entity, tcrId } } });
    if (ref) return ref.localId;
  }
  if (!referenceId) return undefined;
  if (entity === 'brand') return (await ctx.db.brand.findUnique({ where: { id: referenceId } }))?.id;
  if (entity === 'campaign') return (await ctx.db.campaign.findUnique({ where: { id: referenceId } }))?.id;
  return undefined;
}

/**
 * Applies a map of MNO operation statuses (`GET /campaign/{id}/operationStatus`, or one MNO from a webhook event) to
 * our campaign's carrier rows through applyCarrierDecision; REVIEW and unknown MNOs change nothing, a carrier already
 * in that status is left as is (webhooks may repeat). @returns how many carriers changed.
 */
export async function applyOperationStatus(
  ctx: DomainContext,
  campaignId: string,
  statuses: Record<string, string>,
  reason: string | null,
): Promise<number> {
  return ctx.events.transaction(async (tx, emit) => {
    let changed = 0;
    for (const [mno, tcrStatus] of Object.entries(statuses)) {
      const status = MNO_STATUS[tcrStatus];
      const networkId = Number(mno);
      if (!status || !CARRIERS.some((c) => c.networkId === networkId)) continue;
      const row = await tx.campaignCarrier.findUnique({ where: { campaignId_networkId: { campaignId, networkId } } });
      if (!row || row.status === status) continue;
      const campaign = await tx.campaign.findUnique({ where: { id: campaignId } });
      if (!campaign) return changed;
      await applyCarrierDecision(
        tx,
        emit,
        campaign,
        networkId,
        { status, reason: status === 'APPROVED' ? null : reason, code: status === 'APPROVED' ? null : `TCR_${status}` },
        ctx.clock.now(),
        ctx,
      );
      changed++;
    }
    return changed;
  });
}

/**
 * Maps one TCR webhook event onto our state (docs/compliance.md "TCR adapter", mapping table):
 * BRAND_* with `brandIdentityStatus` → applyBrandDecision; EVP_REPORT_SCORE/IMPORT → vetting APPROVED,
 * EVP_REPORT_FAIL/UNSCORE → FAILED (applyVettingDecision); MNO_CAMPAIGN_OPERATION_* → applyCarrierDecision for
 * that MNO. `enqueueSync` queues an operation-status fetch when an MNO event names no MNO.
 */
export async function applyTcrEvent(
  ctx: DomainContext,
  event: TcrEvent,
  enqueueSync: (campaignId: string) => Promise<void>,
): Promise<TcrEventOutcome> {
  const type = event.eventType;
  const out = (outcome: TcrEventOutcome['outcome'], detail?: string): TcrEventOutcome => ({
    eventType: type,
    outcome,
    ...(detail ? { detail } : {}),
  });

  if (type.startsWith('MNO_CAMPAIGN_OPERATION_')) {
    const mapped = MNO_EVENT[type];
    if (!mapped) return out('ignored', 'no mapping for this event type');
    const campaignId = await localId(ctx, 'campaign', event.campaignId, event.campaignReferenceId);
    if (!campaignId) return out('unknown', `campaign ${event.campaignId ?? '(none)'} is not registered here`);
    if (mapped === 'REVIEW') return out('unchanged', 'REVIEW is our PENDING');
    if (event.mnoId === undefined) {
      await enqueueSync(campaignId);
      return out('queued', 'no mnoId: operation status will be fetched from TCR');
    }
    const n = await applyOperationStatus(ctx, campaignId, { [String(event.mnoId)]: mapped }, event.description ?? null);
    return out(n > 0 ? 'applied' : 'unchanged');
  }

  if (type.startsWith('EVP_REPORT_')) {
    const approved = type === 'EVP_REPORT_SCORE' || type === 'EVP_REPORT_IMPORT';
    const failed = type === 'EVP_REPORT_FAIL' || type === 'EVP_REPORT_UNSCORE';
    if (!approved && !failed) return out('ignored', 'no mapping for this event type');
    const brandId = await localId(ctx, 'brand', event.brandId, event.brandReferenceId);
    if (!brandId) return out('unknown', `brand ${event.brandId ?? '(none)'} is not registered here`);
    const vettingLocal = await localId(ctx, 'vetting', event.vettingId);
    const score = event.vettingScore === undefined ? null : Math.min(100, Math.max(0, Number(event.vettingScore)));
    return ctx.events.transaction(async (tx, emit) => {
      const vetting = await tx.vetting.findFirst({
        where: vettingLocal ? { id: vettingLocal } : { brandId, status: 'PENDING' },
        orderBy: { createdAt: 'desc' },
        include: { brand: true },
      });
      if (!vetting) return out('unknown', 'no pending vetting of this brand');
      if (vetting.status !== 'PENDING') return out('unchanged');
      await applyVettingDecision(
        tx,
        emit,
        vetting,
        { status: approved ? 'APPROVED' : 'FAILED', vettingScore: approved ? score : null },
        ctx.clock.now(),
      );
      return out('applied');
    });
  }

  if (type.startsWith('BRAND_')) {
    if (!event.brandIdentityStatus) return out('ignored', 'no brandIdentityStatus');
    const decision = brandDecisionOf(event.brandIdentityStatus);
    if (!decision) return out('ignored', `unknown brandIdentityStatus ${event.brandIdentityStatus}`);
    const brandId = await localId(ctx, 'brand', event.brandId, event.brandReferenceId);
    if (!brandId) return out('unknown', `brand ${event.brandId ?? '(none)'} is not registered here`);
    return ctx.events.transaction(async (tx, emit) => {
      const brand = await tx.brand.findUnique({ where: { id: brandId } });
      if (!brand) return out('unknown', 'brand deleted here');
      if (brand.status === decision.status && brand.identityStatus === decision.identityStatus) return out('unchanged');
      const feedback =
        decision.status === 'FAILED'
          ? [
              {
                id: 'OTHERS' as const,
                displayName: 'Identity not verified by TCR',
                description: (event.description ?? 'TCR could not verify the brand identity.').slice(0, 1000),
                fields: [],
              },
            ]
          : [];
      await applyBrandDecision(tx, emit, brand, { ...decision, feedback }, ctx.clock.now());
      return out('applied');
    });
  }

  return out('ignored', 'no mapping for this event type');
}
