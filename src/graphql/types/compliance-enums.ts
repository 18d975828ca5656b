import {
  BRAND_STATUSES,
  CAMPAIGN_STATUSES,
  CARRIER_STATUSES,
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
export const FeedbackCategoryEnum = builder.enumType('FeedbackCategory', {
  description: 'TCR brand feedback category.',
  values: FEEDBACK_CATEGORIES,
});
