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

/** Response shapes of the compliance API (spec 2.1–2.5 plus the fields README "10DLC compliance" documents). */

/** Brand (spec 2.1 plus identityStatus, stock fields, updatedAt). */
export interface BrandDto {
  id: string;
  name: string;
  ein: string;
  vertical: string;
  entityType: string;
  country: string;
  website: string | null;
  email: string | null;
  phone: string | null;
  stockSymbol: string | null;
  stockExchange: string | null;
  /** TCR companyName: the legal name, equal to `name`. */
  companyName: string;
  /** TCR displayName; `name` when none was given. */
  displayName: string;
  street: string | null;
  city: string | null;
  state: string | null;
  postalCode: string | null;
  firstName: string | null;
  lastName: string | null;
  mobilePhone: string | null;
  brandRelationship: string | null;
  altBusinessId: string | null;
  altBusinessIdType: string | null;
  businessContactEmail: string | null;
  referenceId: string | null;
  mock: boolean;
  status: string;
  identityStatus: string;
  /** Score of the last approved external vetting, 0–100; null when none. */
  vettingScore: number | null;
  /** Effective per-carrier limits from the vetting score (throughput.rules.ts). */
  throughput: BrandThroughput;
  createdAt: string;
  updatedAt: string;
}

/** The API shape of a brand row. */
export function brandDto(b: BrandRow): BrandDto {
  return {
    id: b.id,
    name: b.name,
    ein: b.ein,
    vertical: b.vertical,
    entityType: b.entityType,
    country: b.country,
    website: b.website,
    email: b.email,
    phone: b.phone,
    stockSymbol: b.stockSymbol,
    stockExchange: b.stockExchange,
    companyName: b.name,
    displayName: b.displayName ?? b.name,
    street: b.street,
    city: b.city,
    state: b.state,
    postalCode: b.postalCode,
    firstName: b.firstName,
    lastName: b.lastName,
    mobilePhone: b.mobilePhone,
    brandRelationship: b.brandRelationship,
    altBusinessId: b.altBusinessId,
    altBusinessIdType: b.altBusinessIdType,
    businessContactEmail: b.businessContactEmail,
    referenceId: b.referenceId,
    mock: b.mock,
    status: b.status,
    identityStatus: b.identityStatus,
    vettingScore: b.vettingScore,
    throughput: brandThroughput(b),
    createdAt: b.createdAt.toISOString(),
    updatedAt: b.updatedAt.toISOString(),
  };
}

/** Vetting record (spec 2.2 plus evpId, vettingScore, createdAt); completedAt is null while PENDING. */
export interface VettingDto {
  vettingId: string;
  brandId: string;
  evpId: string;
  vettingClass: string;
  status: string;
  vettingScore: number | null;
  createdAt: string;
  completedAt: string | null;
}

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
export interface CarrierDto {
  carrier: string;
  networkId: number;
  status: string;
  approvedAt: string | null;
  rejectionReason: string | null;
  /** Stable code of the rejection cause (the lint codes of campaign.lint.ts); null unless rejected or suspended. */
  rejectionCode: string | null;
  estimatedDecisionAt: string | null;
}

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
export interface CampaignDto {
  id: string;
  brandId: string;
  usecase: string;
  description: string;
  sampleMessages: string[];
  subscriberOptIn: boolean;
  subscriberHelp: boolean;
  numberPool: boolean;
  messageFlow: string | null;
  helpMessage: string | null;
  optinMessage: string | null;
  optoutMessage: string | null;
  helpKeywords: string | null;
  optinKeywords: string | null;
  optoutKeywords: string | null;
  embeddedLink: boolean;
  embeddedPhone: boolean;
  ageGated: boolean;
  directLending: boolean;
  affiliateMarketing: boolean;
  subUsecases: string[];
  privacyPolicyLink: string | null;
  termsAndConditionsLink: string | null;
  status: string;
  expedited: boolean;
  numberCount: number;
  carriers: CarrierDto[];
  sendable: boolean;
  blockingReasons: BlockingReason[];
  /** Effective per-carrier limits (throughput.rules.ts). */
  throughput: CampaignThroughput;
  createdAt: string;
  updatedAt: string;
}

/** The API shape of a campaign with its readiness computed by campaignReadiness (campaign.rules.ts). */
export function campaignDto(c: CampaignWithState): CampaignDto {
  const readiness = campaignReadiness({
    brandStatus: c.brand.status,
    carriers: c.carriers,
    numberCount: c._count.numbers,
  });
  return {
    id: c.id,
    brandId: c.brandId,
    usecase: c.usecase,
    description: c.description,
    sampleMessages: c.sampleMessages,
    subscriberOptIn: c.subscriberOptIn,
    subscriberHelp: c.subscriberHelp,
    numberPool: c.numberPool,
    messageFlow: c.messageFlow,
    helpMessage: c.helpMessage,
    optinMessage: c.optinMessage,
    optoutMessage: c.optoutMessage,
    helpKeywords: c.helpKeywords,
    optinKeywords: c.optinKeywords,
    optoutKeywords: c.optoutKeywords,
    embeddedLink: c.embeddedLink,
    embeddedPhone: c.embeddedPhone,
    ageGated: c.ageGated,
    directLending: c.directLending,
    affiliateMarketing: c.affiliateMarketing,
    subUsecases: c.subUsecases,
    privacyPolicyLink: c.privacyPolicyLink,
    termsAndConditionsLink: c.termsAndConditionsLink,
    status: c.status,
    expedited: c.expedited,
    numberCount: c._count.numbers,
    carriers: c.carriers.map(carrierDto),
    sendable: readiness.sendable,
    blockingReasons: readiness.blockingReasons,
    throughput: campaignThroughput(c.brand, c.usecase),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/** A provisioned number with its lifecycle (did-lifecycle.ts). */
export interface NumberDto {
  number: string;
  campaignId: string | null;
  assignedAt: string | null;
  createdAt: string;
  /** unassigned, warming, active or cooling (spec 3). */
  state: string;
  /** PENDING_ASSIGNMENT, ASSIGNED, FAILED_ASSIGNMENT or PENDING_UNASSIGNMENT; null when on no campaign. */
  assignmentStatus: string | null;
  /** `[{code, message}]` of a FAILED_ASSIGNMENT. */
  failureReasons: { code: string; message: string }[];
  stateChangedAt: string | null;
  /** When warming ends (→ active) or cooling ends (→ unassigned); null otherwise. */
  nextStateAt: string | null;
}

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
