import { z } from 'zod';
import type { BrandRow, VettingRecord } from './brand.store.js';
import { type BlockingReason, campaignReadiness, carrierName } from './campaign.rules.js';
import type { CampaignWithState, CarrierRecord } from './campaign.store.js';
import type { NumberRecord } from './number.store.js';
import {
  type BrandThroughput,
  brandThroughput,
  type CampaignThroughput,
  campaignThroughput,
} from './throughput.rules.js';

/**
 * Response shapes of the compliance API (spec 2.1–2.5 plus the fields README "10DLC compliance" documents), each
 * declared ONCE here as a zod object (issue 23 "one declaration per noun"): the TypeScript type is inferred from it,
 * the REST routes use it as the response schema (so OpenAPI documents it), the GraphQL object type derives its
 * fields from it (src/graphql/shape-fields.ts), and the row → API mappers below copy every field the shape and the
 * row share, so a new column the API shows by name is added to this shape only.
 */

/** Marks an ISO 8601 timestamp (GraphQL: DateTime). */
export const isoTimestamp = z.string().describe('ISO 8601 UTC with milliseconds');
/** Marks an id (GraphQL: ID). */
export const idString = z.string();

/** One carrier's effective limit (throughput.rules.ts CarrierLimit). */
export const carrierLimitShape = z.object({
  networkId: z.number(),
  carrier: z.string(),
  dailyCap: z.number().nullable().describe('Messages per day (T-Mobile: per brand)'),
  messagesPerMinute: z.number().nullable().describe('Messages per minute (AT&T: per campaign)'),
  messageClass: z.string().nullable().describe('AT&T message class'),
  note: z.string().nullable(),
});
const tierDescription = 'TOP, HIGH_MID, LOW_MID, LOW (unvetted) or SOLE_PROPRIETOR';
/** The throughput tier description shared by the brand, campaign and qualification shapes. */
export const TIER_DESCRIPTION = tierDescription;
/** Brand throughput (throughput.rules.ts BrandThroughput). */
export const brandThroughputShape = z.object({
  tier: z.string().describe(tierDescription),
  vettingScore: z.number().nullable(),
  carriers: z.array(carrierLimitShape),
});
/** Campaign throughput (throughput.rules.ts CampaignThroughput). */
export const campaignThroughputShape = z.object({
  tier: z.string().describe(tierDescription),
  messageClass: z.string().describe('AT&T message class: A–F, T (low volume) or SP (sole proprietor)'),
  carriers: z.array(carrierLimitShape),
});

/** Brand (spec 2.1 plus identityStatus, stock fields, TCR fields, updatedAt). */
export const brandShape = z.object({
  id: idString,
  name: z.string().describe('Legal business name'),
  ein: z.string().describe('EIN, NN-NNNNNNN'),
  vertical: z.string(),
  entityType: z.string(),
  country: z.string().describe('ISO 3166-1 alpha-2'),
  website: z.string().nullable(),
  email: z.string().nullable(),
  phone: z.string().nullable().describe('E.164'),
  stockSymbol: z.string().nullable(),
  stockExchange: z.string().nullable(),
  companyName: z.string().describe('TCR companyName: the legal name, equal to name'),
  displayName: z.string().describe('TCR displayName; name when none was given'),
  street: z.string().nullable(),
  city: z.string().nullable(),
  state: z.string().nullable(),
  postalCode: z.string().nullable(),
  firstName: z.string().nullable().describe('Sole proprietors'),
  lastName: z.string().nullable().describe('Sole proprietors'),
  mobilePhone: z.string().nullable().describe('Sole proprietors (OTP), E.164'),
  brandRelationship: z.string().nullable(),
  altBusinessId: z.string().nullable(),
  altBusinessIdType: z.string().nullable(),
  businessContactEmail: z.string().nullable(),
  referenceId: z.string().nullable(),
  mock: z.boolean(),
  status: z.string().describe('PENDING, ACTIVE or FAILED'),
  identityStatus: z.string().describe('SELF_DECLARED, UNVERIFIED, VERIFIED or VETTED_VERIFIED'),
  vettingScore: z.number().nullable().describe('Score of the last approved external vetting, 0–100'),
  throughput: brandThroughputShape.describe('Effective per-carrier limits from the vetting score'),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});

/** Brand (API shape), inferred from {@link brandShape}; `throughput` as throughput.rules.ts types it. */
export type BrandDto = Omit<z.output<typeof brandShape>, 'throughput'> & { throughput: BrandThroughput };

/**
 * Compiles the mapper of a response shape: `(row, computed) => object` with every key of `keys` in that order (the
 * shape's, so JSON keeps the documented order), `computed[k]` for the keys in `computedKeys` and `row[k]` for the
 * others (the row type must carry each copied key with the API type: checked at the call site). The mapper is one
 * object literal made once from the shape's keys (`new Function`, as fast-json-stringify and graphql-jit compile
 * theirs): copying 32 keys in a loop cost the brand read about 2 µs a request (issue 24), a literal a tenth of
 * that, and a new field still needs only the shape. Keys are the shape's own identifiers, never input.
 */
function compileMapper<T>(
  keys: readonly string[],
  computedKeys: readonly string[],
): (row: object, computed: Record<string, unknown>) => T {
  const computed = new Set(computedKeys);
  const entries = keys.map((k) => `${JSON.stringify(k)}: ${computed.has(k) ? 'c' : 'r'}[${JSON.stringify(k)}]`);
  return new Function('r', 'c', `return { ${entries.join(', ')} };`) as (row: object, c: Record<string, unknown>) => T;
}

const BRAND_COMPUTED = ['companyName', 'displayName', 'throughput', 'createdAt', 'updatedAt'] as const;
const brandMapper = compileMapper<BrandDto>(Object.keys(brandShape.shape), BRAND_COMPUTED);
/** The brand fields copied by name from the row (compile-time check that the row has each with the API type). */
type BrandCopied = Exclude<keyof BrandDto, (typeof BRAND_COMPUTED)[number]>;
const _brandRowCarriesCopied: (r: BrandRow) => Pick<BrandDto, BrandCopied> = (r) => r;
void _brandRowCarriesCopied;

/** The API shape of a brand row (every {@link brandShape} field by name, plus the computed ones). */
export function brandDto(b: BrandRow): BrandDto {
  return brandMapper(b, {
    companyName: b.name,
    displayName: b.displayName ?? b.name,
    throughput: brandThroughput(b),
    createdAt: b.createdAt.toISOString(),
    updatedAt: b.updatedAt.toISOString(),
  });
}

/** Vetting record (spec 2.2 plus evpId, vettingScore, createdAt); completedAt is null while PENDING. */
export const vettingShape = z.object({
  vettingId: idString,
  brandId: idString,
  evpId: z.string().describe('Vetting provider'),
  vettingClass: z.string(),
  status: z.string().describe('PENDING, APPROVED or FAILED'),
  vettingScore: z.number().nullable().describe('0–100 once APPROVED'),
  createdAt: isoTimestamp,
  completedAt: isoTimestamp.nullable().describe('Null while PENDING'),
});
/** Vetting record (API shape), inferred from {@link vettingShape}. */
export type VettingDto = z.output<typeof vettingShape>;

/** The API shape of a vetting row (`id` becomes `vettingId`). */
export function vettingDto(v: VettingRecord): VettingDto {
  return {
    vettingId: v.id,
    brandId: v.brandId,
    evpId: v.evpId,
    vettingClass: v.vettingClass,
    status: v.status,
    vettingScore: v.vettingScore,
    createdAt: v.createdAt.toISOString(),
    completedAt: v.completedAt?.toISOString() ?? null,
  };
}

/** One carrier row (spec 2.4 plus networkId, rejectionReason, estimatedDecisionAt). */
export const carrierShape = z.object({
  carrier: z.string().describe('Carrier name'),
  networkId: z.number().describe('TCR mobile network id (10017 AT&T, 10035 T-Mobile, …)'),
  status: z.string().describe('PENDING, APPROVED, REJECTED or SUSPENDED'),
  approvedAt: isoTimestamp.nullable(),
  rejectionReason: z.string().nullable(),
  rejectionCode: z
    .string()
    .nullable()
    .describe(
      'Stable code of the cause (the lint codes, e.g. SAMPLE_MISSING_OPT_OUT); null unless rejected or suspended',
    ),
  estimatedDecisionAt: isoTimestamp.nullable().describe('When the registry is expected to decide (null once decided)'),
});
/** One carrier row (API shape), inferred from {@link carrierShape}. */
export type CarrierDto = z.output<typeof carrierShape>;

/** The API shape of a carrier review row. */
export function carrierDto(c: CarrierRecord): CarrierDto {
  return {
    carrier: carrierName(c.networkId),
    networkId: c.networkId,
    status: c.status,
    approvedAt: c.approvedAt?.toISOString() ?? null,
    rejectionReason: c.rejectionReason,
    rejectionCode: c.rejectionCode,
    estimatedDecisionAt: c.estimatedDecisionAt?.toISOString() ?? null,
  };
}

/** Campaign detail (spec 2.3 plus carriers, readiness, numberCount). */
export const campaignShape = z.object({
  id: idString,
  brandId: idString,
  usecase: z.string().describe('TCR use case (compliance enum usecase)'),
  description: z.string(),
  sampleMessages: z.array(z.string()),
  subscriberOptIn: z.boolean(),
  subscriberHelp: z.boolean(),
  numberPool: z.boolean(),
  messageFlow: z.string().nullable(),
  helpMessage: z.string().nullable(),
  optinMessage: z.string().nullable(),
  optoutMessage: z.string().nullable(),
  helpKeywords: z.string().nullable(),
  optinKeywords: z.string().nullable(),
  optoutKeywords: z.string().nullable(),
  embeddedLink: z.boolean(),
  embeddedPhone: z.boolean(),
  ageGated: z.boolean(),
  directLending: z.boolean(),
  affiliateMarketing: z.boolean(),
  subUsecases: z.array(z.string()),
  privacyPolicyLink: z.string().nullable(),
  termsAndConditionsLink: z.string().nullable(),
  status: z.string().describe('PENDING, APPROVED, REJECTED or SUSPENDED'),
  expedited: z.boolean().describe('Whether expedited review was requested'),
  numberCount: z.number().describe('Numbers assigned'),
  carriers: z.array(carrierShape).describe('Carrier reviews'),
  sendable: z.boolean().describe('True when there is no blocking reason'),
  blockingReasons: z.array(z.object({ code: z.string(), message: z.string(), networkId: z.number().nullable() })),
  throughput: campaignThroughputShape.describe('Effective per-carrier limits (throughput.rules.ts)'),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});
/** Campaign detail (API shape), inferred from {@link campaignShape}; throughput and reasons as the rules type them. */
export type CampaignDto = Omit<z.output<typeof campaignShape>, 'throughput' | 'blockingReasons'> & {
  throughput: CampaignThroughput;
  blockingReasons: BlockingReason[];
};

const CAMPAIGN_COMPUTED = [
  'numberCount',
  'carriers',
  'sendable',
  'blockingReasons',
  'throughput',
  'createdAt',
  'updatedAt',
] as const;
const campaignMapper = compileMapper<CampaignDto>(Object.keys(campaignShape.shape), CAMPAIGN_COMPUTED);
type CampaignCopied = Exclude<keyof CampaignDto, (typeof CAMPAIGN_COMPUTED)[number]>;
const _campaignRowCarriesCopied: (r: CampaignWithState) => Pick<CampaignDto, CampaignCopied> = (r) => r;
void _campaignRowCarriesCopied;

/** The API shape of a campaign with its readiness computed by campaignReadiness (campaign.rules.ts). */
export function campaignDto(c: CampaignWithState): CampaignDto {
  const readiness = campaignReadiness({
    brandStatus: c.brand.status,
    carriers: c.carriers,
    numberCount: c._count.numbers,
  });
  return campaignMapper(c, {
    numberCount: c._count.numbers,
    carriers: c.carriers.map(carrierDto),
    sendable: readiness.sendable,
    blockingReasons: readiness.blockingReasons,
    throughput: campaignThroughput(c.brand, c.usecase),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  });
}

/** The DID lifecycle fields of a number (did-lifecycle.ts), shared by the number and assigned-number shapes. */
export const numberStateShape = {
  state: z.string().describe('DID state: unassigned, warming, active or cooling'),
  assignmentStatus: z
    .string()
    .nullable()
    .describe('PENDING_ASSIGNMENT, ASSIGNED, FAILED_ASSIGNMENT or PENDING_UNASSIGNMENT; null on no campaign'),
  failureReasons: z.array(z.object({ code: z.string(), message: z.string() })).describe('Of a FAILED_ASSIGNMENT'),
  stateChangedAt: isoTimestamp.nullable(),
  nextStateAt: isoTimestamp.nullable().describe('When warming or cooling ends'),
};

/** A provisioned number with its lifecycle (did-lifecycle.ts). */
export const numberShape = z.object({
  number: z.string().describe('E.164'),
  campaignId: idString.nullable(),
  assignedAt: isoTimestamp.nullable(),
  createdAt: isoTimestamp,
  ...numberStateShape,
});
/** A provisioned number (API shape), inferred from {@link numberShape}. */
export type NumberDto = z.output<typeof numberShape>;

/** The lifecycle fields of a number row. */
export function numberState(n: NumberRecord) {
  return {
    state: n.state,
    assignmentStatus: n.assignmentStatus,
    failureReasons: (n.failureReasons ?? []) as { code: string; message: string }[],
    stateChangedAt: n.stateChangedAt?.toISOString() ?? null,
    nextStateAt: n.stateDueAt?.toISOString() ?? null,
  };
}

/** The API shape of a number row. */
export function numberDto(n: NumberRecord): NumberDto {
  return {
    number: n.number,
    campaignId: n.campaignId,
    assignedAt: n.assignedAt?.toISOString() ?? null,
    createdAt: n.createdAt.toISOString(),
    ...numberState(n),
  };
}

/** DID mapping entry (spec 2.5). */
export interface DidMappingDto {
  number: string;
  campaignId: string | null;
  campaignStatus: string | null;
  /** DID state (spec 3): unassigned, warming, active or cooling. */
  state: string;
  assignmentStatus: string | null;
}
