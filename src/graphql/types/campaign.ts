// The Campaign noun (spec 2.3, 2.4): its type with carriers, readiness, brand and numbers, its queries and mutations.

import { resolveCursorConnection } from '@pothos/plugin-relay';
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
import { brandsByIds, countCampaigns, numbersByCampaignIds } from '../../domain/compliance/compliance.batch.js';
import type { CampaignDto, CarrierDto } from '../../domain/compliance/compliance.dto.js';
import type { AssignedNumberDto } from '../../domain/compliance/number.service.js';
import { NotFoundError } from '../../domain/errors.js';
import { decodeCursor, encodeCursor } from '../../domain/paging.js';
import { builder } from '../builder.js';
import { TOTAL_COUNT_DESCRIPTION, totalCountOf, withTotalCount } from '../connections.js';
import { type Change, changesOf, orNull, payloadString } from '../subscriptions.js';
import { BrandRef } from './brand.js';
import { CampaignStatusEnum, CarrierStatusEnum, NudgeIntentEnum, withoutNulls } from './compliance-enums.js';
import { NodeRef } from './node.js';

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

export const CampaignRef = builder.objectRef<CampaignDto>('Campaign').implement({
  interfaces: [NodeRef],
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
  campaign: t.field({
    type: CampaignRef,
    description: 'One campaign with carriers, sendable and blockingReasons.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getCampaign(ctx.app, ctx.actor, String(args.id)),
  }),
}));

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

builder.mutationFields((t) => ({
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
      'Changes of one campaign: carrier decisions, status, readiness (`sendable`, `blockingReasons`), numbers, ' +
      'updates and deletion, each with the campaign as it is now (scopes compliance and events:read). With ' +
      '`lastEventId`, first the changes after it, then live ones. NOT_FOUND for another account’s campaign.',
    args: {
      id: t.arg.id({ required: true }),
      lastEventId: t.arg.string({ description: 'Resume after this event id.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const id = String(args.id);
      await getCampaign(ctx.app, ctx.actor, id);
      return changesOf(ctx, {
        channels: ['10dlc'],
        lastEventId: args.lastEventId,
        matches: (e) => payloadString(e, 'campaignId') === id,
        load: () => orNull(getCampaign(ctx.app, ctx.actor, id)),
      });
    },
    resolve: (change) => change,
  }),
);
