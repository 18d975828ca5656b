/**
 * Value sets of the 10DLC area. Sources: spec 2.10 (verticals, exactly), TCR's brand entity types, use cases
 * (standard and special) and stock exchanges, and the TCR mobile network ids of the US carriers.
 */

/** Spec 2.10: exactly these vertical values. */
export const VERTICALS = [
  'AGRICULTURE',
  'COMMUNICATION',
  'EDUCATION',
  'ENTERTAINMENT',
  'FINANCE',
  'GAMBLING',
  'GOVERNMENT',
  'HEALTHCARE',
  'HOSPITALITY',
  'INSURANCE',
  'LEGAL',
  'MANUFACTURING',
  'NGO',
  'POLITICAL',
  'REAL_ESTATE',
  'RELIGION',
  'RETAIL',
  'TECHNOLOGY',
  'TRANSPORTATION',
] as const;

/** TCR brand entity types (spec 2.1 names the first four). */
export const ENTITY_TYPES = ['PRIVATE_PROFIT', 'PUBLIC_PROFIT', 'NON_PROFIT', 'GOVERNMENT', 'SOLE_PROPRIETOR'] as const;

/** TCR standard use cases. `DELIVERY_NOTIFICATIONS` is spelled as in spec 2.3 (TCR: DELIVERY_NOTIFICATION, accepted as an alias). */
export const STANDARD_USECASES = [
  '2FA',
  'ACCOUNT_NOTIFICATION',
  'CUSTOMER_CARE',
  'DELIVERY_NOTIFICATIONS',
  'FRAUD_ALERT',
  'HIGHER_EDUCATION',
  'LOW_VOLUME',
  'MARKETING',
  'MIXED',
  'POLLING_VOTING',
  'PUBLIC_SERVICE_ANNOUNCEMENT',
  'SECURITY_ALERT',
] as const;

/** TCR special use cases: they need carrier review, and some need an external vetting (see {@link VETTED_USECASES}). */
export const SPECIAL_USECASES = [
  'AGENTS_FRANCHISES',
  'CARRIER_EXEMPT',
  'CHARITY',
  'EMERGENCY',
  'K12_EDUCATION',
  'PLATFORM_FREE_TRIAL',
  'POLITICAL',
  'PROXY',
  'SOCIAL',
  'SOLE_PROPRIETOR',
  'SWEEPSTAKE',
  'UCAAS_HIGH',
  'UCAAS_LOW',
] as const;

/** Every use case value (the `usecase` enum). */
export const USECASES = [...STANDARD_USECASES, ...SPECIAL_USECASES] as const;

/** Alternative spellings accepted on input and stored under the canonical name. */
export const USECASE_ALIASES: Record<string, (typeof USECASES)[number]> = {
  DELIVERY_NOTIFICATION: 'DELIVERY_NOTIFICATIONS',
};

/** Special use cases that TCR only opens to brands with an approved external vetting (VETTED_VERIFIED). */
export const VETTED_USECASES: readonly string[] = ['POLITICAL', 'SWEEPSTAKE', 'CHARITY', 'UCAAS_HIGH'];

/** TCR stock exchanges (for PUBLIC_PROFIT brands). */
export const STOCK_EXCHANGES = [
  'NONE',
  'NASDAQ',
  'NYSE',
  'AMEX',
  'AMX',
  'ASX',
  'B3',
  'BME',
  'BSE',
  'FRA',
  'ICEX',
  'JPX',
  'JSE',
  'KRX',
  'LON',
  'NSE',
  'OMX',
  'SEHK',
  'SSE',
  'STO',
  'SWX',
  'SZSE',
  'TSX',
  'TWSE',
  'VSE',
  'OTHER',
] as const;

/** Brand registration status: PENDING until the registry decides, then ACTIVE (identity verified) or FAILED. */
export const BRAND_STATUSES = ['PENDING', 'ACTIVE', 'FAILED'] as const;
/** TCR identity status of a brand. SELF_DECLARED until the registry's identity check finishes. */
export const IDENTITY_STATUSES = ['SELF_DECLARED', 'UNVERIFIED', 'VERIFIED', 'VETTED_VERIFIED'] as const;
/** External vetting status (spec 2.2 shows APPROVED). */
export const VETTING_STATUSES = ['PENDING', 'APPROVED', 'FAILED'] as const;
/** External vetting providers (TCR evpId). */
export const EVP_IDS = ['AEGIS', 'WMC'] as const;
/** External vetting classes. */
export const VETTING_CLASSES = ['STANDARD', 'ENHANCED', 'POLITICAL'] as const;
/** Campaign status, derived from the carrier rows (README "Campaign status"). */
export const CAMPAIGN_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'SUSPENDED'] as const;
/** One carrier's review status of a campaign. */
export const CARRIER_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'SUSPENDED'] as const;
/** Nudge intents (TCR campaign nudge). */
export const NUDGE_INTENTS = ['REVIEW', 'APPEAL_REJECTION'] as const;
/** TCR brand feedback categories. */
export const FEEDBACK_CATEGORIES = ['TAX_ID', 'STOCK_SYMBOL', 'GOVERNMENT_ENTITY', 'NONPROFIT', 'OTHERS'] as const;

/** Value types of the sets above. */
export type Vertical = (typeof VERTICALS)[number];
export type EntityType = (typeof ENTITY_TYPES)[number];
export type Usecase = (typeof USECASES)[number];
export type BrandStatus = (typeof BRAND_STATUSES)[number];
export type IdentityStatus = (typeof IDENTITY_STATUSES)[number];
export type VettingStatus = (typeof VETTING_STATUSES)[number];
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
export type CarrierStatus = (typeof CARRIER_STATUSES)[number];
export type FeedbackCategory = (typeof FEEDBACK_CATEGORIES)[number];

/** A US carrier that reviews 10DLC campaigns, keyed by its TCR mobile network id. */
export interface Carrier {
  networkId: number;
  name: string;
  /** Sandbox: base delay from submission to this carrier's decision, in ms (divided by REGISTRY_TIME_SCALE). */
  reviewDelayMs: number;
}

/** The carriers every campaign gets a review row for, ascending by network id (the order of every carrier list). */
export const CARRIERS: readonly Carrier[] = [
  { networkId: 10017, name: 'AT&T', reviewDelayMs: 10_000 },
  { networkId: 10035, name: 'T-Mobile', reviewDelayMs: 20_000 },
  { networkId: 10037, name: 'US Cellular', reviewDelayMs: 40_000 },
  { networkId: 10038, name: 'Verizon Wireless', reviewDelayMs: 30_000 },
];

/** Enum names served by GET /compliance/enums/{name} (spec 2.10). */
export const ENUMS: Record<string, readonly string[]> = {
  vertical: VERTICALS,
  entityType: ENTITY_TYPES,
  usecase: USECASES,
};

/** TCR brandRelationship: the CSP's assessment of its relationship with the brand (TCR `/enum/brandRelationship`). */
export const BRAND_RELATIONSHIPS = [
  'BASIC_ACCOUNT',
  'SMALL_ACCOUNT',
  'MEDIUM_ACCOUNT',
  'LARGE_ACCOUNT',
  'KEY_ACCOUNT',
] as const;

/** TCR altBusinessIdType (`/enum/altBusinessIdType`). */
export const ALT_BUSINESS_ID_TYPES = ['NONE', 'DUNS', 'GIIN', 'LEI'] as const;

/** TCR sub-use cases: the standard use cases a MIXED / LOW_VOLUME (etc.) campaign declares it carries. */
export const SUB_USECASES = [
  '2FA',
  'ACCOUNT_NOTIFICATION',
  'CUSTOMER_CARE',
  'DELIVERY_NOTIFICATION',
  'FRAUD_ALERT',
  'HIGHER_EDUCATION',
  'MARKETING',
  'POLLING_VOTING',
  'PUBLIC_SERVICE_ANNOUNCEMENT',
  'SECURITY_ALERT',
] as const;

/**
 * Sub-use-case bounds per use case (TCR usecase enum `minSubUsecases`/`maxSubUsecases`; research file §4.8: MIXED
 * 2–5, LOW_VOLUME and CARRIER_EXEMPT 1–5, PROXY/SOCIAL/CHARITY/POLITICAL 0–5). Every other use case takes none.
 */
export function subUsecaseBounds(usecase: string): { min: number; max: number } {
  if (usecase === 'MIXED') return { min: 2, max: 5 };
  if (usecase === 'LOW_VOLUME' || usecase === 'CARRIER_EXEMPT') return { min: 1, max: 5 };
  if (['PROXY', 'SOCIAL', 'CHARITY', 'POLITICAL'].includes(usecase)) return { min: 0, max: 5 };
  return { min: 0, max: 0 };
}

/**
 * DID states (spec 3 names warming, active, cooling; `unassigned` is the state of a number on no campaign, which
 * a cool-down ends in). Carried by did.state_changed as `previousState` and `state`.
 */
export const DID_STATES = ['unassigned', 'warming', 'active', 'cooling'] as const;
export type DidState = (typeof DID_STATES)[number];

/**
 * Per-number assignment status (Telnyx `phone_number_campaigns` assignmentStatus; research file §4.12). Null for a
 * number on no campaign. FAILED_UNASSIGNMENT is not produced: unlinking cannot fail here.
 */
export const ASSIGNMENT_STATUSES = [
  'PENDING_ASSIGNMENT',
  'ASSIGNED',
  'FAILED_ASSIGNMENT',
  'PENDING_UNASSIGNMENT',
  'FAILED_UNASSIGNMENT',
] as const;
export type AssignmentStatus = (typeof ASSIGNMENT_STATUSES)[number];
