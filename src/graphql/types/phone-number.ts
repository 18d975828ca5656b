// The PhoneNumber noun (DIDs, spec 2.5): provisioning, assignment to campaigns, the DID mapping, and compliance enums.

import { resolveCursorConnection } from '@pothos/plugin-relay';
import { countNumbers } from '../../domain/compliance/compliance.batch.js';
import { type DidMappingDto, type NumberDto, numberShape } from '../../domain/compliance/compliance.dto.js';
import { didMappingQuery, numbersInput } from '../../domain/compliance/compliance.schemas.js';
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
import { decodeCursor, encodeCursor } from '../../domain/paging.js';
import { builder } from '../builder.js';
import { TOTAL_COUNT_DESCRIPTION, totalCountOf, withTotalCount } from '../connections.js';
import { parseArgs } from '../parse-args.js';
import { type Change, changesOf, orNull, payloadString } from '../subscriptions.js';
import { AssignmentStatusEnum, CampaignStatusEnum, DidStateEnum } from './compliance-enums.js';
import { shapeFields } from './compliance-shape.js';

const FailureReasonRef = builder.objectRef<{ code: string; message: string }>('AssignmentFailureReason').implement({
  description: 'Why an assignment failed (e.g. CAMPAIGN_REJECTED).',
  fields: (t) => ({ code: t.exposeString('code'), message: t.exposeString('message') }),
});

const PhoneNumberRef = builder.objectRef<NumberDto>('PhoneNumber').implement({
  description: 'A number (DID) provisioned in the account.',
  fields: (t) =>
    shapeFields(t, numberShape, {
      enums: { state: DidStateEnum, assignmentStatus: AssignmentStatusEnum },
      fields: { failureReasons: t.field({ type: [FailureReasonRef], resolve: (n) => n.failureReasons }) },
    }),
});

const DidMappingEntryRef = builder.objectRef<DidMappingDto>('DidMappingEntry').implement({
  description: 'A number and the campaign it is assigned to (spec 2.5).',
  fields: (t) => ({
    number: t.exposeString('number'),
    campaignId: t.exposeID('campaignId', { nullable: true }),
    campaignStatus: t.field({ type: CampaignStatusEnum, nullable: true, resolve: (d) => d.campaignStatus as never }),
    state: t.field({ type: DidStateEnum, resolve: (n) => n.state as never }),
    assignmentStatus: t.field({
      type: AssignmentStatusEnum,
      nullable: true,
      description: 'Null on no campaign.',
      resolve: (n) => n.assignmentStatus as never,
    }),
  }),
});

const DidMappingPageRef = builder
  .objectRef<{ entries: DidMappingDto[]; nextCursor: string | null }>('DidMappingPage')
  .implement({
    description: 'A page of the DID mapping, ascending by number.',
    fields: (t) => ({
      entries: t.field({
        type: [DidMappingEntryRef],
        complexity: { field: 1, multiplier: 1 }, // `limit` of didMapping already multiplies it
        resolve: (p) => p.entries,
      }),
      nextCursor: t.exposeString('nextCursor', { nullable: true, description: 'Pass as `cursor` for the next page.' }),
    }),
  });

const ComplianceEnumRef = builder.objectRef<{ name: string; values: string[] }>('ComplianceEnum').implement({
  description: 'An enum of the compliance API (spec 2.10).',
  fields: (t) => ({ name: t.exposeString('name'), values: t.exposeStringList('values') }),
});

builder.queryFields((t) => ({
  phoneNumbers: t.connection(
    {
      type: PhoneNumberRef,
      description: 'Numbers provisioned in the account, ascending (Relay connection; REST GET /api/numbers).',
      resolve: (_root, args, ctx) =>
        withTotalCount(
          resolveCursorConnection<Promise<NumberDto[]>>(
            { args, toCursor: (n: NumberDto) => encodeCursor(n.number) },
            (w) =>
              pageNumbers(ctx.app, ctx.actor, { ...w, after: decodeCursor(w.after), before: decodeCursor(w.before) }),
          ),
          () => countNumbers(ctx.app, ctx.actor),
        ),
    },
    {
      name: 'PhoneNumberConnection',
      fields: (tc) => ({
        totalCount: tc.int({ description: TOTAL_COUNT_DESCRIPTION, resolve: (c) => totalCountOf(c) }),
      }),
    },
    { name: 'PhoneNumberEdge' },
  ),
  didMapping: t.field({
    type: DidMappingPageRef,
    description: 'Every number with its campaign, assigned or not (spec 2.5).',
    args: {
      limit: t.arg.int({ description: '1–1000, default 1000.' }),
      cursor: t.arg.string({ description: '`nextCursor` of the previous page.' }),
    },
    resolve: (_root, args, ctx) => didMapping(ctx.app, ctx.actor, parseArgs(ctx, 'compliance', didMappingQuery, args)),
  }),
  complianceEnum: t.field({
    type: ComplianceEnumRef,
    description: 'Values of the vertical, entityType or usecase enum.',
    args: { name: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => getEnum(ctx.actor, args.name),
  }),
}));

const CampaignNumbersInput = (name: string, description: string) =>
  builder.inputType(name, {
    description,
    fields: (t) => ({
      campaignId: t.id({ required: true }),
      numbers: t.stringList({ required: true, description: 'E.164 numbers provisioned in the account.' }),
    }),
  });
const AssignCampaignNumbersInput = CampaignNumbersInput(
  'AssignCampaignNumbersInput',
  'Numbers to assign to a campaign, all or nothing.',
);
const RemoveCampaignNumbersInput = CampaignNumbersInput(
  'RemoveCampaignNumbersInput',
  'Numbers to unlink from a campaign, all or nothing.',
);
const ProvisionNumbersInput = builder.inputType('ProvisionNumbersInput', {
  description: 'Numbers to provision in the account, all or nothing.',
  fields: (t) => ({ numbers: t.stringList({ required: true, description: 'E.164.' }) }),
});
const ReleaseNumberInput = builder.inputType('ReleaseNumberInput', {
  description: 'A number to release (it must not be assigned).',
  fields: (t) => ({ number: t.string({ required: true, description: 'E.164.' }) }),
});

const AssignCampaignNumbersPayload = builder.objectRef<AssignResult>('AssignCampaignNumbersPayload').implement({
  description: 'Result of an assignment.',
  fields: (t) => ({
    campaignId: t.exposeID('campaignId'),
    assigned: t.exposeStringList('assigned', { description: 'Linked by this call.' }),
    alreadyAssigned: t.exposeStringList('alreadyAssigned', { description: 'Already on this campaign.' }),
    numbers: t.exposeStringList('numbers', { description: 'Every number on the campaign now.' }),
  }),
});

const RemoveCampaignNumbersPayload = builder
  .objectRef<{ campaignId: string; removed: string[]; numbers: string[] }>('RemoveCampaignNumbersPayload')
  .implement({
    description: 'Result of a removal.',
    fields: (t) => ({
      campaignId: t.exposeID('campaignId'),
      removed: t.exposeStringList('removed'),
      numbers: t.exposeStringList('numbers', { description: 'Numbers still on the campaign.' }),
    }),
  });

const ProvisionNumbersPayload = builder.objectRef<{ numbers: NumberDto[] }>('ProvisionNumbersPayload').implement({
  description: 'The numbers provisioned.',
  fields: (t) => ({ phoneNumbers: t.field({ type: [PhoneNumberRef], resolve: (p) => p.numbers }) }),
});

const ReleaseNumberPayload = builder.objectRef<{ number: string }>('ReleaseNumberPayload').implement({
  description: 'The number released (no longer in the account).',
  fields: (t) => ({ releasedNumber: t.exposeString('number', { description: 'E.164.' }) }),
});

builder.mutationFields((t) => ({
  assignCampaignNumbers: t.field({
    type: AssignCampaignNumbersPayload,
    errors: {},
    description: 'Assigns provisioned numbers to a campaign, all or nothing.',
    args: { input: t.arg({ type: AssignCampaignNumbersInput, required: true }) },
    resolve: (_root, { input }, ctx) =>
      assignNumbers(
        ctx.app,
        ctx.actor,
        String(input.campaignId),
        parseArgs(ctx, 'compliance', numbersInput, { numbers: input.numbers }),
      ),
  }),
  removeCampaignNumbers: t.field({
    type: RemoveCampaignNumbersPayload,
    errors: {},
    description: 'Unlinks numbers from a campaign, all or nothing.',
    args: { input: t.arg({ type: RemoveCampaignNumbersInput, required: true }) },
    resolve: (_root, { input }, ctx) =>
      removeNumbers(
        ctx.app,
        ctx.actor,
        String(input.campaignId),
        parseArgs(ctx, 'compliance', numbersInput, { numbers: input.numbers }),
      ),
  }),
  provisionNumbers: t.field({
    type: ProvisionNumbersPayload,
    errors: {},
    description: 'Provisions E.164 numbers in the account, all or nothing.',
    args: { input: t.arg({ type: ProvisionNumbersInput, required: true }) },
    resolve: (_root, { input }, ctx) =>
      provisionNumbers(ctx.app, ctx.actor, parseArgs(ctx, 'compliance', numbersInput, { numbers: input.numbers })),
  }),
  releaseNumber: t.field({
    type: ReleaseNumberPayload,
    errors: {},
    description: 'Releases a number that is not assigned (NUMBER_ASSIGNED otherwise).',
    args: { input: t.arg({ type: ReleaseNumberInput, required: true }) },
    resolve: (_root, { input }, ctx) => releaseNumber(ctx.app, ctx.actor, input.number),
  }),
}));

// Subscriptions ----------------------------------------------------------------------------------------------------

const NumberAssignmentChangeRef = builder
  .objectRef<Change<{ campaignId: string; numbers: AssignedNumberDto[] }>>('NumberAssignmentChange')
  .implement({
    description: 'Numbers assigned to or removed from a campaign, with the campaign’s numbers after the change.',
    fields: (t) => ({
      eventId: t.exposeString('eventId', { description: 'Event id; pass it as `lastEventId` to resume after it.' }),
      eventType: t.field({
        type: NumberAssignmentEventEnum,
        description: 'Assigned or removed.',
        resolve: (c) => (c.eventType === '10dlc.numbers.assigned' ? 'ASSIGNED' : 'REMOVED'),
      }),
      timestamp: t.exposeString('timestamp', { description: 'When the event was recorded (ISO 8601 UTC).' }),
      campaignId: t.string({ resolve: (c) => String(c.payload.campaignId ?? '') }),
      changed: t.stringList({
        description: 'The numbers this change assigned or removed (E.164).',
        resolve: (c) => (Array.isArray(c.payload.numbers) ? c.payload.numbers.map(String) : []),
      }),
      numbers: t.stringList({
        nullable: true,
        description: 'Every number on the campaign now; null once the campaign is gone.',
        resolve: (c) => c.node?.numbers.map((n) => n.number) ?? null,
      }),
    }),
  });

const NumberAssignmentEventEnum = builder.enumType('NumberAssignmentEvent', {
  description: 'What happened to the numbers.',
  values: ['ASSIGNED', 'REMOVED'] as const,
});

builder.subscriptionField('numberAssignmentChanged', (t) =>
  t.field({
    type: NumberAssignmentChangeRef,
    description:
      'Number assignments of the account (or of one campaign): each assign or remove, with the campaign’s numbers ' +
      'after it (scopes compliance and events:read). With `lastEventId`, first the changes after it, then live ones.',
    args: {
      campaignId: t.arg.id({ description: 'Only this campaign’s assignments.' }),
      lastEventId: t.arg.string({ description: 'Resume after this event id.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const only = args.campaignId ? String(args.campaignId) : undefined;
      if (only) await listCampaignNumbers(ctx.app, ctx.actor, only);
      return changesOf(ctx, {
        channels: ['10dlc'],
        topic: only ? ['campaign', only] : ['numbers', ctx.actor.accountId],
        lastEventId: args.lastEventId,
        matches: (e) =>
          (e.eventType === '10dlc.numbers.assigned' || e.eventType === '10dlc.numbers.removed') &&
          (only === undefined || payloadString(e, 'campaignId') === only),
        load: (e) => orNull(listCampaignNumbers(ctx.app, ctx.actor, payloadString(e, 'campaignId') ?? '')),
      });
    },
    resolve: (change) => change,
  }),
);
