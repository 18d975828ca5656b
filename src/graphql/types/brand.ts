// The Brand noun (spec 2.1, 2.2): its type with feedback, vettings and qualification, its queries and mutations.

import { resolveCursorConnection } from '@pothos/plugin-relay';
import {
  applyForVetting,
  type BrandFeedback,
  type BrandQualification,
  type CarrierQualification,
  deleteBrand,
  getBrand,
  type MessageRequirements,
  pageBrands,
  qualification,
  qualifyBrand,
  qualifyQuery,
  registerBrand,
  revetBrand,
  type UsecaseQualification,
  updateBrand,
} from '../../domain/compliance/brand.service.js';
import {
  brandFeedbackOf,
  brandRowsByIds,
  countBrands,
  vettingsByBrandIds,
} from '../../domain/compliance/compliance.batch.js';
import { type BrandDto, brandShape, type VettingDto, vettingShape } from '../../domain/compliance/compliance.dto.js';
import {
  brandFields,
  brandInput,
  brandUpdateInput,
  vettingApplyInput,
} from '../../domain/compliance/compliance.schemas.js';
import { brandHistory, historyQuery, type Transition } from '../../domain/compliance/history.service.js';
import type { FeedbackItem } from '../../domain/compliance/registry.port.js';
import type { BrandThroughput, CarrierLimit } from '../../domain/compliance/throughput.rules.js';
import { NotFoundError } from '../../domain/errors.js';
import { decodeCursor, encodeCursor } from '../../domain/paging.js';
import { builder } from '../builder.js';
import { TOTAL_COUNT_DESCRIPTION, totalCountOf, withTotalCount } from '../connections.js';
import { parseArgs } from '../parse-args.js';
import { type Change, changesOf, orNull, payloadString, topicId } from '../subscriptions.js';
import {
  AltBusinessIdTypeEnum,
  BrandRelationshipEnum,
  BrandStatusEnum,
  EntityTypeEnum,
  EvpIdEnum,
  FeedbackCategoryEnum,
  IdentityStatusEnum,
  StockExchangeEnum,
  ThroughputTierEnum,
  VerticalEnum,
  VettingClassEnum,
  VettingStatusEnum,
} from './compliance-enums.js';
import { shapeFields, shapeInputFields } from './compliance-shape.js';
import { NodeRef } from './node.js';

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
  fields: (t) =>
    shapeFields(t, vettingShape, {
      enums: { evpId: EvpIdEnum, vettingClass: VettingClassEnum, status: VettingStatusEnum },
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
    subscriberOptOutRequired: t.exposeBoolean('subscriberOptOutRequired'),
    subscriberHelpRequired: t.exposeBoolean('subscriberHelpRequired'),
    embeddedLinksAllowed: t.exposeBoolean('embeddedLinksAllowed'),
    embeddedPhoneAllowed: t.exposeBoolean('embeddedPhoneAllowed'),
    dailyCap: t.exposeInt('dailyCap', { nullable: true, description: 'T-Mobile messages/day per brand.' }),
    messagesPerMinute: t.exposeInt('messagesPerMinute', { nullable: true, description: 'AT&T per campaign.' }),
    messageClass: t.exposeString('messageClass', { nullable: true, description: 'AT&T message class.' }),
  }),
});

const MessageRequirementsRef = builder.objectRef<MessageRequirements>('MessageRequirements').implement({
  description: 'What the opt-in, opt-out and HELP replies and the samples must carry (codes the lint checks).',
  fields: (t) => ({
    optinMessage: t.exposeStringList('optinMessage'),
    optoutMessage: t.exposeStringList('optoutMessage'),
    helpMessage: t.exposeStringList('helpMessage'),
    sampleMessages: t.exposeStringList('sampleMessages'),
  }),
});

/** One carrier's effective limit (throughput.rules.ts); shared with Campaign. */
export const CarrierLimitRef = builder.objectRef<CarrierLimit>('CarrierLimit').implement({
  description: 'One carrier’s effective throughput limit; null where the carrier publishes none at this level.',
  fields: (t) => ({
    networkId: t.exposeInt('networkId'),
    carrier: t.exposeString('carrier'),
    dailyCap: t.exposeInt('dailyCap', { nullable: true, description: 'Messages per day (T-Mobile: per brand).' }),
    messagesPerMinute: t.exposeInt('messagesPerMinute', {
      nullable: true,
      description: 'Messages per minute (AT&T: per campaign).',
    }),
    messageClass: t.exposeString('messageClass', { nullable: true, description: 'AT&T message class.' }),
    note: t.exposeString('note', { nullable: true }),
  }),
});

const BrandThroughputRef = builder.objectRef<BrandThroughput>('BrandThroughput').implement({
  description: 'The brand’s throughput tier (from its vetting score) and brand-level carrier limits.',
  fields: (t) => ({
    tier: t.field({ type: ThroughputTierEnum, resolve: (b) => b.tier as never }),
    vettingScore: t.exposeInt('vettingScore', { nullable: true }),
    carriers: t.field({ type: [CarrierLimitRef], resolve: (b) => b.carriers }),
  }),
});

/** One status transition of a brand or campaign (history.service.ts); shared with Campaign. */
export const TransitionRef = builder.objectRef<Transition>('StatusTransition').implement({
  description: 'A status transition read from the event log: from, to, cause, carrier, at.',
  fields: (t) => ({
    eventId: t.exposeID('eventId', { description: 'Event log id (the SSE id).' }),
    at: t.field({ type: 'DateTime', resolve: (x) => x.at }),
    field: t.exposeString('field', { description: 'status, identityStatus or carrierStatus.' }),
    from: t.exposeString('from', { nullable: true }),
    to: t.exposeString('to'),
    cause: t.exposeString('cause'),
    carrierNetworkId: t.int({ nullable: true, resolve: (x) => x.carrier?.networkId ?? null }),
    carrier: t.string({ nullable: true, description: 'Carrier name.', resolve: (x) => x.carrier?.name ?? null }),
    reason: t.exposeString('reason', { nullable: true }),
    code: t.exposeString('code', { nullable: true }),
  }),
});

/** A page of transitions; shared with Campaign. */
export const HistoryPageRef = builder
  .objectRef<{ transitions: Transition[]; nextCursor: string | null }>('StatusHistoryPage')
  .implement({
    description: 'A page of a resource’s history, oldest first (REST …/history).',
    fields: (t) => ({
      transitions: t.field({ type: [TransitionRef], resolve: (p) => p.transitions }),
      nextCursor: t.exposeString('nextCursor', { nullable: true, description: 'Pass as `cursor` for the next page.' }),
    }),
  });

const UsecaseQualificationRef = builder.objectRef<UsecaseQualification>('UsecaseQualification').implement({
  description: 'Whether the brand may use one use case, with per-carrier terms.',
  fields: (t) => ({
    usecase: t.exposeString('usecase'),
    usecaseClass: t.exposeString('usecaseClass', { description: 'STANDARD or SPECIAL.' }),
    qualifies: t.exposeBoolean('qualifies'),
    reason: t.exposeString('reason', { nullable: true, description: 'Why not, when it does not qualify.' }),
    vettingRequired: t.exposeBoolean('vettingRequired'),
    minSubUsecases: t.exposeInt('minSubUsecases'),
    maxSubUsecases: t.exposeInt('maxSubUsecases'),
    messageRequirements: t.field({ type: MessageRequirementsRef, resolve: (u) => u.messageRequirements }),
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
    throughputTier: t.field({ type: ThroughputTierEnum, resolve: (q) => q.throughputTier as never }),
    usecases: t.field({ type: [UsecaseQualificationRef], resolve: (q) => q.usecases }),
  }),
});

/** Brand: every field of the domain's brandShape (compliance.dto.ts), plus history, feedback, vettings, qualification. */
export const BrandRef = builder.objectRef<BrandDto>('Brand').implement({
  interfaces: [NodeRef],
  description: 'A business brand registered for 10DLC (spec 2.1).',
  fields: (t) =>
    shapeFields(t, brandShape, {
      enums: {
        vertical: VerticalEnum,
        entityType: EntityTypeEnum,
        stockExchange: StockExchangeEnum,
        brandRelationship: BrandRelationshipEnum,
        altBusinessIdType: AltBusinessIdTypeEnum,
        status: BrandStatusEnum,
        identityStatus: IdentityStatusEnum,
      },
      fields: {
        throughput: t.field({ type: BrandThroughputRef, resolve: (b) => b.throughput }),
        history: t.field({
          type: HistoryPageRef,
          description: 'Status and identity transitions from the event log (REST …/history).',
          args: { limit: t.arg.int(), cursor: t.arg.string() },
          resolve: (b, args, ctx) =>
            brandHistory(ctx.app, ctx.actor, b.id, parseArgs(ctx, 'compliance', historyQuery, args)),
        }),
        feedback: t.loadable({
          type: BrandFeedbackRef,
          description: 'Registry feedback: rejection reasons and required corrections.',
          load: async (ids: string[], ctx) =>
            (await brandRowsByIds(ctx.app, ctx.actor, ids)).map((b, i) =>
              b ? brandFeedbackOf(b) : new NotFoundError('brand', ids[i]!),
            ),
          resolve: (b) => b.id,
        }),
        vettings: t.loadableList({
          type: VettingRef,
          description: 'External vetting records, newest first.',
          load: (ids: string[], ctx) => vettingsByBrandIds(ctx.app, ctx.actor, ids),
          resolve: (b) => b.id,
        }),
        qualification: t.loadable({
          type: BrandQualificationRef,
          description: 'Whether the brand qualifies and which use cases it may use (REST …/qualify).',
          load: async (ids: string[], ctx) =>
            (await brandRowsByIds(ctx.app, ctx.actor, ids)).map((b, i) =>
              b ? qualification(b) : new NotFoundError('brand', ids[i]!),
            ),
          resolve: (b) => b.id,
        }),
      },
    }),
});

builder.queryFields((t) => ({
  brands: t.connection(
    {
      type: BrandRef,
      description: 'Brands of the account, oldest first (Relay connection).',
      resolve: (_root, args, ctx) =>
        withTotalCount(
          resolveCursorConnection<Promise<BrandDto[]>>({ args, toCursor: (b: BrandDto) => encodeCursor(b.id) }, (w) =>
            pageBrands(ctx.app, ctx.actor, { ...w, after: decodeCursor(w.after), before: decodeCursor(w.before) }),
          ),
          () => countBrands(ctx.app, ctx.actor),
        ),
    },
    {
      name: 'BrandConnection',
      fields: (tc) => ({
        totalCount: tc.int({ description: TOTAL_COUNT_DESCRIPTION, resolve: (c) => totalCountOf(c) }),
      }),
    },
    { name: 'BrandEdge' },
  ),
  brandHistory: t.field({
    type: HistoryPageRef,
    description: 'A brand’s transitions, also after it was deleted (REST GET /compliance/brands/{id}/history).',
    args: { id: t.arg.id({ required: true }), limit: t.arg.int(), cursor: t.arg.string() },
    resolve: (_root, args, ctx) =>
      brandHistory(
        ctx.app,
        ctx.actor,
        String(args.id),
        parseArgs(ctx, 'compliance', historyQuery, { limit: args.limit, cursor: args.cursor }),
      ),
  }),
  brandQualification: t.field({
    type: BrandQualificationRef,
    description:
      'REST GET /compliance/brands/{id}/qualify[?usecase=]: per use case and carrier (TCR campaign builder).',
    args: { brandId: t.arg.id({ required: true }), usecase: t.arg.string() },
    resolve: (_root, args, ctx) =>
      qualifyBrand(
        ctx.app,
        ctx.actor,
        String(args.brandId),
        parseArgs(ctx, 'compliance', qualifyQuery, { usecase: args.usecase }),
      ),
  }),
  brand: t.field({
    type: BrandRef,
    description: 'One brand; NOT_FOUND for another account’s.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getBrand(ctx.app, ctx.actor, String(args.id)),
  }),
}));

/** The GraphQL enums of the brand body's enum fields. */
const BRAND_INPUT_ENUMS = {
  vertical: VerticalEnum,
  entityType: EntityTypeEnum,
  stockExchange: StockExchangeEnum,
  brandRelationship: BrandRelationshipEnum,
  altBusinessIdType: AltBusinessIdTypeEnum,
};

const CreateBrandInput = builder.inputType('CreateBrandInput', {
  description:
    'Brand fields (spec 2.1, TCR). PUBLIC_PROFIT needs stockSymbol, stockExchange and businessContactEmail; SOLE_PROPRIETOR needs firstName, lastName, mobilePhone and referenceId.',
  fields: (t) => shapeInputFields(t, brandFields, { enums: BRAND_INPUT_ENUMS }),
});

const UpdateBrandInput = builder.inputType('UpdateBrandInput', {
  description: 'The brand to change and all its fields again (as registration); identity changes re-vet the brand.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'The brand.' }),
    ...shapeInputFields(t, brandFields, { enums: BRAND_INPUT_ENUMS }),
  }),
});

const BrandIdInput = (name: string, description: string) =>
  builder.inputType(name, {
    description,
    fields: (t) => ({ id: t.id({ required: true, description: 'The brand.' }) }),
  });
const DeleteBrandInput = BrandIdInput('DeleteBrandInput', 'The brand to delete (it must have no campaigns).');
const RevetBrandInput = BrandIdInput('RevetBrandInput', 'The brand to resubmit to the identity check.');

const ApplyForBrandVettingInput = builder.inputType('ApplyForBrandVettingInput', {
  description: 'The brand and the vetting order’s options.',
  fields: (t) => ({
    brandId: t.id({ required: true }),
    evpId: t.field({ type: EvpIdEnum, description: 'Default AEGIS.' }),
    vettingClass: t.field({ type: VettingClassEnum, description: 'Default STANDARD.' }),
  }),
});

/** `<Verb>BrandPayload { brand }`: the brand after the change. */
const brandPayload = (name: string, description: string) =>
  builder.objectRef<{ brand: BrandDto }>(name).implement({
    description,
    fields: (t) => ({ brand: t.field({ type: BrandRef, resolve: (p) => p.brand }) }),
  });
const CreateBrandPayload = brandPayload('CreateBrandPayload', 'The registered brand (status PENDING).');
const UpdateBrandPayload = brandPayload('UpdateBrandPayload', 'The brand after the change.');
const RevetBrandPayload = brandPayload('RevetBrandPayload', 'The brand, back to the identity check.');

const DeleteBrandPayload = builder.objectRef<{ deletedBrandId: string }>('DeleteBrandPayload').implement({
  description: 'The id of the deleted brand.',
  fields: (t) => ({ deletedBrandId: t.exposeID('deletedBrandId') }),
});

const ApplyForBrandVettingPayload = builder
  .objectRef<{ vetting: VettingDto; created: boolean }>('ApplyForBrandVettingPayload')
  .implement({
    description: 'The vetting order; `created` is false when a pending one was returned.',
    fields: (t) => ({
      vetting: t.field({ type: VettingRef, resolve: (p) => p.vetting }),
      created: t.exposeBoolean('created'),
    }),
  });

builder.mutationFields((t) => ({
  createBrand: t.field({
    type: CreateBrandPayload,
    errors: {},
    description: 'Registers a brand (status PENDING); REST POST /compliance/brands.',
    args: { input: t.arg({ type: CreateBrandInput, required: true }) },
    resolve: async (_root, args, ctx) => ({
      brand: await registerBrand(ctx.app, ctx.actor, parseArgs(ctx, 'compliance', brandInput, args.input)),
    }),
  }),
  updateBrand: t.field({
    type: UpdateBrandPayload,
    errors: {},
    description: 'Replaces a brand’s fields; identity changes send it back to PENDING.',
    args: { input: t.arg({ type: UpdateBrandInput, required: true }) },
    resolve: async (_root, { input: { id, ...input } }, ctx) => ({
      brand: await updateBrand(ctx.app, ctx.actor, String(id), parseArgs(ctx, 'compliance', brandUpdateInput, input)),
    }),
  }),
  deleteBrand: t.field({
    type: DeleteBrandPayload,
    errors: {},
    description: 'Deletes a brand without campaigns (BRAND_HAS_CAMPAIGNS otherwise).',
    args: { input: t.arg({ type: DeleteBrandInput, required: true }) },
    resolve: async (_root, args, ctx) => ({
      deletedBrandId: (await deleteBrand(ctx.app, ctx.actor, String(args.input.id))).id,
    }),
  }),
  revetBrand: t.field({
    type: RevetBrandPayload,
    errors: {},
    description: 'Resubmits the brand to the identity check.',
    args: { input: t.arg({ type: RevetBrandInput, required: true }) },
    resolve: async (_root, args, ctx) => ({ brand: await revetBrand(ctx.app, ctx.actor, String(args.input.id)) }),
  }),
  applyForBrandVetting: t.field({
    type: ApplyForBrandVettingPayload,
    errors: {},
    description: 'Orders an external vetting; a pending one is returned instead.',
    args: { input: t.arg({ type: ApplyForBrandVettingInput, required: true }) },
    resolve: (_root, { input: { brandId, ...input } }, ctx) =>
      applyForVetting(ctx.app, ctx.actor, String(brandId), parseArgs(ctx, 'compliance', vettingApplyInput, input)),
  }),
}));

// Subscriptions ----------------------------------------------------------------------------------------------------

const BrandChangeRef = builder.objectRef<Change<BrandDto>>('BrandChange').implement({
  description: 'A change of a brand: the event that caused it and the brand re-read after it.',
  fields: (t) => ({
    eventId: t.exposeString('eventId', { description: 'Event id; pass it as `lastEventId` to resume after it.' }),
    eventType: t.exposeString('eventType', {
      description: 'e.g. 10dlc.brand.status_changed, 10dlc.vetting.completed.',
    }),
    timestamp: t.exposeString('timestamp', { description: 'When the event was recorded (ISO 8601 UTC).' }),
    brand: t.field({
      type: BrandRef,
      nullable: true,
      description: 'The brand now; null once deleted.',
      resolve: (c) => c.node,
    }),
  }),
});

builder.subscriptionField('brandUpdated', (t) =>
  t.field({
    type: BrandChangeRef,
    description:
      'Changes of one brand, or of every brand of the account when `id` is omitted (registration, updates, identity ' +
      'decision, vetting, deletion), each with the brand as it is now (scopes compliance and events:read). With ' +
      '`lastEventId`, first the changes after it (replay), then live ones, in event order, on every instance (Redis). ' +
      'NOT_FOUND for another account’s brand.',
    args: {
      id: t.arg.id({ description: 'The brand; omitted: every brand of the account.' }),
      lastEventId: t.arg.string({ description: 'Resume after this event id.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const id = args.id === null || args.id === undefined ? undefined : String(args.id);
      if (id) await getBrand(ctx.app, ctx.actor, id);
      return changesOf(ctx, {
        channels: ['10dlc'],
        topic: ['brand', topicId(id)],
        lastEventId: args.lastEventId,
        matches: (e) => {
          const brandId = payloadString(e, 'brandId');
          return brandId !== undefined && (id === undefined || brandId === id);
        },
        load: (e) => orNull(getBrand(ctx.app, ctx.actor, payloadString(e, 'brandId')!)),
      });
    },
    resolve: (change) => change,
  }),
);
