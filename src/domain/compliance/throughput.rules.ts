import { CARRIERS } from './compliance.enums.js';

/**
 * Throughput (issue 14, spec 4.1 "external vetting unlocks higher throughput tiers"): the brand's vetting score gives
 * a tier, the tier gives T-Mobile's daily cap per brand and, with the campaign's use case, AT&T's message class and
 * messages per minute (TPM) per campaign. These are carrier policies, not API enums; the figures are the current
 * published tables collected in shared/research/10dlc-anchors.md §4.15, whose sources are:
 * community.sinch.com "How much throughput will I get…" (ta-p/7037), clickatell.com FAQ 11,
 * support.goconvey.com "10DLC Carrier Throughputs and Daily Limits", docs.bird.com "throughput-and-daily-caps",
 * telgorithm.com "sole-prop-2-0" and developers.telnyx.com/docs/messaging/10dlc/sole-proprietor.
 * Verizon and US Cellular publish no per-brand or per-campaign tier, so their limits are null.
 */

/** Throughput tier of a brand. LOW = unvetted (or score 0); SOLE_PROPRIETOR = the sole-proprietor class. */
export type ThroughputTier = 'TOP' | 'HIGH_MID' | 'LOW_MID' | 'LOW' | 'SOLE_PROPRIETOR';

/** T-Mobile daily cap per brand (messages/day, shared by all the brand's campaigns, keyed to its tax id), per tier. */
export const TMOBILE_DAILY_CAP: Record<ThroughputTier, number> = {
  TOP: 200_000,
  HIGH_MID: 40_000,
  LOW_MID: 10_000,
  LOW: 2_000,
  SOLE_PROPRIETOR: 1_000,
};

/** AT&T messages per minute per campaign by message class (A/B top, C/D high-mid, E/F low-mid, T low volume). */
export const ATT_TPM: Record<string, number> = {
  A: 4_500,
  B: 4_500,
  C: 2_400,
  D: 2_400,
  E: 240,
  F: 240,
  T: 75,
  SP: 15,
};

const TMOBILE = 10035;
const ATT = 10017;

/**
 * The tier of a brand: SOLE_PROPRIETOR brands are their own class; otherwise the vetting score of the last approved
 * external vetting: 75–100 TOP, 50–74 HIGH_MID, 1–49 LOW_MID; no vetting (or 0) LOW.
 */
export function brandTier(brand: { entityType: string; vettingScore: number | null }): ThroughputTier {
  if (brand.entityType === 'SOLE_PROPRIETOR') return 'SOLE_PROPRIETOR';
  const score = brand.vettingScore ?? 0;
  if (score >= 75) return 'TOP';
  if (score >= 50) return 'HIGH_MID';
  if (score >= 1) return 'LOW_MID';
  return 'LOW';
}

/**
 * AT&T message class of a campaign: SP for sole proprietors, T for LOW_VOLUME and unvetted brands; otherwise the
 * tier's pair, the second letter for MIXED and MARKETING ("mixed / marketing" classes B, D, F), the first for
 * declared use cases (A, C, E). Special use cases get carrier-assigned classes (G, N, P, …) in production; here they
 * are treated as declared.
 */
export function attMessageClass(tier: ThroughputTier, usecase: string): string {
  if (tier === 'SOLE_PROPRIETOR' || usecase === 'SOLE_PROPRIETOR') return 'SP';
  if (usecase === 'LOW_VOLUME' || tier === 'LOW') return 'T';
  const mixed = usecase === 'MIXED' || usecase === 'MARKETING';
  const pair = { TOP: ['A', 'B'], HIGH_MID: ['C', 'D'], LOW_MID: ['E', 'F'] }[tier];
  return pair[mixed ? 1 : 0]!;
}

/** One carrier's effective limit. Null where the carrier publishes none at this level. */
export interface CarrierLimit {
  networkId: number;
  carrier: string;
  /** Messages per day (T-Mobile: per brand, shared by its campaigns). */
  dailyCap: number | null;
  /** Messages per minute (AT&T: per campaign). */
  messagesPerMinute: number | null;
  /** AT&T message class. */
  messageClass: string | null;
  note: string | null;
}

/** Throughput of a brand: its tier and per-carrier brand-level limits. */
export interface BrandThroughput {
  tier: ThroughputTier;
  vettingScore: number | null;
  carriers: CarrierLimit[];
}

/** Throughput of a campaign: the brand's tier, the AT&T class and per-carrier limits. */
export interface CampaignThroughput {
  tier: ThroughputTier;
  messageClass: string;
  carriers: CarrierLimit[];
}

/** Brand-level limits: T-Mobile's daily cap; AT&T's TPM is per campaign (null here); others publish none. */
export function brandThroughput(brand: { entityType: string; vettingScore: number | null }): BrandThroughput {
  const tier = brandTier(brand);
  return {
    tier,
    vettingScore: brand.vettingScore,
    carriers: CARRIERS.map((c) => ({
      networkId: c.networkId,
      carrier: c.name,
      dailyCap: c.networkId === TMOBILE ? TMOBILE_DAILY_CAP[tier] : null,
      messagesPerMinute: null,
      messageClass: null,
      note:
        c.networkId === TMOBILE
          ? 'Daily cap per brand (tax id), shared by all its campaigns.'
          : c.networkId === ATT
            ? 'AT&T limits each campaign by message class (see the campaign).'
            : 'No published per-brand tier.',
    })),
  };
}

/** Campaign-level limits: AT&T TPM by message class; T-Mobile's brand cap (shared); others publish none. */
export function campaignThroughput(
  brand: { entityType: string; vettingScore: number | null },
  usecase: string,
): CampaignThroughput {
  const tier = brandTier(brand);
  const messageClass = attMessageClass(tier, usecase);
  return {
    tier,
    messageClass,
    carriers: CARRIERS.map((c) => ({
      networkId: c.networkId,
      carrier: c.name,
      dailyCap: c.networkId === TMOBILE ? TMOBILE_DAILY_CAP[tier] : null,
      messagesPerMinute: c.networkId === ATT ? (ATT_TPM[messageClass] ?? null) : null,
      messageClass: c.networkId === ATT ? messageClass : null,
      note:
        c.networkId === TMOBILE
          ? "The brand's daily cap, shared with its other campaigns."
          : c.networkId === ATT
            ? `Messages per minute for AT&T message class ${messageClass}.`
            : 'No published per-campaign tier.',
    })),
  };
}
