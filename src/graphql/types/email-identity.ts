// The EmailIdentity noun (spec 2.6, 4.4): identities (inboxes) with their threads, queries and mutations.
import { resolveCursorConnection } from '@pothos/plugin-relay';
import { z } from 'zod';
import { requireScope } from '../../domain/accounts/account.service.js';
import { countIdentities } from '../../domain/email/email.batch.js';
import { IDENTITY_STATUSES } from '../../domain/email/email.enums.js';
import { createIdentityInput, labelFilter, updateIdentityInput } from '../../domain/email/email.schemas.js';
import {
  createIdentity,
  deleteIdentity,
  getIdentityRow,
  listIdentityRows,
  updateIdentity,
} from '../../domain/email/identity.service.js';
import { smtpEndpoint } from '../../domain/email/smtp-credentials.service.js';
import { pageThreads, threadCursor } from '../../domain/email/thread.service.js';
import type { EmailIdentity as EmailIdentityRow, EmailThread } from '../../generated/prisma/client.js';
import { builder } from '../builder.js';
import { parseArgs } from '../parse-args.js';
import { type Change, changesOf, orNull, payloadString, topicId } from '../subscriptions.js';
import { ReplyModeEnum } from './email-draft.js';
import { EmailThreadRef } from './email-thread.js';
import { NodeRef } from './node.js';

const labelArg = z.object({ label: labelFilter });

const EmailIdentityStatusEnum = builder.enumType('EmailIdentityStatus', {
  description: 'Lifecycle of an identity.',
  values: IDENTITY_STATUSES,
});

const EmailIdentityRef = builder.prismaObject('EmailIdentity', {
  interfaces: [NodeRef],
  description: 'An email identity (inbox), spec 2.6.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    address: t.exposeString('address', { description: 'localPart@domain, lower-cased.' }),
    localPart: t.exposeString('localPart'),
    domain: t.exposeString('domain'),
    displayName: t.exposeString('displayName', { nullable: true }),
    agentId: t.exposeString('agentId', { nullable: true, description: 'Assigned agent; null when none.' }),
    agent: t.relation('agent', { nullable: true, description: 'The assigned agent.' }),
    status: t.field({
      type: EmailIdentityStatusEnum,
      description: '`active`, or `deprovisioning` after delete.',
      resolve: (i) => i.status as never,
    }),
    smtpHost: t.string({
      description: 'SMTP submission host: SMTP_PUBLIC_HOST, default `localhost`.',
      resolve: (_i, _a, ctx) => smtpEndpoint(ctx.app).smtpHost,
    }),
    smtpPort: t.int({
      description: 'SMTP submission port (implicit TLS): SMTP_PUBLIC_PORT, else the submission listener’s port.',
      resolve: (_i, _a, ctx) => smtpEndpoint(ctx.app).smtpPort,
    }),
    smtpUser: t.exposeString('address', { description: 'SMTP user name: the address.' }),
    smtpPass: t.string({ nullable: true, description: 'Always null (spec 2.6).', resolve: () => null }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    threads: t.connection(
      {
        type: EmailThreadRef,
        args: { label: t.arg.string({ description: 'Only threads carrying this label.' }) },
        description:
          'Threads, newest activity first (lastMessageAt, then id, descending): the same keyset paging as REST GET ' +
          '/api/email/identities/{id}/threads, so new activity while paging never repeats a thread.',
        resolve: (identity, args, ctx) =>
          resolveCursorConnection<Promise<EmailThread[]>>(
            { args, toCursor: (th: EmailThread) => threadCursor(th) },
            (window) =>
              pageThreads(ctx.app, ctx.actor, identity.id, {
                ...window,
                label: args.label ? parseArgs(ctx, 'email', labelArg, { label: args.label }).label : undefined,
              }),
          ),
      },
      { name: 'EmailThreadConnection' },
      { name: 'EmailThreadEdge' },
    ),
  }),
});

builder.queryFields((t) => ({
  emailIdentities: t.prismaConnection(
    {
      type: 'EmailIdentity',
      cursor: 'id',
      description: 'The account’s identities, oldest first.',
      totalCount: (_connection, _args, ctx) => countIdentities(ctx.app, ctx.actor),
      resolve: (query, _root, _args, ctx) => listIdentityRows(ctx.app, ctx.actor, query),
    },
    { name: 'EmailIdentityConnection' },
    { name: 'EmailIdentityEdge' },
  ),
  emailIdentity: t.prismaField({
    type: 'EmailIdentity',
    description: 'One identity (NOT_FOUND for another account’s id).',
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => getIdentityRow(ctx.app, ctx.actor, String(args.id), query),
  }),
}));

const CreateEmailIdentityInput = builder.inputType('CreateEmailIdentityInput', {
  description: 'Spec 4.4 identity creation.',
  fields: (t) => ({
    localPart: t.string({ required: true, description: 'RFC 5321 dot-atom, at most 64 octets.' }),
    domain: t.string({ description: 'Default EMAIL_DOMAIN.' }),
    displayName: t.string(),
    agentId: t.string({ description: 'Agent to assign (must have a textModel).' }),
    replyMode: t.field({ type: ReplyModeEnum, description: 'Default send.' }),
  }),
});

const UpdateEmailIdentityInput = builder.inputType('UpdateEmailIdentityInput', {
  description: 'The identity and the fields to change. Absent fields stay; null clears.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'The identity.' }),
    displayName: t.string(),
    agentId: t.string({ description: 'null unassigns.' }),
    replyMode: t.field({ type: ReplyModeEnum }),
  }),
});

const DeleteEmailIdentityInput = builder.inputType('DeleteEmailIdentityInput', {
  description: 'The identity to deprovision.',
  fields: (t) => ({ id: t.id({ required: true }) }),
});

/** `<Verb>EmailIdentityPayload { emailIdentity }`: the identity re-read with the client's selection. */
const identityPayload = (name: string, description: string) =>
  builder.objectRef<{ identityId: string }>(name).implement({
    description,
    fields: (t) => ({
      emailIdentity: t.prismaField({
        type: 'EmailIdentity',
        resolve: (query, p, _args, ctx) => getIdentityRow(ctx.app, ctx.actor, p.identityId, query),
      }),
    }),
  });
const CreateEmailIdentityPayload = identityPayload('CreateEmailIdentityPayload', 'The new identity.');
const UpdateEmailIdentityPayload = identityPayload('UpdateEmailIdentityPayload', 'The identity after the change.');
const DeleteEmailIdentityPayload = identityPayload(
  'DeleteEmailIdentityPayload',
  'The identity, now with status `deprovisioning` (it is removed after the deprovisioning period).',
);

builder.mutationFields((t) => ({
  createEmailIdentity: t.field({
    type: CreateEmailIdentityPayload,
    errors: {},
    description: 'Provisions an identity (ADDRESS_TAKEN when the address is in use).',
    args: { input: t.arg({ type: CreateEmailIdentityInput, required: true }) },
    resolve: async (_root, args, ctx) => ({
      identityId: (
        await createIdentity(
          ctx.app,
          ctx.actor,
          parseArgs(ctx, 'email', createIdentityInput, args.input, { keepNulls: true }),
        )
      ).id,
    }),
  }),
  updateEmailIdentity: t.field({
    type: UpdateEmailIdentityPayload,
    errors: {},
    description: 'Changes displayName, agentId or replyMode.',
    args: { input: t.arg({ type: UpdateEmailIdentityInput, required: true }) },
    resolve: async (_root, { input: { id, ...input } }, ctx) => ({
      identityId: (
        await updateIdentity(
          ctx.app,
          ctx.actor,
          String(id),
          parseArgs(ctx, 'email', updateIdentityInput, input, { keepNulls: true }),
        )
      ).id,
    }),
  }),
  deleteEmailIdentity: t.field({
    type: DeleteEmailIdentityPayload,
    errors: {},
    description: 'Deprovisions an identity; returns it with status `deprovisioning`.',
    args: { input: t.arg({ type: DeleteEmailIdentityInput, required: true }) },
    resolve: async (_root, args, ctx) => {
      await deleteIdentity(ctx.app, ctx.actor, String(args.input.id));
      return { identityId: String(args.input.id) };
    },
  }),
}));

// Subscriptions ----------------------------------------------------------------------------------------------------

const EmailIdentityChangeRef = builder.objectRef<Change<EmailIdentityRow>>('EmailIdentityChange').implement({
  description: 'A change of an identity (created, updated, deprovisioned) and the identity re-read after it.',
  fields: (t) => ({
    eventId: t.exposeString('eventId', { description: 'Event id; pass it as `lastEventId` to resume after it.' }),
    eventType: t.exposeString('eventType', {
      description: 'email.identity.created, email.identity.updated or email.identity.deprovisioned.',
    }),
    timestamp: t.exposeString('timestamp', { description: 'When the event was recorded (ISO 8601 UTC).' }),
    emailIdentity: t.field({
      type: EmailIdentityRef,
      nullable: true,
      description: 'The identity now; null once purged.',
      resolve: (c) => c.node,
    }),
  }),
});

builder.subscriptionField('emailIdentityUpdated', (t) =>
  t.field({
    type: EmailIdentityChangeRef,
    description:
      'Changes of one identity, or of every identity of the account when `id` is omitted (created, updated, ' +
      'deprovisioned), each with the identity as it is now (scopes email and events:read). With `lastEventId`, first ' +
      'the changes after it, then live ones, on every instance (Redis). NOT_FOUND for another account’s identity.',
    args: {
      id: t.arg.id({ description: 'The identity; omitted: every identity of the account.' }),
      lastEventId: t.arg.string({ description: 'Resume after this event id.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const id = args.id === null || args.id === undefined ? undefined : String(args.id);
      if (id) await getIdentityRow(ctx.app, ctx.actor, id);
      else requireScope(ctx.actor, 'email');
      return changesOf(ctx, {
        channels: ['email'],
        topic: ['identity', topicId(id)],
        lastEventId: args.lastEventId,
        matches: (e) => {
          const identityId = payloadString(e, 'identityId');
          return (
            e.eventType.startsWith('email.identity.') &&
            identityId !== undefined &&
            (id === undefined || identityId === id)
          );
        },
        load: (e) => orNull(getIdentityRow(ctx.app, ctx.actor, payloadString(e, 'identityId')!)),
      });
    },
    resolve: (change) => change,
  }),
);
