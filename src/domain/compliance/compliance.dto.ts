import type { Brand, Campaign, CampaignCarrier, PhoneNumber, Vetting } from '../../generated/prisma/client.js';
import { type BlockingReason, campaignReadiness, carrierName } from './campaign.rules.js';

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
  status: string;
  identityStatus: string;
  createdAt: string;
  updatedAt: string;
}

/** The columns of a brand row that {@link brandDto} reads (a Prisma `Brand` or a raw row aliased alike). */
export type BrandRow = Omit<Brand, 'accountId' | 'feedback'>;

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
    status: b.status,
    identityStatus: b.identityStatus,
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
export function vettingDto(v: Vetting): VettingDto {
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
  estimatedDecisionAt: string | null;
}

/** The API shape of a carrier review row. */
export function carrierDto(c: CampaignCarrier): CarrierDto {
  return {
    carrier: carrierName(c.networkId),
    networkId: c.networkId,
    status: c.status,
    approvedAt: c.approvedAt?.toISOString() ?? null,
    rejectionReason: c.rejectionReason,
    estimatedDecisionAt: c.estimatedDecisionAt?.toISOString() ?? null,
  };
}

/** A campaign as loaded for output: with carriers, the brand's status and the number count. */
export type CampaignWithState = Campaign & {
  carriers: CampaignCarrier[];
  brand: { status: string };
  _count: { numbers: number };
};

/** Prisma `include` that loads a {@link CampaignWithState}. */
export const campaignStateInclude = {
  carriers: { orderBy: { networkId: 'asc' } },
  brand: { select: { status: true } },
  _count: { select: { numbers: true } },
} as const;

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
  status: string;
  expedited: boolean;
  numberCount: number;
  carriers: CarrierDto[];
  sendable: boolean;
  blockingReasons: BlockingReason[];
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
    status: c.status,
    expedited: c.expedited,
    numberCount: c._count.numbers,
    carriers: c.carriers.map(carrierDto),
    sendable: readiness.sendable,
    blockingReasons: readiness.blockingReasons,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/** A provisioned number. */
export interface NumberDto {
  number: string;
  campaignId: string | null;
  assignedAt: string | null;
  createdAt: string;
}

/** The API shape of a number row. */
export function numberDto(n: PhoneNumber): NumberDto {
  return {
    number: n.number,
    campaignId: n.campaignId,
    assignedAt: n.assignedAt?.toISOString() ?? null,
    createdAt: n.createdAt.toISOString(),
  };
}

/** DID mapping entry (spec 2.5). */
export interface DidMappingDto {
  number: string;
  campaignId: string | null;
  campaignStatus: string | null;
}
