import {
  type BlockEntryView,
  createBlockEntry,
  createBlockEntryInput,
  deleteBlockEntry,
  listBlockEntries,
  listBlockEntriesInput,
} from '../../domain/email/blocklist.service.js';
import {
  deleteSuppression,
  listSuppressions,
  listSuppressionsInput,
  type SuppressionView,
} from '../../domain/email/suppressions.service.js';
import { builder } from '../builder.js';
import { parseArgs } from '../parse-args.js';

const EmailSuppressionRef = builder.objectRef<SuppressionView>('EmailSuppression').implement({
  description: 'An address that bounced permanently; sending to it answers RECIPIENT_SUPPRESSED (issue 21).',
  fields: (t) => ({
    address: t.exposeString('address'),
    reason: t.exposeString('reason', { description: 'bounce (a DSN) or relay_rejected (a 5xx at send time).' }),
    status: t.exposeString('status', { nullable: true, description: 'RFC 3463 status, e.g. 5.1.1.' }),
    diagnosticCode: t.exposeString('diagnosticCode', { nullable: true }),
    messageId: t.exposeString('messageId', { nullable: true, description: 'Message-ID of the bounced message.' }),
    createdAt: t.exposeString('createdAt'),
  }),
});

const EmailSuppressionPageRef = builder
  .objectRef<{ suppressions: SuppressionView[]; nextCursor: string | null }>('EmailSuppressionPage')
  .implement({
    description: 'One page of the suppression list (oldest first); `nextCursor` null on the last page.',
    fields: (t) => ({
      suppressions: t.field({ type: [EmailSuppressionRef], resolve: (p) => p.suppressions }),
      nextCursor: t.exposeString('nextCursor', { nullable: true }),
    }),
  });

builder.queryFields((t) => ({
  emailSuppressions: t.field({
    type: EmailSuppressionPageRef,
    description: 'The account’s suppression list (REST GET /api/email/suppressions).',
    args: { limit: t.arg.int({ description: '1–200, default 50.' }), cursor: t.arg.string() },
    resolve: (_root, args, ctx) =>
      listSuppressions(ctx.app, ctx.actor, parseArgs(ctx, 'email', listSuppressionsInput, args)),
  }),
}));

const DeleteEmailSuppressionInput = builder.inputType('DeleteEmailSuppressionInput', {
  fields: (t) => ({ address: t.string({ required: true }) }),
});
const DeleteEmailSuppressionPayload = builder
  .objectRef<{ deletedAddress: string }>('DeleteEmailSuppressionPayload')
  .implement({
    fields: (t) => ({ deletedAddress: t.exposeString('deletedAddress') }),
  });

builder.mutationFields((t) => ({
  deleteEmailSuppression: t.field({
    type: DeleteEmailSuppressionPayload,
    errors: {},
    description: 'Removes an address from the suppression list (REST DELETE /api/email/suppressions/{address}).',
    args: { input: t.arg({ type: DeleteEmailSuppressionInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      await deleteSuppression(ctx.app, ctx.actor, input.address);
      return { deletedAddress: input.address.trim().toLowerCase() };
    },
  }),
}));

const BlockListEntryRef = builder.objectRef<BlockEntryView>('BlockListEntry').implement({
  description: 'An address or domain refused inbound (SMTP 550 5.7.1) or outbound (RECIPIENT_BLOCKED).',
  fields: (t) => ({
    id: t.exposeID('id'),
    entry: t.exposeString('entry'),
    direction: t.exposeString('direction', { description: 'inbound or outbound.' }),
    identityId: t.exposeString('identityId', { nullable: true, description: 'Scope; null for every identity.' }),
    reason: t.exposeString('reason', { nullable: true }),
    createdAt: t.exposeString('createdAt'),
  }),
});
const BlockListPageRef = builder
  .objectRef<{ entries: BlockEntryView[]; nextCursor: string | null }>('BlockListPage')
  .implement({
    fields: (t) => ({
      entries: t.field({ type: [BlockListEntryRef], resolve: (p) => p.entries }),
      nextCursor: t.exposeString('nextCursor', { nullable: true }),
    }),
  });

builder.queryFields((t) => ({
  emailBlockList: t.field({
    type: BlockListPageRef,
    description: 'The account’s block list (REST GET /api/email/blocklist).',
    args: { limit: t.arg.int(), cursor: t.arg.string() },
    resolve: (_root, args, ctx) =>
      listBlockEntries(ctx.app, ctx.actor, parseArgs(ctx, 'email', listBlockEntriesInput, args)),
  }),
}));

const CreateBlockListEntryInput = builder.inputType('CreateBlockListEntryInput', {
  fields: (t) => ({
    entry: t.string({ required: true, description: 'An address or a domain.' }),
    direction: t.string({ required: true, description: 'inbound or outbound.' }),
    identityId: t.string(),
    reason: t.string(),
  }),
});
const CreateBlockListEntryPayload = builder
  .objectRef<{ entry: BlockEntryView }>('CreateBlockListEntryPayload')
  .implement({
    fields: (t) => ({ entry: t.field({ type: BlockListEntryRef, resolve: (p) => p.entry }) }),
  });
const DeleteBlockListEntryInput = builder.inputType('DeleteBlockListEntryInput', {
  fields: (t) => ({ id: t.id({ required: true }) }),
});
const DeleteBlockListEntryPayload = builder.objectRef<{ deletedId: string }>('DeleteBlockListEntryPayload').implement({
  fields: (t) => ({ deletedId: t.exposeID('deletedId') }),
});

builder.mutationFields((t) => ({
  createBlockListEntry: t.field({
    type: CreateBlockListEntryPayload,
    errors: {},
    description: 'Adds a block-list entry (REST POST /api/email/blocklist).',
    args: { input: t.arg({ type: CreateBlockListEntryInput, required: true }) },
    resolve: async (_root, { input }, ctx) => ({
      entry: await createBlockEntry(ctx.app, ctx.actor, parseArgs(ctx, 'email', createBlockEntryInput, input)),
    }),
  }),
  deleteBlockListEntry: t.field({
    type: DeleteBlockListEntryPayload,
    errors: {},
    description: 'Removes a block-list entry (REST DELETE /api/email/blocklist/{id}).',
    args: { input: t.arg({ type: DeleteBlockListEntryInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      await deleteBlockEntry(ctx.app, ctx.actor, String(input.id));
      return { deletedId: String(input.id) };
    },
  }),
}));
