import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import {
  addKnowledgeDocument,
  createAgent,
  deleteAgent,
  deleteKnowledgeDocument,
  getAgent,
  listAgents,
  listKnowledgeDocuments,
  updateAgent,
} from '../../domain/email/agent.service.js';
import {
  addKnowledgeInput,
  createAgentInput,
  createIdentityInput,
  replyInput,
  sendEmailInput,
  updateAgentInput,
  updateIdentityInput,
} from '../../domain/email/email.schemas.js';
import {
  createIdentity,
  deleteIdentity,
  getIdentity,
  listIdentities,
  updateIdentity,
} from '../../domain/email/identity.service.js';
import { replyToThread, sendEmail } from '../../domain/email/outbound.service.js';
import { getThread, listThreads } from '../../domain/email/thread.service.js';
import { actorOf } from '../auth.js';

const identity = z.object({
  id: z.string(),
  address: z.string(),
  localPart: z.string(),
  domain: z.string(),
  displayName: z.string().nullable(),
  agentId: z.string().nullable(),
  status: z.enum(['active', 'deprovisioning']),
  smtpHost: z.string(),
  smtpPort: z.number(),
  smtpUser: z.string(),
  smtpPass: z.null(),
  createdAt: z.string(),
});
const threadSummary = z.object({
  threadId: z.string(),
  subject: z.string(),
  participants: z.array(z.string()),
  messageCount: z.number(),
  lastMessageAt: z.string(),
});
const message = z.object({
  messageId: z.string(),
  threadId: z.string(),
  from: z.string(),
  to: z.array(z.string()),
  subject: z.string(),
  body: z.string(),
  sentAt: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  inReplyTo: z.string().nullable(),
  references: z.array(z.string()),
  status: z.string(),
  statusDetail: z.string().nullable(),
  agent: z
    .object({
      status: z.string(),
      reason: z.string().nullable(),
      attempts: z.number(),
      lastError: z.string().nullable(),
      replyMessageId: z.string().nullable(),
    })
    .nullable(),
});
const sent = z.object({ messageId: z.string(), threadId: z.string() });
const agent = z.object({
  id: z.string(),
  name: z.string(),
  systemPrompt: z.string(),
  textModel: z.string().nullable(),
  contextSources: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const knowledgeDocument = z.object({
  id: z.string(),
  agentId: z.string(),
  title: z.string(),
  content: z.string(),
  createdAt: z.string(),
});
const idParams = z.object({ id: z.string() });

/** REST routes of the email area: identities, send/reply, threads (spec 4.4) and agents (4.5). */
export async function emailRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['email'];

  r.post(
    '/api/email/identities',
    {
      schema: {
        tags,
        operationId: 'createEmailIdentity',
        summary: 'Provision an email identity (201). 409 ADDRESS_TAKEN for an address in use.',
        body: createIdentityInput,
        response: { 201: identity },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'ADDRESS_TAKEN', 'DOMAIN_NOT_HOSTED', 'AGENT_TEXT_MODEL_REQUIRED'],
      },
    },
    async (request, reply) => reply.status(201).send(await createIdentity(ctx, actorOf(request), request.body)),
  );
  r.get(
    '/api/email/identities',
    {
      schema: {
        tags,
        operationId: 'listEmailIdentities',
        summary: 'All identities of the account.',
        response: { 200: z.object({ identities: z.array(identity) }) },
        errors: ['FORBIDDEN'],
      },
    },
    async (request) => ({ identities: await listIdentities(ctx, actorOf(request)) }),
  );
  r.get(
    '/api/email/identities/:id',
    {
      schema: {
        tags,
        operationId: 'getEmailIdentity',
        summary: 'One identity.',
        params: idParams,
        response: { 200: identity },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    async (request) => getIdentity(ctx, actorOf(request), request.params.id),
  );
  r.patch(
    '/api/email/identities/:id',
    {
      schema: {
        tags,
        operationId: 'updateEmailIdentity',
        summary: 'Change displayName or agentId (null clears).',
        params: idParams,
        body: updateIdentityInput,
        response: { 200: identity },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'IDENTITY_DEPROVISIONING', 'AGENT_TEXT_MODEL_REQUIRED'],
      },
    },
    async (request) => updateIdentity(ctx, actorOf(request), request.params.id, request.body),
  );
  r.delete(
    '/api/email/identities/:id',
    {
      schema: {
        tags,
        operationId: 'deleteEmailIdentity',
        summary: 'Deprovision: inbound mail is refused from now on; threads stay readable until purged.',
        params: idParams,
        response: { 200: z.object({ status: z.literal('deprovisioning') }) },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    async (request) => deleteIdentity(ctx, actorOf(request), request.params.id),
  );
  r.post(
    '/api/email/identities/:id/send',
    {
      schema: {
        tags,
        operationId: 'sendEmail',
        summary: 'Send a new message (new thread). 202; delivery status shows on the message.',
        params: idParams,
        body: sendEmailInput,
        response: { 202: sent },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'IDENTITY_DEPROVISIONING'],
      },
    },
    async (request, reply) =>
      reply.status(202).send(await sendEmail(ctx, actorOf(request), request.params.id, request.body)),
  );
  r.post(
    '/api/email/identities/:id/reply',
    {
      schema: {
        tags,
        operationId: 'replyToEmailThread',
        summary: 'Reply on a thread (Re: subject, In-Reply-To, References). 202.',
        params: idParams,
        body: replyInput,
        response: { 202: sent },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'IDENTITY_DEPROVISIONING'],
      },
    },
    async (request, reply) =>
      reply.status(202).send(await replyToThread(ctx, actorOf(request), request.params.id, request.body)),
  );
  r.get(
    '/api/email/identities/:id/threads',
    {
      schema: {
        tags,
        operationId: 'listEmailThreads',
        summary: 'Threads, newest activity first; limit default 20, max 100; nextCursor "" on the last page.',
        params: idParams,
        querystring: z.object({ limit: z.coerce.number().optional(), cursor: z.string().optional() }),
        response: { 200: z.object({ threads: z.array(threadSummary), nextCursor: z.string() }) },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'INVALID_CURSOR'],
      },
    },
    async (request) => listThreads(ctx, actorOf(request), request.params.id, request.query),
  );
  r.get(
    '/api/email/identities/:id/threads/:threadId',
    {
      schema: {
        tags,
        operationId: 'getEmailThread',
        summary: 'Thread detail with every message, oldest first.',
        params: z.object({ id: z.string(), threadId: z.string() }),
        response: { 200: threadSummary.extend({ messages: z.array(message) }) },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    async (request) => getThread(ctx, actorOf(request), request.params.id, request.params.threadId),
  );

  const agentTags = ['agents'];
  r.post(
    '/api/agents',
    {
      schema: {
        tags: agentTags,
        operationId: 'createAgent',
        summary: 'Create an agent (201).',
        body: createAgentInput,
        response: { 201: agent },
        errors: ['FORBIDDEN'],
      },
    },
    async (request, reply) => reply.status(201).send(await createAgent(ctx, actorOf(request), request.body)),
  );
  r.get(
    '/api/agents',
    {
      schema: {
        tags: agentTags,
        operationId: 'listAgents',
        summary: 'All agents of the account.',
        response: { 200: z.object({ agents: z.array(agent) }) },
        errors: ['FORBIDDEN'],
      },
    },
    async (request) => ({ agents: await listAgents(ctx, actorOf(request)) }),
  );
  r.get(
    '/api/agents/:id',
    {
      schema: {
        tags: agentTags,
        operationId: 'getAgent',
        summary: 'One agent.',
        params: idParams,
        response: { 200: agent },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    async (request) => getAgent(ctx, actorOf(request), request.params.id),
  );
  r.patch(
    '/api/agents/:id',
    {
      schema: {
        tags: agentTags,
        operationId: 'updateAgent',
        summary: 'Change any agent field.',
        params: idParams,
        body: updateAgentInput,
        response: { 200: agent },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'AGENT_ASSIGNED'],
      },
    },
    async (request) => updateAgent(ctx, actorOf(request), request.params.id, request.body),
  );
  r.delete(
    '/api/agents/:id',
    {
      schema: {
        tags: agentTags,
        operationId: 'deleteAgent',
        summary: 'Delete an agent (204); its identities are unassigned.',
        params: idParams,
        response: { 204: z.undefined().describe('Deleted.') },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    async (request, reply) => {
      await deleteAgent(ctx, actorOf(request), request.params.id);
      return reply.status(204).send();
    },
  );
  r.post(
    '/api/agents/:id/knowledge',
    {
      schema: {
        tags: agentTags,
        operationId: 'addKnowledgeDocument',
        summary: 'Add a knowledge document (201).',
        params: idParams,
        body: addKnowledgeInput,
        response: { 201: knowledgeDocument },
        errors: ['FORBIDDEN', 'NOT_FOUND', 'KNOWLEDGE_LIMIT_REACHED'],
      },
    },
    async (request, reply) =>
      reply.status(201).send(await addKnowledgeDocument(ctx, actorOf(request), request.params.id, request.body)),
  );
  r.get(
    '/api/agents/:id/knowledge',
    {
      schema: {
        tags: agentTags,
        operationId: 'listKnowledgeDocuments',
        summary: 'The agent’s knowledge documents.',
        params: idParams,
        response: { 200: z.object({ documents: z.array(knowledgeDocument) }) },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    async (request) => ({ documents: await listKnowledgeDocuments(ctx, actorOf(request), request.params.id) }),
  );
  r.delete(
    '/api/agents/:id/knowledge/:documentId',
    {
      schema: {
        tags: agentTags,
        operationId: 'deleteKnowledgeDocument',
        summary: 'Delete a knowledge document (204).',
        params: z.object({ id: z.string(), documentId: z.string() }),
        response: { 204: z.undefined().describe('Deleted.') },
        errors: ['FORBIDDEN', 'NOT_FOUND'],
      },
    },
    async (request, reply) => {
      await deleteKnowledgeDocument(ctx, actorOf(request), request.params.id, request.params.documentId);
      return reply.status(204).send();
    },
  );
}

// OpenAPI component names of the response shapes declared above (docs/openapi.md).
z.globalRegistry.add(identity, { id: 'EmailIdentity', description: 'An email identity (address) of the account.' });
z.globalRegistry.add(threadSummary, { id: 'ThreadSummary', description: 'A thread without its messages.' });
z.globalRegistry.add(message, { id: 'EmailMessage', description: 'One message of a thread, in or out.' });
z.globalRegistry.add(sent, { id: 'SentEmail', description: 'The queued message and its thread.' });
z.globalRegistry.add(agent, { id: 'Agent', description: 'An email agent that answers inbound mail.' });
z.globalRegistry.add(knowledgeDocument, { id: 'KnowledgeDocument', description: 'A document an agent answers from.' });
