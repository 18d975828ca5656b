// The Campaign noun (spec 2.3, 2.4): its type with carriers, readiness, brand and numbers, its queries and mutations.

import { resolveCursorConnection } from '@pothos/plugin-relay';
import { getBrand } from '../../domain/compliance/brand.service.js';
import type { CarrierPrediction, LintFinding } from '../../domain/compliance/campaign.lint.js';
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
import { type LintReport, lintCampaign } from '../../domain/compliance/campaign-lint.service.js';
import { brandsByIds, countCampaigns, numbersByCampaignIds } from '../../domain/compliance/compliance.batch.js';
import {
  type CampaignDto,
  type CarrierDto,
  campaignShape,
  carrierShape,
} from '../../domain/compliance/compliance.dto.js';
import {
  campaignFields,
  campaignInput,
  campaignUpdateInput,
  nudgeInput,
} from '../../domain/compliance/compliance.schemas.js';
import { campaignHistory, historyQuery } from '../../domain/compliance/history.service.js';
import type { AssignedNumberDto } from '../../domain/compliance/number.service.js';
import type { CampaignThroughput } from '../../domain/compliance/throughput.rules.js';
import { NotFoundError } from '../../domain/errors.js';
import { decodeCursor, encodeCursor } from '../../domain/paging.js';
import { builder } from '../builder.js';
import { TOTAL_COUNT_DESCRIPTION, totalCountOf, withTotalCount } from '../connections.js';
import { parseArgs } from '../parse-args.js';
import { type Change, changesOf, orNull, payloadString, topicId } from '../subscriptions.js';
import { BrandRef, CarrierLimitRef, HistoryPageRef } from './brand.js';
import {
  AssignmentStatusEnum,
  CampaignStatusEnum,
  CarrierStatusEnum,
  DidStateEnum,
  NudgeIntentEnum,
  ThroughputTierEnum,
} from './compliance-enums.js';
import { shapeFields, shapeInputFields } from './compliance-shape.js';
import { NodeRef } from './node.js';

const CarrierApprovalRef = builder.objectRef<CarrierDto>('CarrierApproval').implement({
  description: 'One carrier’s review of a campaign (spec 2.4).',
  fields: (t) => shapeFields(t, carrierShape, { enums: { status: CarrierStatusEnum } }),
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
  description: 'A number assigned to a campaign, with its lifecycle.',
  fields: (t) => ({
    number: t.exposeString('number', { description: 'E.164.' }),
    assignedAt: t.field({ type: 'DateTime', resolve: (n) => n.assignedAt }),
    state: t.field({ type: DidStateEnum, resolve: (n) => n.state as never }),
    assignmentStatus: t.field({
      type: AssignmentStatusEnum,
      nullable: true,
      description: 'Null on no campaign.',
      resolve: (n) => n.assignmentStatus as never,
    }),
  }),
});

const CampaignThroughputRef = builder.objectRef<CampaignThroughput>('CampaignThroughput').implement({
  description: 'The campaign’s effective per-carrier limits: AT&T class and TPM, T-Mobile’s brand cap.',
  fields: (t) => ({
    tier: t.field({ type: ThroughputTierEnum, resolve: (c) => c.tier as never }),
    messageClass: t.exposeString('messageClass', { description: 'AT&T message class (A–F, T, SP).' }),
    carriers: t.field({ type: [CarrierLimitRef], resolve: (c) => c.carriers }),
  }),
});

const LintFindingRef = builder.objectRef<LintFinding>('LintFinding').implement({
  description: 'A likely rejection cause (error) or a TCR recommendation (warning), with the field and a fix.',
  fields: (t) => ({
    code: t.exposeString('code'),
    severity: t.exposeString('severity', { description: 'error or warning.' }),
    field: t.exposeString('field'),
    message: t.exposeString('message'),
    fix: t.exposeString('fix'),
    networkIds: t.exposeIntList('networkIds', { description: 'Carriers that reject for it.' }),
  }),
});

const CarrierPredictionRef = builder.objectRef<CarrierPrediction>('CarrierPrediction').implement({
  description: 'A carrier’s predicted decision (the sandbox carriers decide exactly so).',
  fields: (t) => ({
    networkId: t.exposeInt('networkId'),
    carrier: t.exposeString('carrier'),
    wouldApprove: t.exposeBoolean('wouldApprove'),
    rejectionCode: t.exposeString('rejectionCode', { nullable: true }),
    rejectionReason: t.exposeString('rejectionReason', { nullable: true }),
  }),
});

const LintReportRef = builder.objectRef<LintReport>('CampaignLintReport').implement({
  description: 'Pre-submission lint of a campaign (REST POST /compliance/campaigns/lint).',
  fields: (t) => ({
    passes: t.exposeBoolean('passes', { description: 'No error: every carrier would approve.' }),
    errorCount: t.exposeInt('errorCount'),
    warningCount: t.exposeInt('warningCount'),
    findings: t.field({ type: [LintFindingRef], resolve: (r) => r.findings }),
    carriers: t.field({ type: [CarrierPredictionRef], resolve: (r) => r.carriers }),
  }),
});

export const CampaignRef = builder.objectRef<CampaignDto>('Campaign').implement({
  interfaces: [NodeRef],
  description: 'A 10DLC campaign (spec 2.3) with its carrier reviews and readiness.',
  fields: (t) =>
    shapeFields(t, campaignShape, {
      enums: { status: CampaignStatusEnum },
      fields: {
        throughput: t.field({ type: CampaignThroughputRef, resolve: (c) => c.throughput }),
        carriers: t.field({ type: [CarrierApprovalRef], description: 'Carrier reviews.', resolve: (c) => c.carriers }),
        blockingReasons: t.field({ type: [BlockingReasonRef], resolve: (c) => c.blockingReasons }),
        history: t.field({
          type: HistoryPageRef,
          description: 'Status and per-carrier transitions from the event log (REST …/history).',
          args: { limit: t.arg.int(), cursor: t.arg.string() },
          resolve: (c, args, ctx) =>
            campaignHistory(ctx.app, ctx.actor, c.id, parseArgs(ctx, 'compliance', historyQuery, args)),
        }),
        brand: t.loadable({
          type: BrandRef,
          description: 'The campaign’s brand.',
          load: async (ids: string[], ctx) =>
            (await brandsByIds(ctx.app, ctx.actor, ids)).map((b, i) => b ?? new NotFoundError('brand', ids[i]!)),
          resolve: (c) => c.brandId,
        }),
        numbers: t.loadableList({
          type: AssignedNumberRef,
          description: 'Numbers assigned to the campaign, ascending.',
          load: (ids: string[], ctx) => numbersByCampaignIds(ctx.app, ctx.actor, ids),
          resolve: (c) => c.id,
        }),
      },
    }),
});

builder.queryFields((t) => ({
  campaigns: t.connection(
    {
      type: CampaignRef,
      description: 'Campaigns of the account (or of one brand), oldest first (Relay connection).',
      args: { brandId: t.arg.id({ description: 'Only campaigns of this brand.' }) },
      resolve: (_root, args, ctx) =>
        withTotalCount(
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
          () => countCampaigns(ctx.app, ctx.actor, { brandId: args.brandId ? String(args.brandId) : undefined }),
        ),
    },
    {
      name: 'CampaignConnection',
      fields: (tc) => ({
        totalCount: tc.int({ description: TOTAL_COUNT_DESCRIPTION, resolve: (c) => totalCountOf(c) }),
      }),
    },
    { name: 'CampaignEdge' },
  ),
  lintCampaign: t.field({
    type: LintReportRef,
    description:
      'Pre-submission lint: every likely rejection cause of a campaign body (the fields of CreateCampaignInput, complete or not, as JSON). Writes nothing.',
    args: { input: t.arg({ type: 'JSON', required: true }) },
    resolve: (_root, args, ctx) => lintCampaign(ctx.app, ctx.actor, args.input),
  }),
  campaignHistory: t.field({
    type: HistoryPageRef,
    description: 'A campaign’s transitions, also after it was deleted (REST GET /compliance/campaigns/{id}/history).',
    args: { id: t.arg.id({ required: true }), limit: t.arg.int(), cursor: t.arg.string() },
    resolve: (_root, args, ctx) =>
      campaignHistory(
        ctx.app,
        ctx.actor,
        String(args.id),
        parseArgs(ctx, 'compliance', historyQuery, { limit: args.limit, cursor: args.cursor }),
      ),
  }),
  campaign: t.field({
    type: CampaignRef,
    description: 'One campaign with carriers, sendable and blockingReasons.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getCampaign(ctx.app, ctx.actor, String(args.id)),
  }),
}));

const CreateCampaignInput = builder.inputType('CreateCampaignInput', {
  description: 'Campaign fields (spec 2.3).',
  fields: (t) => shapeInputFields(t, campaignFields, { ids: ['brandId'] }),
});

const UpdateCampaignInput = builder.inputType('UpdateCampaignInput', {
  description: 'The campaign and the fields to change; content changes trigger carrier re-review.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'The campaign.' }),
    // brandId and usecase are fixed at creation (REST accepts them unchanged; GraphQL leaves them out).
    ...shapeInputFields(t, campaignFields, { omit: ['brandId', 'usecase'], partial: true }),
  }),
});

const NudgeCampaignInput = builder.inputType('NudgeCampaignInput', {
  description: 'Nudge of carrier review (TCR).',
  fields: (t) => ({
    id: t.id({ required: true, description: 'The campaign.' }),
    nudgeIntent: t.field({
      type: NudgeIntentEnum,
      description: 'REVIEW when omitted (spec 4.2: a nudge sends nothing).',
    }),
    description: t.string({ description: 'At most 1024 characters.' }),
  }),
});

const campaignIdInput = (name: string, description: string) =>
  builder.inputType(name, {
    description,
    fields: (t) => ({ id: t.id({ required: true, description: 'The campaign.' }) }),
  });
const DeleteCampaignInput = campaignIdInput('DeleteCampaignInput', 'The campaign to delete.');
const ExpediteCampaignInput = campaignIdInput(
  'ExpediteCampaignInput',
  'The campaign whose pending carriers to expedite.',
);

/** `<Verb>CampaignPayload { campaign }`: the campaign after the change. */
const campaignPayload = (name: string, description: string) =>
  builder.objectRef<{ campaign: CampaignDto }>(name).implement({
    description,
    fields: (t) => ({ campaign: t.field({ type: CampaignRef, resolve: (p) => p.campaign }) }),
  });
const CreateCampaignPayload = campaignPayload('CreateCampaignPayload', 'The new campaign (status PENDING).');
const UpdateCampaignPayload = campaignPayload('UpdateCampaignPayload', 'The campaign after the change.');
const NudgeCampaignPayload = campaignPayload('NudgeCampaignPayload', 'The campaign after the nudge.');
const ExpediteCampaignPayload = campaignPayload('ExpediteCampaignPayload', 'The campaign after the request.');

const DeleteCampaignPayload = builder
  .objectRef<{ id: string; unlinkedNumbers: string[] }>('DeleteCampaignPayload')
  .implement({
    description: 'The deleted campaign’s id and the numbers it unlinked.',
    fields: (t) => ({
      deletedCampaignId: t.exposeID('id'),
      unlinkedNumbers: t.exposeStringList('unlinkedNumbers'),
    }),
  });

builder.mutationFields((t) => ({
  createCampaign: t.field({
    type: CreateCampaignPayload,
    errors: {},
    description: 'Creates a campaign under an ACTIVE brand (status PENDING).',
    args: { input: t.arg({ type: CreateCampaignInput, required: true }) },
    resolve: async (_root, args, ctx) => ({
      campaign: await createCampaign(ctx.app, ctx.actor, parseArgs(ctx, 'compliance', campaignInput, args.input)),
    }),
  }),
  updateCampaign: t.field({
    type: UpdateCampaignPayload,
    errors: {},
    description: 'Changes campaign details; content changes trigger carrier re-review.',
    args: { input: t.arg({ type: UpdateCampaignInput, required: true }) },
    resolve: async (_root, { input: { id, ...input } }, ctx) => ({
      campaign: await updateCampaign(
        ctx.app,
        ctx.actor,
        String(id),
        parseArgs(ctx, 'compliance', campaignUpdateInput, input),
      ),
    }),
  }),
  deleteCampaign: t.field({
    type: DeleteCampaignPayload,
    errors: {},
    description: 'Deletes a campaign and unlinks its numbers.',
    args: { input: t.arg({ type: DeleteCampaignInput, required: true }) },
    resolve: (_root, args, ctx) => deleteCampaign(ctx.app, ctx.actor, String(args.input.id)),
  }),
  nudgeCampaign: t.field({
    type: NudgeCampaignPayload,
    errors: {},
    description: 'Nudges pending carrier review or appeals rejections.',
    args: { input: t.arg({ type: NudgeCampaignInput, required: true }) },
    resolve: async (_root, { input: { id, ...input } }, ctx) => ({
      campaign: await nudgeCampaign(ctx.app, ctx.actor, String(id), parseArgs(ctx, 'compliance', nudgeInput, input)),
    }),
  }),
  expediteCampaign: t.field({
    type: ExpediteCampaignPayload,
    errors: {},
    description: 'Requests expedited review of every pending carrier.',
    args: { input: t.arg({ type: ExpediteCampaignInput, required: true }) },
    resolve: async (_root, args, ctx) => ({
      campaign: await expediteCampaign(ctx.app, ctx.actor, String(args.input.id)),
    }),
  }),
}));

// Subscriptions ----------------------------------------------------------------------------------------------------

const CampaignChangeRef = builder.objectRef<Change<CampaignDto>>('CampaignChange').implement({
  description:
    'A change of a campaign: the event that caused it and the campaign (status, carriers, sendable) after it.',
  fields: (t) => ({
    eventId: t.exposeString('eventId', { description: 'Event id; pass it as `lastEventId` to resume after it.' }),
    eventType: t.exposeString('eventType', {
      description: 'e.g. 10dlc.carrier.status_changed, 10dlc.campaign.status_changed, 10dlc.numbers.assigned.',
    }),
    timestamp: t.exposeString('timestamp', { description: 'When the event was recorded (ISO 8601 UTC).' }),
    campaign: t.field({
      type: CampaignRef,
      nullable: true,
      description: 'The campaign now; null once deleted.',
      resolve: (c) => c.node,
    }),
  }),
});

builder.subscriptionField('campaignUpdated', (t) =>
  t.field({
    type: CampaignChangeRef,
    description:
      'Changes of one campaign, of every campaign of a brand (`brandId`), or of every campaign of the account (both ' +
      'omitted): carrier decisions, status, readiness (`sendable`, `blockingReasons`), numbers, updates and ' +
      'deletion, each with the campaign as it is now (scopes compliance and events:read). With `lastEventId`, first ' +
      'the changes after it, then live ones, on every instance (Redis). NOT_FOUND for another account’s campaign or brand.',
    args: {
      id: t.arg.id({ description: 'The campaign; omitted: every campaign (of `brandId` when given).' }),
      brandId: t.arg.id({ description: 'Only campaigns of this brand.' }),
      lastEventId: t.arg.string({ description: 'Resume after this event id.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const id = args.id === null || args.id === undefined ? undefined : String(args.id);
      const brandId = args.brandId === null || args.brandId === undefined ? undefined : String(args.brandId);
      if (id) await getCampaign(ctx.app, ctx.actor, id);
      if (brandId) await getBrand(ctx.app, ctx.actor, brandId);
      return changesOf(ctx, {
        channels: ['10dlc'],
        topic: ['campaign', topicId(id)],
        lastEventId: args.lastEventId,
        matches: (e) => {
          const campaignId = payloadString(e, 'campaignId');
          return campaignId !== undefined && (id === undefined || campaignId === id);
        },
        load: (e) => orNull(getCampaign(ctx.app, ctx.actor, payloadString(e, 'campaignId')!)),
        // A deleted campaign's event names its brand; a live one is matched by the campaign re-read.
        keep: (campaign, e) =>
          brandId === undefined || (campaign ? campaign.brandId : payloadString(e, 'brandId')) === brandId,
      });
    },
    resolve: (change) => change,
  }),
);

/** One carrier decision of a campaign (event `10dlc.carrier.status_changed`). */
const CarrierStatusChangeRef = builder.objectRef<Change<CampaignDto>>('CarrierStatusChange').implement({
  description:
    'A carrier’s review of a campaign changed status: the carrier row now, its previous status, and the campaign.',
  fields: (t) => ({
    eventId: t.exposeString('eventId', { description: 'Event id; pass it as `lastEventId` to resume after it.' }),
    timestamp: t.exposeString('timestamp', { description: 'When the event was recorded (ISO 8601 UTC).' }),
    campaignId: t.string({ resolve: (c) => String(c.payload.campaignId) }),
    networkId: t.int({ description: 'TCR network id of the carrier.', resolve: (c) => Number(c.payload.networkId) }),
    previousStatus: t.string({
      nullable: true,
      description: 'The carrier’s status before this change; null for its first review.',
      resolve: (c) => (typeof c.payload.previousStatus === 'string' ? c.payload.previousStatus : null),
    }),
    status: t.string({ description: 'The status the event set.', resolve: (c) => String(c.payload.status) }),
    reason: t.string({
      nullable: true,
      description: 'Why (a rejection’s reason), when given.',
      resolve: (c) => (typeof c.payload.reason === 'string' ? c.payload.reason : null),
    }),
    carrier: t.field({
      type: CarrierApprovalRef,
      nullable: true,
      description: 'The carrier row now (from the campaign re-read); null once the campaign is deleted.',
      resolve: (c) => c.node?.carriers.find((r) => r.networkId === Number(c.payload.networkId)) ?? null,
    }),
    campaign: t.field({
      type: CampaignRef,
      nullable: true,
      description: 'The campaign now; null once deleted.',
      resolve: (c) => c.node,
    }),
  }),
});

builder.subscriptionField('carrierStatusChanged', (t) =>
  t.field({
    type: CarrierStatusChangeRef,
    description:
      'Carrier decisions (10dlc.carrier.status_changed) of one campaign, or of every campaign of the account when ' +
      '`campaignId` is omitted, each with the carrier row, its previous status and the campaign now (scopes ' +
      'compliance and events:read). With `lastEventId`, first the decisions after it, then live ones, on every ' +
      'instance (Redis). NOT_FOUND for another account’s campaign.',
    args: {
      campaignId: t.arg.id({ description: 'The campaign; omitted: every campaign of the account.' }),
      lastEventId: t.arg.string({ description: 'Resume after this event id.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const id = args.campaignId === null || args.campaignId === undefined ? undefined : String(args.campaignId);
      if (id) await getCampaign(ctx.app, ctx.actor, id);
      return changesOf(ctx, {
        channels: ['10dlc'],
        topic: ['campaign', topicId(id)],
        lastEventId: args.lastEventId,
        matches: (e) => {
          const campaignId = payloadString(e, 'campaignId');
          return (
            e.eventType === '10dlc.carrier.status_changed' &&
            campaignId !== undefined &&
            (id === undefined || campaignId === id)
          );
        },
        load: (e) => orNull(getCampaign(ctx.app, ctx.actor, payloadString(e, 'campaignId')!)),
      });
    },
    resolve: (change) => change,
  }),
);
