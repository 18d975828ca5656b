// GraphQL types, queries and mutations of the email area: identities, threads, messages, agents (spec 2.6, 2.7,
// 4.4, 4.5). Resolvers call one domain function; reads spread Pothos' `query` into an account-scoped Prisma query.
import { resolveCursorConnection } from '@pothos/plugin-relay';
import {
  addKnowledgeDocument,
  CONTEXT_SOURCES_DESCRIPTION,
  createAgent,
  deleteAgent,
  deleteKnowledgeDocument,
  updateAgent,
} from '../../domain/email/agent.service.js';
import {
  createIdentity,
  deleteIdentity,
  emailScope,
  IDENTITY_SMTP_PORT,
  updateIdentity,
} from '../../domain/email/identity.service.js';
import { replyToThread, sendEmail } from '../../domain/email/outbound.service.js';
import { pageThreads, threadCursor } from '../../domain/email/thread.service.js';
import { NotFoundError } from '../../domain/errors.js';
import type { EmailThread } from '../../generated/prisma/client.js';
import { builder } from '../builder.js';

builder.prismaObject('Agent', {
  description: 'An AI agent that answers inbound mail of the identities it is assigned to (spec 4.5, 6.3).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    name: t.exposeString('name'),
    systemPrompt: t.exposeString('systemPrompt', { description: 'System prompt given to the model.' }),
    textModel: t.exposeString('textModel', {
      nullable: true,
      description: 'Model id at the OpenAI-compatible endpoint (LLM_BASE_URL); required to be assigned.',
    }),
    contextSources: t.exposeStringList('contextSources', { description: CONTEXT_SOURCES_DESCRIPTION }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    knowledgeDocuments: t.relation('documents', {
      description: 'Knowledge documents, oldest first.',
      query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    }),
  }),
});

builder.prismaObject('KnowledgeDocument', {
  description: 'A document an agent draws on when its contextSources include `knowledge`.',
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeString('agentId'),
    title: t.exposeString('title'),
    content: t.exposeString('content'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.prismaObject('EmailIdentity', {
  description: 'An email identity (inbox), spec 2.6.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    address: t.exposeString('address', { description: 'localPart@domain, lower-cased.' }),
    localPart: t.exposeString('localPart'),
    domain: t.exposeString('domain'),
    displayName: t.exposeString('displayName', { nullable: true }),
    agentId: t.exposeString('agentId', { nullable: true, description: 'Assigned agent; null when none.' }),
    agent: t.relation('agent', { nullable: true, description: 'The assigned agent.' }),
    status: t.exposeString('status', { description: '`active`, or `deprovisioning` after delete.' }),
    smtpHost: t.string({
      description: 'SMTP host (SMTP_PUBLIC_HOST).',
      resolve: (_i, _a, ctx) => ctx.app.config.SMTP_PUBLIC_HOST,
    }),
    smtpPort: t.int({ description: 'SMTP port (465).', resolve: () => IDENTITY_SMTP_PORT }),
    smtpUser: t.exposeString('address', { description: 'SMTP user name: the address.' }),
    smtpPass: t.string({ nullable: true, description: 'Always null (spec 2.6).', resolve: () => null }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    threads: t.connection(
      {
        type: EmailThreadRef,
        description:
          'Threads, newest activity first (lastMessageAt, then id, descending): the same keyset paging as REST GET ' +
          '/api/email/identities/{id}/threads, so new activity while paging never repeats a thread.',
        resolve: (identity, args, ctx) =>
          resolveCursorConnection<Promise<EmailThread[]>>(
            { args, toCursor: (th: EmailThread) => threadCursor(th) },
            (window) => pageThreads(ctx.app, ctx.actor, identity.id, window),
          ),
      },
      { name: 'EmailIdentityThreadsConnection' },
      { name: 'EmailIdentityThreadsConnectionEdge' },
    ),
  }),
});

const EmailThreadRef = builder.prismaObject('EmailThread', {
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
    status: t.exposeString('status', { description: 'pending | answered | skipped | failed.' }),
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
    direction: t.exposeString('direction', { description: 'inbound | outbound.' }),
    inReplyTo: t.exposeString('inReplyTo', { nullable: true }),
    references: t.exposeStringList('references'),
    status: t.exposeString('status', {
      description: 'received | queued | sent | delivered | undelivered | failed (README "Message status").',
    }),
    statusDetail: t.exposeString('statusDetail', { nullable: true }),
    agentAnswer: t.relation('agentJob', { nullable: true, description: 'The agent’s answer, on inbound mail.' }),
  }),
});

builder.queryFields((t) => ({
  emailIdentities: t.prismaConnection({
    type: 'EmailIdentity',
    cursor: 'id',
    description: 'The account’s identities, oldest first.',
    resolve: (query, _root, _args, ctx) =>
      ctx.app.db.emailIdentity.findMany({
        ...query,
        where: emailScope(ctx.actor),
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      }),
  }),
  emailIdentity: t.prismaField({
    type: 'EmailIdentity',
    description: 'One identity (NOT_FOUND for another account’s id).',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const row = await ctx.app.db.emailIdentity.findFirst({
        ...query,
        where: { id: String(args.id), ...emailScope(ctx.actor) },
      });
      if (!row) throw new NotFoundError('Email identity', String(args.id), 'id');
      return row;
    },
  }),
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
  agents: t.prismaConnection({
    type: 'Agent',
    cursor: 'id',
    description: 'The account’s agents, oldest first.',
    resolve: (query, _root, _args, ctx) =>
      ctx.app.db.agent.findMany({
        ...query,
        where: emailScope(ctx.actor),
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      }),
  }),
  agent: t.prismaField({
    type: 'Agent',
    description: 'One agent.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const row = await ctx.app.db.agent.findFirst({
        ...query,
        where: { id: String(args.id), ...emailScope(ctx.actor) },
      });
      if (!row) throw new NotFoundError('Agent', String(args.id), 'agentId');
      return row;
    },
  }),
}));

const CreateIdentityInput = builder.inputType('CreateIdentityInput', {
  description: 'Spec 4.4 identity creation.',
  fields: (t) => ({
    localPart: t.string({ required: true, description: 'RFC 5321 dot-atom, at most 64 octets.' }),
    domain: t.string({ description: 'Default EMAIL_DOMAIN.' }),
    displayName: t.string(),
    agentId: t.string({ description: 'Agent to assign (must have a textModel).' }),
  }),
});

const UpdateIdentityInput = builder.inputType('UpdateIdentityInput', {
  description: 'Absent fields stay; null clears.',
  fields: (t) => ({ displayName: t.string(), agentId: t.string({ description: 'null unassigns.' }) }),
});

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

const CreateAgentInput = builder.inputType('CreateAgentInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    systemPrompt: t.string({ required: true }),
    textModel: t.string(),
    contextSources: t.stringList({ required: true, description: CONTEXT_SOURCES_DESCRIPTION }),
  }),
});

const UpdateAgentInput = builder.inputType('UpdateAgentInput', {
  fields: (t) => ({
    name: t.string(),
    systemPrompt: t.string(),
    textModel: t.string({ description: 'null clears (refused while the agent is assigned).' }),
    contextSources: t.stringList(),
  }),
});

const AddKnowledgeDocumentInput = builder.inputType('AddKnowledgeDocumentInput', {
  fields: (t) => ({ title: t.string({ required: true }), content: t.string({ required: true }) }),
});

const SentEmail = builder.objectRef<{ messageId: string; threadId: string }>('SentEmail').implement({
  description: 'Result of send and reply (spec 4.4).',
  fields: (t) => ({
    messageId: t.exposeString('messageId', { description: 'RFC 5322 Message-ID.' }),
    threadId: t.exposeString('threadId'),
  }),
});

builder.mutationFields((t) => ({
  createIdentity: t.prismaField({
    type: 'EmailIdentity',
    description: 'Provisions an identity (ADDRESS_TAKEN when the address is in use).',
    args: { input: t.arg({ type: CreateIdentityInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { id } = await createIdentity(ctx.app, ctx.actor, args.input);
      return ctx.app.db.emailIdentity.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
  updateIdentity: t.prismaField({
    type: 'EmailIdentity',
    description: 'Changes displayName or agentId.',
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateIdentityInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { id } = await updateIdentity(ctx.app, ctx.actor, String(args.id), args.input);
      return ctx.app.db.emailIdentity.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
  deleteIdentity: t.prismaField({
    type: 'EmailIdentity',
    description: 'Deprovisions an identity; returns it with status `deprovisioning`.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      await deleteIdentity(ctx.app, ctx.actor, String(args.id));
      return ctx.app.db.emailIdentity.findUniqueOrThrow({ ...query, where: { id: String(args.id) } });
    },
  }),
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
  createAgent: t.prismaField({
    type: 'Agent',
    description: 'Creates an agent (spec 4.5).',
    args: { input: t.arg({ type: CreateAgentInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { id } = await createAgent(ctx.app, ctx.actor, args.input);
      return ctx.app.db.agent.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
  updateAgent: t.prismaField({
    type: 'Agent',
    description: 'Changes an agent.',
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateAgentInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { id } = await updateAgent(ctx.app, ctx.actor, String(args.id), args.input);
      return ctx.app.db.agent.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
  deleteAgent: t.id({
    description: 'Deletes an agent (its identities are unassigned); returns its id.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      await deleteAgent(ctx.app, ctx.actor, String(args.id));
      return String(args.id);
    },
  }),
  addKnowledgeDocument: t.prismaField({
    type: 'KnowledgeDocument',
    description: 'Adds a knowledge document to an agent.',
    args: { agentId: t.arg.id({ required: true }), input: t.arg({ type: AddKnowledgeDocumentInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { id } = await addKnowledgeDocument(ctx.app, ctx.actor, String(args.agentId), args.input);
      return ctx.app.db.knowledgeDocument.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
  deleteKnowledgeDocument: t.id({
    description:
      'Deletes one knowledge document of an agent (REST DELETE /api/agents/{id}/knowledge/{documentId}); returns ' +
      'its id. NOT_FOUND for an unknown agent or document, or another account’s.',
    args: { agentId: t.arg.id({ required: true }), documentId: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      await deleteKnowledgeDocument(ctx.app, ctx.actor, String(args.agentId), String(args.documentId));
      return String(args.documentId);
    },
  }),
}));
