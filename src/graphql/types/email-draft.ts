import {
  createDraft,
  createDraftInput,
  type DraftView,
  deleteDraft,
  getDraft,
  listDrafts,
  listDraftsInput,
  sendDraft,
  updateDraft,
  updateDraftInput,
} from '../../domain/email/draft.service.js';
import { REPLY_MODE_DESCRIPTION, REPLY_MODES } from '../../domain/email/email.schemas.js';
import { findThreadRow } from '../../domain/email/thread.service.js';
import { builder } from '../builder.js';
import { parseArgs } from '../parse-args.js';
import { EmailAttachmentInput } from './email-thread.js';

/** `send` or `draft` (EmailIdentity.replyMode; issue 21 item 3). */
export const ReplyModeEnum = builder.enumType('ReplyMode', {
  description: REPLY_MODE_DESCRIPTION,
  values: REPLY_MODES,
});

builder.prismaObjectField('EmailIdentity', 'replyMode', (t) =>
  t.field({
    type: ReplyModeEnum,
    description: 'What the agent does with its answers: send them, or leave them as drafts for a person.',
    resolve: (i) => i.replyMode as (typeof REPLY_MODES)[number],
  }),
);

const DraftCreatorEnum = builder.enumType('DraftCreator', {
  description: 'Who wrote a draft: user (through the API) or agent (replyMode draft).',
  values: ['user', 'agent'] as const,
});

const DraftAttachmentRef = builder
  .objectRef<DraftView['attachments'][number] & { downloadPath: string }>('EmailDraftAttachment')
  .implement({
    description: 'An attachment of a draft (its bytes are sent with it).',
    fields: (t) => ({
      attachmentId: t.exposeString('attachmentId'),
      filename: t.exposeString('filename', { nullable: true }),
      contentType: t.exposeString('contentType'),
      size: t.exposeInt('size', { description: 'Decoded size in bytes.' }),
      downloadPath: t.exposeString('downloadPath', {
        description: 'The REST path that streams its bytes (GET, same API key).',
      }),
    }),
  });

const DraftRef = builder.objectRef<DraftView>('EmailDraft').implement({
  description:
    'A message being written on an identity (issue 21): sent with sendEmailDraft, or by itself at sendAt; gone once sent.',
  fields: (t) => ({
    draftId: t.exposeID('draftId'),
    identityId: t.exposeID('identityId'),
    threadId: t.exposeString('threadId', { nullable: true, description: 'Reply drafts: the thread; else null.' }),
    thread: t.prismaField({
      type: 'EmailThread',
      nullable: true,
      description: 'The thread a reply draft answers on.',
      resolve: (query, d, _args, ctx) => (d.threadId ? findThreadRow(ctx.app, ctx.actor, d.threadId, query) : null),
    }),
    to: t.exposeStringList('to'),
    cc: t.exposeStringList('cc'),
    bcc: t.exposeStringList('bcc'),
    replyTo: t.exposeString('replyTo', { nullable: true }),
    subject: t.exposeString('subject'),
    body: t.exposeString('body', { nullable: true }),
    html: t.exposeString('html', { nullable: true }),
    attachments: t.field({
      type: [DraftAttachmentRef],
      resolve: (d) =>
        d.attachments.map((a) => ({
          ...a,
          downloadPath: `/api/email/identities/${d.identityId}/drafts/${d.draftId}/attachments/${a.attachmentId}`,
        })),
    }),
    labels: t.exposeStringList('labels'),
    inReplyTo: t.exposeString('inReplyTo', { nullable: true }),
    references: t.exposeStringList('references'),
    sendAt: t.exposeString('sendAt', {
      nullable: true,
      description: 'When it goes out by itself (ISO 8601 UTC); null: only when sent.',
    }),
    createdBy: t.field({ type: DraftCreatorEnum, resolve: (d) => d.createdBy }),
    reviewReason: t.exposeString('reviewReason', {
      nullable: true,
      description: 'Why a person should look before sending, e.g. SENDER_NOT_AUTHENTICATED.',
    }),
    lastError: t.exposeString('lastError', {
      nullable: true,
      description: 'Why the last scheduled send failed (`CODE: message`).',
    }),
    createdAt: t.exposeString('createdAt'),
    updatedAt: t.exposeString('updatedAt'),
  }),
});

const DraftPageRef = builder.objectRef<{ drafts: DraftView[]; nextCursor: string | null }>('EmailDraftPage').implement({
  fields: (t) => ({
    drafts: t.field({ type: [DraftRef], resolve: (p) => p.drafts }),
    nextCursor: t.exposeString('nextCursor', { nullable: true }),
  }),
});

builder.queryFields((t) => ({
  emailDrafts: t.field({
    type: DraftPageRef,
    description: 'An identity’s drafts, oldest first (REST GET /api/email/identities/{id}/drafts).',
    args: { identityId: t.arg.id({ required: true }), limit: t.arg.int(), cursor: t.arg.string() },
    resolve: (_root, { identityId, ...args }, ctx) =>
      listDrafts(ctx.app, ctx.actor, String(identityId), parseArgs(ctx, 'email', listDraftsInput, args)),
  }),
  emailDraft: t.field({
    type: DraftRef,
    description: 'One draft of an identity.',
    args: { identityId: t.arg.id({ required: true }), draftId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getDraft(ctx.app, ctx.actor, String(args.identityId), String(args.draftId)),
  }),
}));

const CreateEmailDraftInput = builder.inputType('CreateEmailDraftInput', {
  description:
    'A draft on an identity: every send field optional while drafting; threadId makes a reply draft (to, subject ' +
    'and threading default to the reply’s); sendAt schedules it (the draft must then be complete).',
  fields: (t) => ({
    identityId: t.id({ required: true }),
    threadId: t.string({ description: 'Thread to reply on; omitted: a new thread.' }),
    to: t.stringList(),
    cc: t.stringList(),
    bcc: t.stringList(),
    replyTo: t.string(),
    subject: t.string(),
    body: t.string(),
    html: t.string(),
    attachments: t.field({ type: [EmailAttachmentInput] }),
    labels: t.stringList(),
    sendAt: t.string({ description: 'ISO 8601 time at which it goes out by itself (at most 366 days ahead).' }),
  }),
});

const UpdateEmailDraftInput = builder.inputType('UpdateEmailDraftInput', {
  description:
    'Fields to change; absent ones stay, null clears replyTo, body, html or sendAt (clearing sendAt cancels the ' +
    'scheduled send); attachments replace them all.',
  fields: (t) => ({
    identityId: t.id({ required: true }),
    draftId: t.id({ required: true }),
    to: t.stringList(),
    cc: t.stringList(),
    bcc: t.stringList(),
    replyTo: t.string(),
    subject: t.string(),
    body: t.string(),
    html: t.string(),
    attachments: t.field({ type: [EmailAttachmentInput] }),
    labels: t.stringList(),
    sendAt: t.string(),
  }),
});

const DraftRefInput = (name: string, description: string) =>
  builder.inputType(name, {
    description,
    fields: (t) => ({ identityId: t.id({ required: true }), draftId: t.id({ required: true }) }),
  });
const DeleteEmailDraftInput = DraftRefInput('DeleteEmailDraftInput', 'The draft to delete.');
const SendEmailDraftInput = DraftRefInput('SendEmailDraftInput', 'The draft to send now.');

const DraftPayload = (name: string, description: string) =>
  builder.objectRef<{ draft: DraftView }>(name).implement({
    description,
    fields: (t) => ({ draft: t.field({ type: DraftRef, resolve: (p) => p.draft }) }),
  });
const CreateEmailDraftPayload = DraftPayload('CreateEmailDraftPayload', 'The draft written.');
const UpdateEmailDraftPayload = DraftPayload('UpdateEmailDraftPayload', 'The draft after the change.');
const DeleteEmailDraftPayload = builder.objectRef<{ deletedId: string }>('DeleteEmailDraftPayload').implement({
  fields: (t) => ({ deletedId: t.exposeID('deletedId') }),
});
const SendEmailDraftPayload = builder
  .objectRef<{ messageId: string; threadId: string }>('SendEmailDraftPayload')
  .implement({
    description: 'The message the draft became (the draft is gone).',
    fields: (t) => ({
      messageId: t.exposeString('messageId', { description: 'RFC 5322 Message-ID.' }),
      threadId: t.exposeString('threadId'),
      thread: t.prismaField({
        type: 'EmailThread',
        resolve: (query, p, _args, ctx) => findThreadRow(ctx.app, ctx.actor, p.threadId, query),
      }),
    }),
  });

builder.mutationFields((t) => ({
  createEmailDraft: t.field({
    type: CreateEmailDraftPayload,
    errors: {},
    description: 'Writes a draft (REST POST /api/email/identities/{id}/drafts); emits email.draft.created.',
    args: { input: t.arg({ type: CreateEmailDraftInput, required: true }) },
    resolve: async (_root, { input: { identityId, ...input } }, ctx) => ({
      draft: await createDraft(
        ctx.app,
        ctx.actor,
        String(identityId),
        parseArgs(ctx, 'email', createDraftInput, input),
      ),
    }),
  }),
  updateEmailDraft: t.field({
    type: UpdateEmailDraftPayload,
    errors: {},
    description: 'Changes a draft (REST PATCH …/drafts/{draftId}); emits email.draft.updated.',
    args: { input: t.arg({ type: UpdateEmailDraftInput, required: true }) },
    resolve: async (_root, { input: { identityId, draftId, ...input } }, ctx) => ({
      draft: await updateDraft(
        ctx.app,
        ctx.actor,
        String(identityId),
        String(draftId),
        parseArgs(ctx, 'email', updateDraftInput, input, { keepNulls: true }),
      ),
    }),
  }),
  deleteEmailDraft: t.field({
    type: DeleteEmailDraftPayload,
    errors: {},
    description: 'Deletes a draft and cancels its scheduled send; emits email.draft.deleted.',
    args: { input: t.arg({ type: DeleteEmailDraftInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      await deleteDraft(ctx.app, ctx.actor, String(input.identityId), String(input.draftId));
      return { deletedId: String(input.draftId) };
    },
  }),
  sendEmailDraft: t.field({
    type: SendEmailDraftPayload,
    errors: {},
    description: 'Sends a draft now (REST POST …/drafts/{draftId}/send); emits email.draft.sent, deletes the draft.',
    args: { input: t.arg({ type: SendEmailDraftInput, required: true }) },
    resolve: (_root, { input }, ctx) => sendDraft(ctx.app, ctx.actor, String(input.identityId), String(input.draftId)),
  }),
}));
