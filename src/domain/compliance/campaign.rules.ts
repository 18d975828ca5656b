import { CARRIERS, type CampaignStatus, type CarrierStatus } from './compliance.enums.js';

/** Name of a TCR network id. */
export function carrierName(networkId: number): string {
  return CARRIERS.find((c) => c.networkId === networkId)?.name ?? `network ${networkId}`;
}

/**
 * A campaign's status from its carrier rows: PENDING while any carrier is pending; otherwise APPROVED when at least
 * one carrier approved, SUSPENDED when none approved but one suspended, REJECTED when every carrier rejected.
 */
export function deriveCampaignStatus(carriers: { status: string }[]): CampaignStatus {
  const statuses = carriers.map((c) => c.status as CarrierStatus);
  if (statuses.length === 0 || statuses.includes('PENDING')) return 'PENDING';
  if (statuses.includes('APPROVED')) return 'APPROVED';
  if (statuses.includes('SUSPENDED')) return 'SUSPENDED';
  return 'REJECTED';
}

/** Why a campaign cannot send yet. `networkId` names the carrier for carrier reasons. */
export interface BlockingReason {
  /** BRAND_NOT_ACTIVE, CARRIER_PENDING, CARRIER_REJECTED, CARRIER_SUSPENDED or NO_NUMBERS_ASSIGNED. */
  code: string;
  message: string;
  networkId: number | null;
}

/**
 * Readiness of a campaign (issue 2 "sendable"): it can send on every carrier when its brand is ACTIVE, every carrier
 * approved it, and at least one number is assigned. `blockingReasons` lists everything that is missing, so
 * `sendable` is exactly "no blocking reasons".
 */
export function campaignReadiness(input: {
  brandStatus: string;
  carriers: { networkId: number; status: string; rejectionReason: string | null }[];
  numberCount: number;
}): { sendable: boolean; blockingReasons: BlockingReason[] } {
  const reasons: BlockingReason[] = [];
  if (input.brandStatus !== 'ACTIVE') {
    reasons.push({
      code: 'BRAND_NOT_ACTIVE',
      message: `The brand is ${input.brandStatus}; it must be ACTIVE.`,
      networkId: null,
    });
  }
  for (const c of [...input.carriers].sort((a, b) => a.networkId - b.networkId)) {
    const name = carrierName(c.networkId);
    if (c.status === 'PENDING') {
      reasons.push({
        code: 'CARRIER_PENDING',
        message: `${name} has not approved the campaign yet.`,
        networkId: c.networkId,
      });
    } else if (c.status === 'REJECTED') {
      reasons.push({
        code: 'CARRIER_REJECTED',
        message: `${name} rejected the campaign${c.rejectionReason ? `: ${c.rejectionReason}` : '.'}`,
        networkId: c.networkId,
      });
    } else if (c.status === 'SUSPENDED') {
      reasons.push({
        code: 'CARRIER_SUSPENDED',
        message: `${name} suspended the campaign${c.rejectionReason ? `: ${c.rejectionReason}` : '.'}`,
        networkId: c.networkId,
      });
    }
  }
  if (input.numberCount === 0) {
    reasons.push({ code: 'NO_NUMBERS_ASSIGNED', message: 'No number is assigned to the campaign.', networkId: null });
  }
  return { sendable: reasons.length === 0, blockingReasons: reasons };
}
