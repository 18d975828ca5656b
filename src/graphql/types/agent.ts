import {
  addKnowledgeDocument,
  CONTEXT_SOURCES_DESCRIPTION,
  createAgent,
  deleteAgent,
  deleteKnowledgeDocument,
  getAgentRow,
  getKnowledgeDocumentRow,
  listAgentRows,
  updateAgent,
} from '../../domain/email/agent.service.js';
import { addKnowledgeInput, createAgentInput, updateAgentInput } from '../../domain/email/email.schemas.js';
import { builder } from '../builder.js';
import { parseArgs } from '../parse-args.js';

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

builder.queryFields((t) => ({
  agents: t.prismaConnection({
    type: 'Agent',
    cursor: 'id',
    description: 'The account’s agents, oldest first.',
    resolve: (query, _root, _args, ctx) => listAgentRows(ctx.app, ctx.actor, query),
  }),
  agent: t.prismaField({
    type: 'Agent',
    description: 'One agent.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => getAgentRow(ctx.app, ctx.actor, String(args.id), query),
  }),
}));

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

builder.mutationFields((t) => ({
  createAgent: t.prismaField({
    type: 'Agent',
    description: 'Creates an agent (spec 4.5).',
    args: { input: t.arg({ type: CreateAgentInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { id } = await createAgent(
        ctx.app,
        ctx.actor,
        parseArgs(ctx, 'email', createAgentInput, args.input, { keepNulls: true }),
      );
      return getAgentRow(ctx.app, ctx.actor, id, query);
    },
  }),
  updateAgent: t.prismaField({
    type: 'Agent',
    description: 'Changes an agent.',
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateAgentInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { id } = await updateAgent(
        ctx.app,
        ctx.actor,
        String(args.id),
        parseArgs(ctx, 'email', updateAgentInput, args.input, { keepNulls: true }),
      );
      return getAgentRow(ctx.app, ctx.actor, id, query);
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
      const { id } = await addKnowledgeDocument(
        ctx.app,
        ctx.actor,
        String(args.agentId),
        parseArgs(ctx, 'email', addKnowledgeInput, args.input, { keepNulls: true }),
      );
      return getKnowledgeDocumentRow(ctx.app, ctx.actor, id, query);
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
