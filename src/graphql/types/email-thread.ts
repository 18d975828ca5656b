import { emailScope } from '../../domain/email/identity.service.js';
import { replyToThread, sendEmail } from '../../domain/email/outbound.service.js';
import { NotFoundError } from '../../domain/errors.js';
import { builder } from '../builder.js';

const AgentAnswerStatusEnum = builder.enumType('AgentAnswerStatus', {
  description: 'State of an agent’s answer: pending, then answered, skipped (see reason) or failed.',
  values: ['pending', 'answered', 'skipped', 'failed'] as const,
});
const MessageDirectionEnum = builder.enumType('MessageDirection', {
  description: 'inbound (received) or outbound (sent by this service).',
  values: ['inbound', 'outbound'] as const,
});
const MessageStatusEnum = builder.enumType('MessageStatus', {
  description: 'received (inbound); queued, sent, delivered, undelivered or failed (outbound).',
  values: ['received', 'queued', 'sent', 'delivered', 'undelivered', 'failed'] as const,
});

export const EmailThreadRef = builder.prismaObject('EmailThread', {
  description: 'A conversation of one identity (spec 2.7).',
  fields: (t) => ({
    threadId: t.exposeID('id', { description: 'Thread id (UUID).' }),
    subject: t.exposeString('subject'),
    participants: t.exposeStringList('participants', { description: 'Addresses, in order of first appearance.' }),
    messageCount: t.exposeInt('messageCount'),
    lastMessageAt: t.expose('lastMessageAt', { type: 'DateTime' }),
    messages: t.relation('messages', {
      description: 'Every message, oldest first.',
      query: { orderBy: [{ sentAt: 'asc' }, { id: 'asc' }] },
    }),
  }),
});

builder.prismaObject('AgentJob', {
  name: 'AgentAnswer',
  description: 'State of the agent’s answer to an inbound message.',
  fields: (t) => ({
    status: t.field({ type: AgentAnswerStatusEnum, resolve: (j) => j.status as never }),
    reason: t.exposeString('reason', {
      nullable: true,
      description: 'Why skipped or failed (AUTO_SUBMITTED, REPLY_BUDGET_EXHAUSTED, MODEL_ERROR, …).',
    }),
    attempts: t.exposeInt('attempts', { description: 'Model calls made.' }),
    lastError: t.exposeString('lastError', { nullable: true }),
    replyMessageId: t.exposeString('replyMessageId', { nullable: true, description: 'Message-ID of the answer.' }),
  }),
});

builder.prismaObject('EmailMessage', {
  description: 'One message of a thread (spec 2.7) with its delivery status.',
  fields: (t) => ({
    messageId: t.exposeString('messageId', { description: 'RFC 5322 Message-ID, angle brackets included.' }),
    threadId: t.exposeString('threadId'),
    from: t.exposeString('from'),
    to: t.exposeStringList('to'),
    subject: t.exposeString('subject'),
    body: t.exposeString('body', { description: 'Plain text.' }),
    sentAt: t.expose('sentAt', { type: 'DateTime' }),
    direction: t.field({ type: MessageDirectionEnum, resolve: (m) => m.direction as never }),
    inReplyTo: t.exposeString('inReplyTo', { nullable: true }),
    references: t.exposeStringList('references'),
    status: t.field({
      type: MessageStatusEnum,
      description: 'Delivery status (README "Message status").',
      resolve: (m) => m.status as never,
    }),
    statusDetail: t.exposeString('statusDetail', { nullable: true }),
    agentAnswer: t.relation('agentJob', { nullable: true, description: 'The agent’s answer, on inbound mail.' }),
  }),
});

builder.queryFields((t) => ({
  emailThread: t.prismaField({
    type: 'EmailThread',
    description: 'One thread of one of the account’s identities.',
    args: { threadId: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const row = await ctx.app.db.emailThread.findFirst({
        ...query,
        where: { id: String(args.threadId), ...emailScope(ctx.actor) },
      });
      if (!row) throw new NotFoundError('Thread', String(args.threadId), 'threadId');
      return row;
    },
  }),
}));

const SendEmailInput = builder.inputType('SendEmailInput', {
  fields: (t) => ({
    to: t.string({ required: true }),
    subject: t.string({ required: true }),
    body: t.string({ required: true, description: 'Plain text.' }),
  }),
});

const ReplyToThreadInput = builder.inputType('ReplyToThreadInput', {
  fields: (t) => ({ threadId: t.string({ required: true }), body: t.string({ required: true }) }),
});

const SentEmail = builder.objectRef<{ messageId: string; threadId: string }>('SentEmail').implement({
  description: 'Result of send and reply (spec 4.4).',
  fields: (t) => ({
    messageId: t.exposeString('messageId', { description: 'RFC 5322 Message-ID.' }),
    threadId: t.exposeString('threadId'),
  }),
});

builder.mutationFields((t) => ({
  sendEmail: t.field({
    type: SentEmail,
    description: 'Sends a new message from an identity (new thread).',
    args: { identityId: t.arg.id({ required: true }), input: t.arg({ type: SendEmailInput, required: true }) },
    resolve: (_root, args, ctx) => sendEmail(ctx.app, ctx.actor, String(args.identityId), args.input),
  }),
  replyToThread: t.field({
    type: SentEmail,
    description: 'Replies on a thread of an identity.',
    args: { identityId: t.arg.id({ required: true }), input: t.arg({ type: ReplyToThreadInput, required: true }) },
    resolve: (_root, args, ctx) => replyToThread(ctx.app, ctx.actor, String(args.identityId), args.input),
  }),
}));
