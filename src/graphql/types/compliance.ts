import { resolveCursorConnection } from '@pothos/plugin-relay';
import {
  applyForVetting,
  type BrandFeedback,
  type BrandQualification,
  type CarrierQualification,
  deleteBrand,
  getBrand,
  getBrandFeedback,
  listVettings,
  pageBrands,
  qualifyBrand,
  registerBrand,
  revetBrand,
  type UsecaseQualification,
  updateBrand,
} from '../../domain/compliance/brand.service.js';
import type { BlockingReason } from '../../domain/compliance/campaign.rules.js';
import {
  createCampaign,
  deleteCampaign,
  expediteCampaign,
  getCampaign,
  nudgeCampaign,
  pageCampaigns,
  updateCampaign,
} from '../../domain/compliance/campaign.service.js';
import type {
  BrandDto,
  CampaignDto,
  CarrierDto,
  DidMappingDto,
  NumberDto,
  VettingDto,
} from '../../domain/compliance/compliance.dto.js';
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
import {
  type AssignedNumberDto,
  type AssignResult,
  assignNumbers,
  didMapping,
  getEnum,
  listCampaignNumbers,
  pageNumbers,
  provisionNumbers,
  releaseNumber,
  removeNumbers,
} from '../../domain/compliance/number.service.js';
import type { FeedbackItem } from '../../domain/compliance/registry.port.js';
import { decodeCursor, encodeCursor } from '../../domain/paging.js';
import { builder } from '../builder.js';

/** GraphQL gives null for omitted optional input fields; the shared zod schemas expect them absent. */
function withoutNulls<T extends object>(input: T | null | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input ?? {}).filter(([, v]) => v !== null && v !== undefined));
}

// Enums ----------------------------------------------------------------------------------------------------------

const BrandStatusEnum = builder.enumType('BrandStatus', {
  description: 'Brand registration status: PENDING until the registry decides, then ACTIVE or FAILED.',
  values: BRAND_STATUSES,
});
const IdentityStatusEnum = builder.enumType('IdentityStatus', {
  description: 'TCR identity status of a brand (SELF_DECLARED until the identity check finishes).',
  values: IDENTITY_STATUSES,
});
const VerticalEnum = builder.enumType('Vertical', { description: 'Industry vertical (spec 2.10).', values: VERTICALS });
const EntityTypeEnum = builder.enumType('EntityType', {
  description: 'Legal entity type (TCR).',
  values: ENTITY_TYPES,
});
const StockExchangeEnum = builder.enumType('StockExchange', {
  description: 'Stock exchange of a PUBLIC_PROFIT brand (TCR).',
  values: STOCK_EXCHANGES,
});
const VettingStatusEnum = builder.enumType('VettingStatus', {
  description: 'External vetting status.',
  values: VETTING_STATUSES,
});
const EvpIdEnum = builder.enumType('EvpId', { description: 'External vetting provider.', values: EVP_IDS });
const VettingClassEnum = builder.enumType('VettingClass', {
  description: 'External vetting class.',
  values: VETTING_CLASSES,
});
const CampaignStatusEnum = builder.enumType('CampaignStatus', {
  description: 'Campaign status, derived from the carrier reviews.',
  values: CAMPAIGN_STATUSES,
});
const CarrierStatusEnum = builder.enumType('CarrierStatus', {
  description: 'One carrier’s review status of a campaign.',
  values: CARRIER_STATUSES,
});
const NudgeIntentEnum = builder.enumType('NudgeIntent', {
  description:
    'REVIEW asks pending carriers to decide sooner; APPEAL_REJECTION sends rejecting carriers back to review.',
  values: NUDGE_INTENTS,
});
const FeedbackCategoryEnum = builder.enumType('FeedbackCategory', {
  description: 'TCR brand feedback category.',
  values: FEEDBACK_CATEGORIES,
});

// Object types ---------------------------------------------------------------------------------------------------

const FeedbackItemRef = builder.objectRef<FeedbackItem>('BrandFeedbackItem').implement({
  description: 'A registry feedback item: why the identity check failed and which fields to correct.',
  fields: (t) => ({
    id: t.field({ type: FeedbackCategoryEnum, description: 'TCR feedback category.', resolve: (f) => f.id }),
    displayName: t.exposeString('displayName'),
    description: t.exposeString('description', { description: 'What is wrong and how to correct it.' }),
    fields: t.exposeStringList('fields', { description: 'Brand fields to correct.' }),
  }),
});

const BrandFeedbackRef = builder.objectRef<BrandFeedback>('BrandFeedback').implement({
  description: 'Registry feedback of a brand (empty `category` unless the identity check failed).',
  fields: (t) => ({
    brandId: t.exposeID('brandId'),
    status: t.field({ type: BrandStatusEnum, resolve: (f) => f.status as never }),
    identityStatus: t.field({ type: IdentityStatusEnum, resolve: (f) => f.identityStatus as never }),
    category: t.field({ type: [FeedbackItemRef], resolve: (f) => f.category }),
  }),
});

const VettingRef = builder.objectRef<VettingDto>('Vetting').implement({
  description: 'An external vetting record (spec 2.2).',
  fields: (t) => ({
    vettingId: t.exposeID('vettingId'),
    brandId: t.exposeID('brandId'),
    evpId: t.field({ type: EvpIdEnum, description: 'Vetting provider.', resolve: (v) => v.evpId as never }),
    vettingClass: t.field({ type: VettingClassEnum, resolve: (v) => v.vettingClass as never }),
    status: t.field({ type: VettingStatusEnum, resolve: (v) => v.status as never }),
    vettingScore: t.exposeInt('vettingScore', { nullable: true, description: '0–100 once APPROVED.' }),
    createdAt: t.field({ type: 'DateTime', resolve: (v) => v.createdAt }),
    completedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Null while PENDING.',
      resolve: (v) => v.completedAt,
    }),
  }),
});

const CarrierQualificationRef = builder.objectRef<CarrierQualification>('CarrierQualification').implement({
  description: 'One carrier’s terms for a use case (TCR qualify mnoMetadata).',
  fields: (t) => ({
    networkId: t.exposeInt('networkId', { description: 'TCR mobile network id.' }),
    carrier: t.exposeString('carrier'),
    qualifies: t.exposeBoolean('qualifies'),
    carrierReviewRequired: t.exposeBoolean('carrierReviewRequired'),
    minMsgSamples: t.exposeInt('minMsgSamples'),
    subscriberOptInRequired: t.exposeBoolean('subscriberOptInRequired'),
    subscriberHelpRequired: t.exposeBoolean('subscriberHelpRequired'),
    embeddedLinksAllowed: t.exposeBoolean('embeddedLinksAllowed'),
    embeddedPhoneAllowed: t.exposeBoolean('embeddedPhoneAllowed'),
  }),
});

const UsecaseQualificationRef = builder.objectRef<UsecaseQualification>('UsecaseQualification').implement({
  description: 'Whether the brand may use one use case, with per-carrier terms.',
  fields: (t) => ({
    usecase: t.exposeString('usecase'),
    qualifies: t.exposeBoolean('qualifies'),
    reason: t.exposeString('reason', { nullable: true, description: 'Why not, when it does not qualify.' }),
    carriers: t.field({ type: [CarrierQualificationRef], resolve: (u) => u.carriers }),
  }),
});

const BrandQualificationRef = builder.objectRef<BrandQualification>('BrandQualification').implement({
  description: 'Whether the brand qualifies for 10DLC and which use cases are available.',
  fields: (t) => ({
    brandId: t.exposeID('brandId'),
    qualified: t.exposeBoolean('qualified'),
    status: t.field({ type: BrandStatusEnum, resolve: (q) => q.status as never }),
    identityStatus: t.field({ type: IdentityStatusEnum, resolve: (q) => q.identityStatus as never }),
    usecases: t.field({ type: [UsecaseQualificationRef], resolve: (q) => q.usecases }),
  }),
});

const BrandRef = builder.objectRef<BrandDto>('Brand').implement({
  description: 'A business brand registered for 10DLC (spec 2.1).',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name', { description: 'Legal business name.' }),
    ein: t.exposeString('ein', { description: 'EIN, NN-NNNNNNN.' }),
    vertical: t.field({ type: VerticalEnum, resolve: (b) => b.vertical as never }),
    entityType: t.field({ type: EntityTypeEnum, resolve: (b) => b.entityType as never }),
    country: t.exposeString('country', { description: 'ISO 3166-1 alpha-2.' }),
    website: t.exposeString('website', { nullable: true }),
    email: t.exposeString('email', { nullable: true }),
    phone: t.exposeString('phone', { nullable: true, description: 'E.164.' }),
    stockSymbol: t.exposeString('stockSymbol', { nullable: true }),
    stockExchange: t.field({ type: StockExchangeEnum, nullable: true, resolve: (b) => b.stockExchange as never }),
    status: t.field({ type: BrandStatusEnum, resolve: (b) => b.status as never }),
    identityStatus: t.field({ type: IdentityStatusEnum, resolve: (b) => b.identityStatus as never }),
    createdAt: t.field({ type: 'DateTime', resolve: (b) => b.createdAt }),
    updatedAt: t.field({ type: 'DateTime', resolve: (b) => b.updatedAt }),
    feedback: t.field({
      type: BrandFeedbackRef,
      description: 'Registry feedback: rejection reasons and required corrections.',
      resolve: (b, _args, ctx) => getBrandFeedback(ctx.app, ctx.actor, b.id),
    }),
    vettings: t.field({
      type: [VettingRef],
      description: 'External vetting records, newest first.',
      resolve: (b, _args, ctx) => listVettings(ctx.app, ctx.actor, b.id),
    }),
    qualification: t.field({
      type: BrandQualificationRef,
      description: 'Whether the brand qualifies and which use cases it may use (REST …/qualify).',
      resolve: (b, _args, ctx) => qualifyBrand(ctx.app, ctx.actor, b.id),
    }),
  }),
});

const CarrierApprovalRef = builder.objectRef<CarrierDto>('CarrierApproval').implement({
  description: 'One carrier’s review of a campaign (spec 2.4).',
  fields: (t) => ({
    carrier: t.exposeString('carrier', { description: 'Carrier name.' }),
    networkId: t.exposeInt('networkId', { description: 'TCR mobile network id (10017 AT&T, 10035 T-Mobile, …).' }),
    status: t.field({ type: CarrierStatusEnum, resolve: (c) => c.status as never }),
    approvedAt: t.field({ type: 'DateTime', nullable: true, resolve: (c) => c.approvedAt }),
    rejectionReason: t.exposeString('rejectionReason', { nullable: true }),
    estimatedDecisionAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the registry is expected to decide (null once decided).',
      resolve: (c) => c.estimatedDecisionAt,
    }),
  }),
});

const BlockingReasonRef = builder.objectRef<BlockingReason>('BlockingReason').implement({
  description: 'Why a campaign cannot send yet.',
  fields: (t) => ({
    code: t.exposeString('code', {
      description: 'BRAND_NOT_ACTIVE, CARRIER_PENDING, CARRIER_REJECTED, CARRIER_SUSPENDED or NO_NUMBERS_ASSIGNED.',
    }),
    message: t.exposeString('message'),
    networkId: t.exposeInt('networkId', { nullable: true, description: 'The carrier, for carrier reasons.' }),
  }),
});

const AssignedNumberRef = builder.objectRef<AssignedNumberDto>('AssignedNumber').implement({
  description: 'A number assigned to a campaign.',
  fields: (t) => ({
    number: t.exposeString('number', { description: 'E.164.' }),
    assignedAt: t.field({ type: 'DateTime', resolve: (n) => n.assignedAt }),
  }),
});

const CampaignRef = builder.objectRef<CampaignDto>('Campaign').implement({
  description: 'A 10DLC campaign (spec 2.3) with its carrier reviews and readiness.',
  fields: (t) => ({
    id: t.exposeID('id'),
    brandId: t.exposeID('brandId'),
    usecase: t.exposeString('usecase', { description: 'TCR use case (complianceEnum(name: "usecase")).' }),
    description: t.exposeString('description'),
    sampleMessages: t.exposeStringList('sampleMessages'),
    subscriberOptIn: t.exposeBoolean('subscriberOptIn'),
    subscriberHelp: t.exposeBoolean('subscriberHelp'),
    numberPool: t.exposeBoolean('numberPool'),
    status: t.field({ type: CampaignStatusEnum, resolve: (c) => c.status as never }),
    expedited: t.exposeBoolean('expedited', { description: 'Whether expedited review was requested.' }),
    numberCount: t.exposeInt('numberCount', { description: 'Numbers assigned.' }),
    carriers: t.field({ type: [CarrierApprovalRef], description: 'Carrier reviews.', resolve: (c) => c.carriers }),
    sendable: t.exposeBoolean('sendable', { description: 'True when there is no blocking reason.' }),
    blockingReasons: t.field({ type: [BlockingReasonRef], resolve: (c) => c.blockingReasons }),
    createdAt: t.field({ type: 'DateTime', resolve: (c) => c.createdAt }),
    updatedAt: t.field({ type: 'DateTime', resolve: (c) => c.updatedAt }),
    brand: t.field({ type: BrandRef, resolve: (c, _args, ctx) => getBrand(ctx.app, ctx.actor, c.brandId) }),
    numbers: t.field({
      type: [AssignedNumberRef],
      description: 'Numbers assigned to the campaign.',
      resolve: async (c, _args, ctx) => (await listCampaignNumbers(ctx.app, ctx.actor, c.id)).numbers,
    }),
  }),
});

const PhoneNumberRef = builder.objectRef<NumberDto>('PhoneNumber').implement({
  description: 'A number (DID) provisioned in the account.',
  fields: (t) => ({
    number: t.exposeString('number', { description: 'E.164.' }),
    campaignId: t.exposeID('campaignId', { nullable: true }),
    assignedAt: t.field({ type: 'DateTime', nullable: true, resolve: (n) => n.assignedAt }),
    createdAt: t.field({ type: 'DateTime', resolve: (n) => n.createdAt }),
  }),
});

const DidMappingEntryRef = builder.objectRef<DidMappingDto>('DidMappingEntry').implement({
  description: 'A number and the campaign it is assigned to (spec 2.5).',
  fields: (t) => ({
    number: t.exposeString('number'),
    campaignId: t.exposeID('campaignId', { nullable: true }),
    campaignStatus: t.field({ type: CampaignStatusEnum, nullable: true, resolve: (d) => d.campaignStatus as never }),
  }),
});

const DidMappingPageRef = builder
  .objectRef<{ entries: DidMappingDto[]; nextCursor: string | null }>('DidMappingPage')
  .implement({
    description: 'A page of the DID mapping, ascending by number.',
    fields: (t) => ({
      entries: t.field({ type: [DidMappingEntryRef], resolve: (p) => p.entries }),
      nextCursor: t.exposeString('nextCursor', { nullable: true, description: 'Pass as `cursor` for the next page.' }),
    }),
  });

const ComplianceEnumRef = builder.objectRef<{ name: string; values: string[] }>('ComplianceEnum').implement({
  description: 'An enum of the compliance API (spec 2.10).',
  fields: (t) => ({ name: t.exposeString('name'), values: t.exposeStringList('values') }),
});

// Queries --------------------------------------------------------------------------------------------------------

builder.queryFields((t) => ({
  brands: t.connection(
    {
      type: BrandRef,
      description: 'Brands of the account, oldest first (Relay connection).',
      resolve: (_root, args, ctx) =>
        resolveCursorConnection<Promise<BrandDto[]>>({ args, toCursor: (b: BrandDto) => encodeCursor(b.id) }, (w) =>
          pageBrands(ctx.app, ctx.actor, { ...w, after: decodeCursor(w.after), before: decodeCursor(w.before) }),
        ),
    },
    { name: 'BrandConnection' },
    { name: 'BrandEdge' },
  ),
  brand: t.field({
    type: BrandRef,
    description: 'One brand; NOT_FOUND for another account’s.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getBrand(ctx.app, ctx.actor, String(args.id)),
  }),
  campaigns: t.connection(
    {
      type: CampaignRef,
      description: 'Campaigns of the account (or of one brand), oldest first (Relay connection).',
      args: { brandId: t.arg.id({ description: 'Only campaigns of this brand.' }) },
      resolve: (_root, args, ctx) =>
        resolveCursorConnection<Promise<CampaignDto[]>>(
          { args, toCursor: (c: CampaignDto) => encodeCursor(c.id) },
          (w) =>
            pageCampaigns(
              ctx.app,
              ctx.actor,
              { ...w, after: decodeCursor(w.after), before: decodeCursor(w.before) },
              { brandId: args.brandId ? String(args.brandId) : undefined },
            ),
        ),
    },
    { name: 'CampaignConnection' },
    { name: 'CampaignEdge' },
  ),
  campaign: t.field({
    type: CampaignRef,
    description: 'One campaign with carriers, sendable and blockingReasons.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getCampaign(ctx.app, ctx.actor, String(args.id)),
  }),
  phoneNumbers: t.connection(
    {
      type: PhoneNumberRef,
      description: 'Numbers provisioned in the account, ascending (Relay connection; REST GET /api/numbers).',
      resolve: (_root, args, ctx) =>
        resolveCursorConnection<Promise<NumberDto[]>>(
          { args, toCursor: (n: NumberDto) => encodeCursor(n.number) },
          (w) =>
            pageNumbers(ctx.app, ctx.actor, { ...w, after: decodeCursor(w.after), before: decodeCursor(w.before) }),
        ),
    },
    { name: 'PhoneNumberConnection' },
    { name: 'PhoneNumberEdge' },
  ),
  didMapping: t.field({
    type: DidMappingPageRef,
    description: 'Every number with its campaign, assigned or not (spec 2.5).',
    args: {
      limit: t.arg.int({ description: '1–1000, default 1000.' }),
      cursor: t.arg.string({ description: '`nextCursor` of the previous page.' }),
    },
    resolve: (_root, args, ctx) => didMapping(ctx.app, ctx.actor, withoutNulls(args)),
  }),
  complianceEnum: t.field({
    type: ComplianceEnumRef,
    description: 'Values of the vertical, entityType or usecase enum.',
    args: { name: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => getEnum(ctx.actor, args.name),
  }),
}));

// Mutations ------------------------------------------------------------------------------------------------------

const RegisterBrandInput = builder.inputType('RegisterBrandInput', {
  description: 'Brand fields (spec 2.1). PUBLIC_PROFIT needs stockSymbol and stockExchange.',
  fields: (t) => ({
    name: t.string({ required: true }),
    ein: t.string({ required: true, description: 'NN-NNNNNNN.' }),
    vertical: t.field({ type: VerticalEnum, required: true }),
    entityType: t.field({ type: EntityTypeEnum, required: true }),
    country: t.string({ description: 'ISO 3166-1 alpha-2; default US.' }),
    website: t.string(),
    email: t.string(),
    phone: t.string({ description: 'E.164.' }),
    stockSymbol: t.string(),
    stockExchange: t.field({ type: StockExchangeEnum }),
  }),
});

const UpdateBrandInput = builder.inputType('UpdateBrandInput', {
  description: 'All brand fields again (as registration); identity changes re-vet the brand.',
  fields: (t) => ({
    name: t.string({ required: true }),
    ein: t.string({ required: true }),
    vertical: t.field({ type: VerticalEnum, required: true }),
    entityType: t.field({ type: EntityTypeEnum, required: true }),
    country: t.string(),
    website: t.string(),
    email: t.string(),
    phone: t.string(),
    stockSymbol: t.string(),
    stockExchange: t.field({ type: StockExchangeEnum }),
  }),
});

const ApplyForVettingInput = builder.inputType('ApplyForVettingInput', {
  description: 'Vetting order options.',
  fields: (t) => ({
    evpId: t.field({ type: EvpIdEnum, description: 'Default AEGIS.' }),
    vettingClass: t.field({ type: VettingClassEnum, description: 'Default STANDARD.' }),
  }),
});

const ApplyForVettingPayload = builder
  .objectRef<{ vetting: VettingDto; created: boolean }>('ApplyForVettingPayload')
  .implement({
    description: 'The vetting order; `created` is false when a pending one was returned.',
    fields: (t) => ({
      vetting: t.field({ type: VettingRef, resolve: (p) => p.vetting }),
      created: t.exposeBoolean('created'),
    }),
  });

const CreateCampaignInput = builder.inputType('CreateCampaignInput', {
  description: 'Campaign fields (spec 2.3).',
  fields: (t) => ({
    brandId: t.id({ required: true }),
    usecase: t.string({ required: true }),
    description: t.string({ required: true, description: '40–4096 characters.' }),
    sampleMessages: t.stringList({ required: true, description: '2–5 items of 20–1024 characters.' }),
    subscriberOptIn: t.boolean({ required: true }),
    subscriberHelp: t.boolean({ required: true }),
    numberPool: t.boolean(),
  }),
});

const UpdateCampaignInput = builder.inputType('UpdateCampaignInput', {
  description: 'Fields to change; content changes trigger carrier re-review.',
  fields: (t) => ({
    description: t.string(),
    sampleMessages: t.stringList(),
    subscriberOptIn: t.boolean(),
    subscriberHelp: t.boolean(),
    numberPool: t.boolean(),
  }),
});

const NudgeCampaignInput = builder.inputType('NudgeCampaignInput', {
  description: 'Nudge of carrier review (TCR).',
  fields: (t) => ({
    nudgeIntent: t.field({ type: NudgeIntentEnum, required: true }),
    description: t.string({ description: 'At most 1024 characters.' }),
  }),
});

const DeleteCampaignPayload = builder
  .objectRef<{ id: string; unlinkedNumbers: string[] }>('DeleteCampaignPayload')
  .implement({
    description: 'The deleted campaign and the numbers it unlinked.',
    fields: (t) => ({ id: t.exposeID('id'), unlinkedNumbers: t.exposeStringList('unlinkedNumbers') }),
  });

const AssignNumbersPayload = builder.objectRef<AssignResult>('AssignNumbersPayload').implement({
  description: 'Result of an assignment.',
  fields: (t) => ({
    campaignId: t.exposeID('campaignId'),
    assigned: t.exposeStringList('assigned', { description: 'Linked by this call.' }),
    alreadyAssigned: t.exposeStringList('alreadyAssigned', { description: 'Already on this campaign.' }),
    numbers: t.exposeStringList('numbers', { description: 'Every number on the campaign now.' }),
  }),
});

const RemoveNumbersPayload = builder
  .objectRef<{ campaignId: string; removed: string[]; numbers: string[] }>('RemoveNumbersPayload')
  .implement({
    description: 'Result of a removal.',
    fields: (t) => ({
      campaignId: t.exposeID('campaignId'),
      removed: t.exposeStringList('removed'),
      numbers: t.exposeStringList('numbers', { description: 'Numbers still on the campaign.' }),
    }),
  });

builder.mutationFields((t) => ({
  registerBrand: t.field({
    type: BrandRef,
    description: 'Registers a brand (status PENDING).',
    args: { input: t.arg({ type: RegisterBrandInput, required: true }) },
    resolve: (_root, args, ctx) => registerBrand(ctx.app, ctx.actor, withoutNulls(args.input)),
  }),
  updateBrand: t.field({
    type: BrandRef,
    description: 'Replaces a brand’s fields; identity changes send it back to PENDING.',
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateBrandInput, required: true }) },
    resolve: (_root, args, ctx) => updateBrand(ctx.app, ctx.actor, String(args.id), withoutNulls(args.input)),
  }),
  deleteBrand: t.field({
    type: 'ID',
    description: 'Deletes a brand without campaigns; returns its id. BRAND_HAS_CAMPAIGNS otherwise.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await deleteBrand(ctx.app, ctx.actor, String(args.id))).id,
  }),
  revetBrand: t.field({
    type: BrandRef,
    description: 'Resubmits the brand to the identity check.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => revetBrand(ctx.app, ctx.actor, String(args.id)),
  }),
  applyForVetting: t.field({
    type: ApplyForVettingPayload,
    description: 'Orders an external vetting; a pending one is returned instead.',
    args: { brandId: t.arg.id({ required: true }), input: t.arg({ type: ApplyForVettingInput }) },
    resolve: (_root, args, ctx) => applyForVetting(ctx.app, ctx.actor, String(args.brandId), withoutNulls(args.input)),
  }),
  createCampaign: t.field({
    type: CampaignRef,
    description: 'Creates a campaign under an ACTIVE brand (status PENDING).',
    args: { input: t.arg({ type: CreateCampaignInput, required: true }) },
    resolve: (_root, args, ctx) => createCampaign(ctx.app, ctx.actor, withoutNulls(args.input)),
  }),
  updateCampaign: t.field({
    type: CampaignRef,
    description: 'Changes campaign details; content changes trigger carrier re-review.',
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateCampaignInput, required: true }) },
    resolve: (_root, args, ctx) => updateCampaign(ctx.app, ctx.actor, String(args.id), withoutNulls(args.input)),
  }),
  deleteCampaign: t.field({
    type: DeleteCampaignPayload,
    description: 'Deletes a campaign and unlinks its numbers.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => deleteCampaign(ctx.app, ctx.actor, String(args.id)),
  }),
  nudgeCampaign: t.field({
    type: CampaignRef,
    description: 'Nudges pending carrier review or appeals rejections.',
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: NudgeCampaignInput, required: true }) },
    resolve: (_root, args, ctx) => nudgeCampaign(ctx.app, ctx.actor, String(args.id), withoutNulls(args.input)),
  }),
  expediteCampaign: t.field({
    type: CampaignRef,
    description: 'Requests expedited review of every pending carrier.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => expediteCampaign(ctx.app, ctx.actor, String(args.id)),
  }),
  assignNumbers: t.field({
    type: AssignNumbersPayload,
    description: 'Assigns provisioned numbers to a campaign, all or nothing.',
    args: { campaignId: t.arg.id({ required: true }), numbers: t.arg.stringList({ required: true }) },
    resolve: (_root, args, ctx) =>
      assignNumbers(ctx.app, ctx.actor, String(args.campaignId), { numbers: args.numbers }),
  }),
  removeNumbers: t.field({
    type: RemoveNumbersPayload,
    description: 'Unlinks numbers from a campaign, all or nothing.',
    args: { campaignId: t.arg.id({ required: true }), numbers: t.arg.stringList({ required: true }) },
    resolve: (_root, args, ctx) =>
      removeNumbers(ctx.app, ctx.actor, String(args.campaignId), { numbers: args.numbers }),
  }),
  provisionNumbers: t.field({
    type: [PhoneNumberRef],
    description: 'Provisions E.164 numbers in the account, all or nothing.',
    args: { numbers: t.arg.stringList({ required: true }) },
    resolve: async (_root, args, ctx) =>
      (await provisionNumbers(ctx.app, ctx.actor, { numbers: args.numbers })).numbers,
  }),
  releaseNumber: t.field({
    type: 'String',
    description: 'Releases a number that is not assigned; returns it.',
    args: { number: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => (await releaseNumber(ctx.app, ctx.actor, args.number)).number,
  }),
}));
