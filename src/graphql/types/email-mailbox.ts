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
