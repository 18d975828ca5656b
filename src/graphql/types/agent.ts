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
import { countAgents } from '../../domain/email/email.batch.js';
import {
  addKnowledgeInput,
  CONTEXT_SOURCES,
  createAgentInput,
  updateAgentInput,
} from '../../domain/email/email.schemas.js';
import { builder } from '../builder.js';
import { parseArgs } from '../parse-args.js';
import { NodeRef } from './node.js';

const ContextSourceEnum = builder.enumType('ContextSource', {
  description: 'What an agent draws on besides the thread (spec 4.5).',
  values: CONTEXT_SOURCES,
});

builder.prismaObject('Agent', {
  interfaces: [NodeRef],
  description: 'An AI agent that answers inbound mail of the identities it is assigned to (spec 4.5, 6.3).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    name: t.exposeString('name'),
    systemPrompt: t.exposeString('systemPrompt', { description: 'System prompt given to the model.' }),
    textModel: t.exposeString('textModel', {
      nullable: true,
      description: 'Model id at the OpenAI-compatible endpoint (LLM_BASE_URL); required to be assigned.',
    }),
    contextSources: t.field({
      type: [ContextSourceEnum],
      description: CONTEXT_SOURCES_DESCRIPTION,
      resolve: (a) => a.contextSources as never,
    }),
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
  agents: t.prismaConnection(
    {
      type: 'Agent',
      cursor: 'id',
      description: 'The account’s agents, oldest first.',
      totalCount: (_connection, _args, ctx) => countAgents(ctx.app, ctx.actor),
      resolve: (query, _root, _args, ctx) => listAgentRows(ctx.app, ctx.actor, query),
    },
    { name: 'AgentConnection' },
    { name: 'AgentEdge' },
  ),
  agent: t.prismaField({
    type: 'Agent',
    description: 'One agent.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => getAgentRow(ctx.app, ctx.actor, String(args.id), query),
  }),
}));

const CreateAgentInput = builder.inputType('CreateAgentInput', {
  description:
    'An agent to create; only `name` is required, as on REST (systemPrompt "", contextSources [] by default).',
  fields: (t) => ({
    name: t.string({ required: true }),
    systemPrompt: t.string({ description: 'Default "".' }),
    textModel: t.string({ description: 'Needed before the agent can be assigned to an identity (spec 4.4).' }),
    contextSources: t.field({
      type: [ContextSourceEnum],
      description: `${CONTEXT_SOURCES_DESCRIPTION} Default [].`,
    }),
  }),
});

const UpdateAgentInput = builder.inputType('UpdateAgentInput', {
  description: 'The agent and the fields to change; absent fields stay.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'The agent.' }),
    name: t.string(),
    systemPrompt: t.string(),
    textModel: t.string({ description: 'null clears (refused while the agent is assigned).' }),
    contextSources: t.field({ type: [ContextSourceEnum] }),
  }),
});

const DeleteAgentInput = builder.inputType('DeleteAgentInput', {
  description: 'The agent to delete (its identities are unassigned).',
  fields: (t) => ({ id: t.id({ required: true }) }),
});

const AddKnowledgeDocumentInput = builder.inputType('AddKnowledgeDocumentInput', {
  description: 'A document to add to an agent.',
  fields: (t) => ({
    agentId: t.id({ required: true }),
    title: t.string({ required: true }),
    content: t.string({ required: true }),
  }),
});

const DeleteKnowledgeDocumentInput = builder.inputType('DeleteKnowledgeDocumentInput', {
  description: 'One knowledge document of an agent.',
  fields: (t) => ({ agentId: t.id({ required: true }), documentId: t.id({ required: true }) }),
});

/** `<Verb>AgentPayload { agent }`: the agent re-read with the selection the client asked for. */
const agentPayload = (name: string, description: string) =>
  builder.objectRef<{ agentId: string }>(name).implement({
    description,
    fields: (t) => ({
      agent: t.prismaField({
        type: 'Agent',
        resolve: (query, p, _args, ctx) => getAgentRow(ctx.app, ctx.actor, p.agentId, query),
      }),
    }),
  });
const CreateAgentPayload = agentPayload('CreateAgentPayload', 'The new agent.');
const UpdateAgentPayload = agentPayload('UpdateAgentPayload', 'The agent after the change.');

const DeleteAgentPayload = builder.objectRef<{ deletedAgentId: string }>('DeleteAgentPayload').implement({
  description: 'The id of the deleted agent.',
  fields: (t) => ({ deletedAgentId: t.exposeID('deletedAgentId') }),
});

const AddKnowledgeDocumentPayload = builder.objectRef<{ documentId: string }>('AddKnowledgeDocumentPayload').implement({
  description: 'The new knowledge document.',
  fields: (t) => ({
    knowledgeDocument: t.prismaField({
      type: 'KnowledgeDocument',
      resolve: (query, p, _args, ctx) => getKnowledgeDocumentRow(ctx.app, ctx.actor, p.documentId, query),
    }),
  }),
});

const DeleteKnowledgeDocumentPayload = builder
  .objectRef<{ deletedKnowledgeDocumentId: string }>('DeleteKnowledgeDocumentPayload')
  .implement({
    description: 'The id of the deleted knowledge document.',
    fields: (t) => ({ deletedKnowledgeDocumentId: t.exposeID('deletedKnowledgeDocumentId') }),
  });

builder.mutationFields((t) => ({
  createAgent: t.field({
    type: CreateAgentPayload,
    errors: {},
    description: 'Creates an agent (spec 4.5).',
    args: { input: t.arg({ type: CreateAgentInput, required: true }) },
    resolve: async (_root, args, ctx) => ({
      agentId: (await createAgent(ctx.app, ctx.actor, parseArgs(ctx, 'email', createAgentInput, args.input))).id,
    }),
  }),
  updateAgent: t.field({
    type: UpdateAgentPayload,
    errors: {},
    description: 'Changes an agent.',
    args: { input: t.arg({ type: UpdateAgentInput, required: true }) },
    resolve: async (_root, { input: { id, ...input } }, ctx) => ({
      agentId: (
        await updateAgent(
          ctx.app,
          ctx.actor,
          String(id),
          parseArgs(ctx, 'email', updateAgentInput, input, { keepNulls: true }),
        )
      ).id,
    }),
  }),
  deleteAgent: t.field({
    type: DeleteAgentPayload,
    errors: {},
    description: 'Deletes an agent (its identities are unassigned).',
    args: { input: t.arg({ type: DeleteAgentInput, required: true }) },
    resolve: async (_root, args, ctx) => {
      await deleteAgent(ctx.app, ctx.actor, String(args.input.id));
      return { deletedAgentId: String(args.input.id) };
    },
  }),
  addKnowledgeDocument: t.field({
    type: AddKnowledgeDocumentPayload,
    errors: {},
    description: 'Adds a knowledge document to an agent (KNOWLEDGE_LIMIT_REACHED at the maximum).',
    args: { input: t.arg({ type: AddKnowledgeDocumentInput, required: true }) },
    resolve: async (_root, { input: { agentId, ...input } }, ctx) => ({
      documentId: (
        await addKnowledgeDocument(
          ctx.app,
          ctx.actor,
          String(agentId),
          parseArgs(ctx, 'email', addKnowledgeInput, input, { keepNulls: true }),
        )
      ).id,
    }),
  }),
  deleteKnowledgeDocument: t.field({
    type: DeleteKnowledgeDocumentPayload,
    errors: {},
    description:
      'Deletes one knowledge document of an agent (REST DELETE /api/agents/{id}/knowledge/{documentId}). NOT_FOUND ' +
      'for an unknown agent or document, or another account’s.',
    args: { input: t.arg({ type: DeleteKnowledgeDocumentInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      await deleteKnowledgeDocument(ctx.app, ctx.actor, String(input.agentId), String(input.documentId));
      return { deletedKnowledgeDocumentId: String(input.documentId) };
    },
  }),
}));
