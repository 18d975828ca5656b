import {
  ALT_BUSINESS_ID_TYPES,
  ASSIGNMENT_STATUSES,
  BRAND_RELATIONSHIPS,
  BRAND_STATUSES,
  CAMPAIGN_STATUSES,
  CARRIER_STATUSES,
  DID_STATES,
  ENTITY_TYPES,
  EVP_IDS,
  FEEDBACK_CATEGORIES,
  IDENTITY_STATUSES,
  NUDGE_INTENTS,
  STOCK_EXCHANGES,
  VERTICALS,
  VETTING_CLASSES,
  VETTING_STATUSES,
} from '../../domain/compliance/compliance.enums.js';
import { type ThroughputTier, TMOBILE_DAILY_CAP } from '../../domain/compliance/throughput.rules.js';
import { builder } from '../builder.js';

/** GraphQL gives null for omitted optional input fields; the shared zod schemas expect them absent. */
export function withoutNulls<T extends object>(input: T | null | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input ?? {}).filter(([, v]) => v !== null && v !== undefined));
}

// Enums ----------------------------------------------------------------------------------------------------------

export const BrandStatusEnum = builder.enumType('BrandStatus', {
  description: 'Brand registration status: PENDING until the registry decides, then ACTIVE or FAILED.',
  values: BRAND_STATUSES,
});
export const IdentityStatusEnum = builder.enumType('IdentityStatus', {
  description: 'TCR identity status of a brand (SELF_DECLARED until the identity check finishes).',
  values: IDENTITY_STATUSES,
});
export const VerticalEnum = builder.enumType('Vertical', {
  description: 'Industry vertical (spec 2.10).',
  values: VERTICALS,
});
export const EntityTypeEnum = builder.enumType('EntityType', {
  description: 'Legal entity type (TCR).',
  values: ENTITY_TYPES,
});
export const StockExchangeEnum = builder.enumType('StockExchange', {
  description: 'Stock exchange of a PUBLIC_PROFIT brand (TCR).',
  values: STOCK_EXCHANGES,
});
export const VettingStatusEnum = builder.enumType('VettingStatus', {
  description: 'External vetting status.',
  values: VETTING_STATUSES,
});
export const EvpIdEnum = builder.enumType('EvpId', { description: 'External vetting provider.', values: EVP_IDS });
export const VettingClassEnum = builder.enumType('VettingClass', {
  description: 'External vetting class.',
  values: VETTING_CLASSES,
});
export const CampaignStatusEnum = builder.enumType('CampaignStatus', {
  description: 'Campaign status, derived from the carrier reviews.',
  values: CAMPAIGN_STATUSES,
});
export const CarrierStatusEnum = builder.enumType('CarrierStatus', {
  description: 'One carrier’s review status of a campaign.',
  values: CARRIER_STATUSES,
});
export const NudgeIntentEnum = builder.enumType('NudgeIntent', {
  description:
    'REVIEW asks pending carriers to decide sooner; APPEAL_REJECTION sends rejecting carriers back to review.',
  values: NUDGE_INTENTS,
});
export const BrandRelationshipEnum = builder.enumType('BrandRelationship', {
  description: 'TCR brandRelationship: the CSP’s assessment of its relationship with the brand.',
  values: BRAND_RELATIONSHIPS,
});
export const AltBusinessIdTypeEnum = builder.enumType('AltBusinessIdType', {
  description: 'TCR altBusinessIdType: the kind of altBusinessId.',
  values: ALT_BUSINESS_ID_TYPES,
});
export const DidStateEnum = builder.enumType('DidState', {
  description: 'DID state (spec 3): unassigned (on no campaign), warming, active, cooling.',
  values: DID_STATES,
});
export const AssignmentStatusEnum = builder.enumType('AssignmentStatus', {
  description: 'Per-number assignment status of a number on a campaign (Telnyx phone_number_campaigns).',
  values: ASSIGNMENT_STATUSES,
});
export const ThroughputTierEnum = builder.enumType('ThroughputTier', {
  description: 'Throughput tier from the vetting score (TOP, HIGH_MID, LOW_MID, LOW unvetted) or SOLE_PROPRIETOR.',
  values: Object.keys(TMOBILE_DAILY_CAP) as ThroughputTier[],
});
export const FeedbackCategoryEnum = builder.enumType('FeedbackCategory', {
  description: 'TCR brand feedback category.',
  values: FEEDBACK_CATEGORIES,
});
