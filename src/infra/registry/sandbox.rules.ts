import { carrierRejection } from '../../domain/compliance/campaign.lint.js';
import { reviewFindings } from '../../domain/compliance/campaign-lint.service.js';
import {
  CARRIERS,
  type CarrierStatus,
  type FeedbackCategory,
  type IdentityStatus,
} from '../../domain/compliance/compliance.enums.js';
import type { FeedbackItem } from '../../domain/compliance/registry.port.js';
import type { Brand, Campaign } from '../../generated/prisma/client.js';

/**
 * The sandbox registry's deterministic rules (README "Sandbox registry"): magic EIN prefixes and description
 * markers let a user drive every branch. Base delays in ms, divided by REGISTRY_TIME_SCALE.
 */
export const SANDBOX_DELAYS = {
  /** Registration, identity update or revet → identity decision. */
  brandDecisionMs: 5_000,
  /** Vetting apply → vetting result. */
  vettingMs: 30_000,
  /** Appeal of a rejection → the carrier's new decision. */
  appealMs: 15_000,
  /** Expedite: pending carriers decide 1 s, 2 s, 3 s … from now (in carrier order). */
  expediteStepMs: 1_000,
  /** A nudge halves each pending carrier's remaining time, but never below this. */
  nudgeFloorMs: 500,
} as const;

const FEEDBACK: Record<FeedbackCategory, Omit<FeedbackItem, 'id'>> = {
  TAX_ID: {
    displayName: 'Tax ID',
    description:
      'The EIN does not match the legal business name in the tax authority records. Correct ein or name (PUT the brand), then the registry verifies again.',
    fields: ['ein', 'name'],
  },
  STOCK_SYMBOL: {
    displayName: 'Stock symbol',
    description:
      'The stock symbol and exchange could not be matched to a listed company with this name. Correct stockSymbol and stockExchange, or register as PRIVATE_PROFIT.',
    fields: ['stockSymbol', 'stockExchange', 'entityType'],
  },
  GOVERNMENT_ENTITY: {
    displayName: 'Government entity',
    description: 'The brand could not be verified as a government entity. Check entityType and ein.',
    fields: ['entityType', 'ein'],
  },
  NONPROFIT: {
    displayName: 'Non-profit',
    description: 'No tax-exempt status was found for this EIN. Check entityType and ein.',
    fields: ['entityType', 'ein'],
  },
  OTHERS: {
    displayName: 'Others',
    description: 'The business could not be verified from public records. Check name, website and email.',
    fields: ['name', 'website', 'email'],
  },
};

/** Magic EIN prefixes (the two digits before the dash) that make the identity check fail with one category. */
export const FAILING_EIN_PREFIXES: Record<string, FeedbackCategory> = {
  '00': 'TAX_ID',
  '01': 'STOCK_SYMBOL',
  '02': 'GOVERNMENT_ENTITY',
  '03': 'NONPROFIT',
  '04': 'OTHERS',
};

/** Magic EIN prefix whose external vetting fails. */
export const FAILING_VETTING_EIN_PREFIX = '09';

/** The identity decision for a brand. */
export function brandDecision(brand: Pick<Brand, 'ein'>): {
  status: 'ACTIVE' | 'FAILED';
  identityStatus: IdentityStatus;
  feedback: FeedbackItem[];
} {
  const category = FAILING_EIN_PREFIXES[brand.ein.slice(0, 2)];
  if (category) {
    return { status: 'FAILED', identityStatus: 'UNVERIFIED', feedback: [{ id: category, ...FEEDBACK[category] }] };
  }
  return { status: 'ACTIVE', identityStatus: 'VERIFIED', feedback: [] };
}

/** The external vetting result: FAILED for EIN prefix 09, else APPROVED with a score of 50 + (last two EIN digits mod 51). */
export function vettingDecision(brand: Pick<Brand, 'ein'>): {
  status: 'APPROVED' | 'FAILED';
  vettingScore: number | null;
} {
  if (brand.ein.startsWith(FAILING_VETTING_EIN_PREFIX)) return { status: 'FAILED', vettingScore: null };
  return { status: 'APPROVED', vettingScore: 50 + (Number(brand.ein.slice(-2)) % 51) };
}

const MARKER = /SANDBOX:(REJECT|SUSPEND):(\d{5}|ALL)/gi;

/**
 * One carrier's decision on a campaign: the pre-submission lint's rules decide first (campaign.lint.ts via
 * reviewFindings): the first error finding that names this carrier rejects, with the reason TCR gives and the lint's
 * code. Otherwise the description markers `SANDBOX:REJECT:<networkId|ALL>` and `SANDBOX:SUSPEND:<networkId|ALL>`
 * decide; otherwise APPROVED. So a campaign that passes the lint is approved by every carrier (markers aside).
 */
export function carrierDecision(
  campaign: Campaign,
  brand: Brand,
  networkId: number,
): { status: Exclude<CarrierStatus, 'PENDING'>; reason: string | null; code: string | null } {
  const rejection = carrierRejection(reviewFindings(campaign, brand), networkId);
  if (rejection) return { status: 'REJECTED', reason: rejection.reason, code: rejection.code };
  for (const m of campaign.description.matchAll(MARKER)) {
    const [, action, target] = m as unknown as [string, string, string];
    if (target.toUpperCase() !== 'ALL' && Number(target) !== networkId) continue;
    return action.toUpperCase() === 'REJECT'
      ? { status: 'REJECTED', reason: 'Sandbox: the description asks this carrier to reject.', code: 'SANDBOX_REJECT' }
      : {
          status: 'SUSPENDED',
          reason: 'Sandbox: the description asks this carrier to suspend.',
          code: 'SANDBOX_SUSPEND',
        };
  }
  return { status: 'APPROVED', reason: null, code: null };
}

/** Base review delay of a carrier, in ms. */
export function carrierDelayMs(networkId: number): number {
  return CARRIERS.find((c) => c.networkId === networkId)?.reviewDelayMs ?? 60_000;
}
