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
import { openAttachment, openRawMessage } from '../../domain/email/attachments.js';
import {
  createBlockEntry,
  createBlockEntryInput,
  deleteBlockEntry,
  listBlockEntries,
  listBlockEntriesInput,
} from '../../domain/email/blocklist.service.js';
import {
  addKnowledgeInput,
  attachmentParams,
  createAgentInput,
  createIdentityInput,
  forwardInput,
  labelsPatchInput,
  messageParams,
  replyInput,
  sendEmailInput,
  suppressionParams,
  threadParams,
  updateAgentInput,
  updateIdentityInput,
} from '../../domain/email/email.schemas.js';
import {
  agentShape as agent,
  identityShape as identity,
  knowledgeDocumentShape as knowledgeDocument,
  messageShape as message,
  sentShape as sent,
  smtpCredentialsShape as smtpCredentials,
  threadSummaryShape as threadSummary,
} from '../../domain/email/email.shapes.js';
import {
  createIdentity,
  deleteIdentity,
  getIdentity,
  listIdentities,
  updateIdentity,
} from '../../domain/email/identity.service.js';
import { patchMessageLabels, patchThreadLabels } from '../../domain/email/labels.js';
import { forwardMessage, replyToThread, sendEmail } from '../../domain/email/outbound.service.js';
import { isSearch, searchThreads, searchThreadsInput } from '../../domain/email/search.service.js';
import { createSmtpCredentials } from '../../domain/email/smtp-credentials.service.js';
import { deleteSuppression, listSuppressions, listSuppressionsInput } from '../../domain/email/suppressions.service.js';
import { getThread, listThreads } from '../../domain/email/thread.service.js';
import { pageQuery } from '../../domain/paging.js';
import { idParams, resourceId } from '../../domain/validation.js';
import { actorOf } from '../auth.js';
import { contentRoute, SEND_ERRORS, sendAttachment } from './email-content.js';

/** REST routes of the email area: identities, send/reply, threads (spec 4.4) and agents (4.5). */
export async function emailRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['email'];

  r.post(
    '/api/email/identities',
    {
      schema: {
        operationId: 'createEmailIdentity',
        errors: [
          'FORBIDDEN',
          'NOT_FOUND',
          'ADDRESS_TAKEN',
          'DOMAIN_NOT_HOSTED',
          'DOMAIN_NOT_VERIFIED',
          'AGENT_TEXT_MODEL_REQUIRED',
        ],
        tags,
        summary: 'Provision an email identity (201). 409 ADDRESS_TAKEN for an address in use.',
        body: createIdentityInput,
        response: { 201: identity },
      },
    },
    async (request, reply) => reply.status(201).send(await createIdentity(ctx, actorOf(request), request.body)),
  );
  r.get(
    '/api/email/identities',
    {
      schema: {
        operationId: 'listEmailIdentities',
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
        tags,
        summary: 'Identities of the account, oldest first; limit 1–200 (default 50); nextCursor null on the last page.',
        querystring: pageQuery,
        response: { 200: z.object({ identities: z.array(identity), nextCursor: z.string().nullable() }) },
      },
    },
    async (request) => listIdentities(ctx, actorOf(request), request.query),
  );
  r.get(
    '/api/email/identities/:id',
    {
      schema: {
        operationId: 'getEmailIdentity',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'One identity.',
        params: idParams,
        response: { 200: identity },
      },
    },
    async (request) => getIdentity(ctx, actorOf(request), request.params.id),
  );
  r.patch(
    '/api/email/identities/:id',
    {
      schema: {
        operationId: 'updateEmailIdentity',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'IDENTITY_DEPROVISIONING', 'AGENT_TEXT_MODEL_REQUIRED'],
        tags,
        summary: 'Change displayName or agentId (null clears).',
        params: idParams,
        body: updateIdentityInput,
        response: { 200: identity },
      },
    },
    async (request) => updateIdentity(ctx, actorOf(request), request.params.id, request.body),
  );
  r.delete(
    '/api/email/identities/:id',
    {
      schema: {
        operationId: 'deleteEmailIdentity',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'Deprovision: inbound mail is refused from now on; threads stay readable until purged.',
        params: idParams,
        response: { 200: z.object({ status: z.literal('deprovisioning') }) },
      },
    },
    async (request) => deleteIdentity(ctx, actorOf(request), request.params.id),
  );
  r.post(
    '/api/email/identities/:id/smtp-credentials',
    {
      schema: {
        operationId: 'createSmtpCredentials',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'IDENTITY_DEPROVISIONING'],
        tags,
        summary:
          'Issue an SMTP submission password (201; shown only here). Replaces the previous one, which stops working.',
        params: idParams,
        response: { 201: smtpCredentials },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await createSmtpCredentials(ctx, actorOf(request), request.params.id)),
  );
  r.post(
    '/api/email/identities/:id/send',
    {
      ...contentRoute({
        operationId: 'sendEmail',
        errors: [...SEND_ERRORS, 'ATTACHMENTS_TOO_LARGE'],
        summary: 'Send a new message (new thread). 202; delivery status shows on the message.',
        params: idParams,
        body: sendEmailInput,
        response: { 202: sent },
      }),
      // The answer is about 120 bytes, far below the compression threshold (1 KiB): no compression hooks on this
      // hot route (issue 24).
      compress: false,
    },
    async (request, reply) =>
      reply.status(202).send(await sendEmail(ctx, actorOf(request), request.params.id, request.body)),
  );
  r.post(
    '/api/email/identities/:id/reply',
    contentRoute({
      operationId: 'replyToEmailThread',
      errors: [...SEND_ERRORS, 'ATTACHMENTS_TOO_LARGE'],
      summary: 'Reply on a thread (Re: subject, In-Reply-To, References). 202.',
      params: idParams,
      body: replyInput,
      response: { 202: sent },
    }),
    async (request, reply) =>
      reply.status(202).send(await replyToThread(ctx, actorOf(request), request.params.id, request.body)),
  );
  r.get(
    '/api/email/identities/:id/threads',
    {
      schema: {
        operationId: 'listEmailThreads',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'INVALID_CURSOR'],
        tags,
        summary:
          'Threads, newest activity first; limit default 20, max 100; nextCursor "" on the last page. With q, from, ' +
          'after or before: only threads with a message matching them (full-text search, docs/email.md "Search").',
        params: idParams,
        querystring: searchThreadsInput,
        response: { 200: z.object({ threads: z.array(threadSummary), nextCursor: z.string() }) },
      },
    },
    async (request) =>
      isSearch(request.query)
        ? searchThreads(ctx, actorOf(request), request.params.id, request.query)
        : listThreads(ctx, actorOf(request), request.params.id, request.query),
  );
  r.get(
    '/api/email/identities/:id/threads/:threadId',
    {
      schema: {
        operationId: 'getEmailThread',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'Thread detail with every message, oldest first.',
        params: z.object({ id: resourceId, threadId: resourceId }),
        response: { 200: threadSummary.extend({ messages: z.array(message) }) },
      },
    },
    async (request) => getThread(ctx, actorOf(request), request.params.id, request.params.threadId),
  );

  r.post(
    '/api/email/identities/:id/messages/:messageId/forward',
    contentRoute({
      operationId: 'forwardEmailMessage',
      errors: SEND_ERRORS,
      summary: 'Forward a message (Fwd: subject, original attachments kept) on a new thread. 202.',
      params: messageParams,
      body: forwardInput,
      response: { 202: sent },
    }),
    async (request, reply) =>
      reply
        .status(202)
        .send(await forwardMessage(ctx, actorOf(request), request.params.id, request.params.messageId, request.body)),
  );
  r.get(
    '/api/email/identities/:id/messages/:messageId/attachments/:attachmentId',
    {
      schema: {
        operationId: 'downloadEmailAttachment',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'The attachment’s decoded bytes (its content type, Content-Disposition with its filename), streamed.',
        params: attachmentParams,
      },
    },
    async (request, reply) => {
      const { attachment, stream } = await openAttachment(
        ctx,
        actorOf(request),
        request.params.id,
        request.params.messageId,
        request.params.attachmentId,
      );
      return sendAttachment(reply, attachment, stream);
    },
  );
  r.get(
    '/api/email/identities/:id/messages/:messageId/raw',
    {
      schema: {
        operationId: 'downloadEmailRaw',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'The message as stored (RFC 5322, `message/rfc822`), streamed.',
        params: messageParams,
      },
    },
    async (request, reply) => {
      const { size, stream } = await openRawMessage(ctx, actorOf(request), request.params.id, request.params.messageId);
      reply.header('content-type', 'message/rfc822');
      reply.header('content-length', String(size));
      reply.header('content-disposition', 'attachment; filename="message.eml"');
      return reply.send(stream);
    },
  );

  r.patch(
    '/api/email/identities/:id/threads/:threadId',
    {
      schema: {
        operationId: 'updateEmailThreadLabels',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'TOO_MANY_LABELS'],
        tags,
        summary: 'Add or remove custom labels of a thread; answers the thread detail.',
        params: threadParams,
        body: labelsPatchInput,
        response: { 200: threadSummary.extend({ messages: z.array(message) }) },
      },
    },
    async (request) =>
      patchThreadLabels(ctx, actorOf(request), request.params.id, request.params.threadId, request.body),
  );
  r.patch(
    '/api/email/identities/:id/messages/:messageId',
    {
      schema: {
        operationId: 'updateEmailMessageLabels',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'TOO_MANY_LABELS'],
        tags,
        summary: 'Add or remove custom labels of a message (added ones join the thread’s); answers the message.',
        params: messageParams,
        body: labelsPatchInput,
        response: { 200: message },
      },
    },
    async (request) =>
      patchMessageLabels(ctx, actorOf(request), request.params.id, request.params.messageId, request.body),
  );

  const blockEntry = z.object({
    id: z.string(),
    entry: z.string(),
    direction: z.enum(['inbound', 'outbound']),
    identityId: z.string().nullable(),
    reason: z.string().nullable(),
    createdAt: z.string(),
  });
  r.post(
    '/api/email/blocklist',
    {
      schema: {
        operationId: 'createEmailBlockListEntry',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'Block an address or domain inbound (550 5.7.1 at SMTP) or outbound (422 RECIPIENT_BLOCKED). 201.',
        body: createBlockEntryInput,
        response: { 201: blockEntry },
      },
    },
    async (request, reply) => reply.status(201).send(await createBlockEntry(ctx, actorOf(request), request.body)),
  );
  r.get(
    '/api/email/blocklist',
    {
      schema: {
        operationId: 'listEmailBlockList',
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
        tags,
        summary: 'The account’s block list, oldest first.',
        querystring: listBlockEntriesInput,
        response: { 200: z.object({ entries: z.array(blockEntry), nextCursor: z.string().nullable() }) },
      },
    },
    async (request) => listBlockEntries(ctx, actorOf(request), request.query),
  );
  r.delete(
    '/api/email/blocklist/:id',
    {
      schema: {
        operationId: 'deleteEmailBlockListEntry',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'Remove a block-list entry (204).',
        params: idParams,
        response: { 204: z.undefined().describe('Removed.') },
      },
    },
    async (request, reply) => {
      await deleteBlockEntry(ctx, actorOf(request), request.params.id);
      return reply.status(204).send();
    },
  );

  const suppression = z.object({
    address: z.string(),
    reason: z.enum(['bounce', 'relay_rejected']),
    status: z.string().nullable(),
    diagnosticCode: z.string().nullable(),
    messageId: z.string().nullable(),
    createdAt: z.string(),
  });
  r.get(
    '/api/email/suppressions',
    {
      schema: {
        operationId: 'listEmailSuppressions',
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
        tags,
        summary: 'Addresses that bounced permanently; sending to one answers 422 RECIPIENT_SUPPRESSED.',
        querystring: listSuppressionsInput,
        response: { 200: z.object({ suppressions: z.array(suppression), nextCursor: z.string().nullable() }) },
      },
    },
    async (request) => {
      const page = await listSuppressions(ctx, actorOf(request), request.query);
      return { ...page, suppressions: page.suppressions as z.infer<typeof suppression>[] };
    },
  );
  r.delete(
    '/api/email/suppressions/:address',
    {
      schema: {
        operationId: 'deleteEmailSuppression',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'Remove an address from the suppression list (204); mail to it may be sent again.',
        params: suppressionParams,
        response: { 204: z.undefined().describe('Removed.') },
      },
    },
    async (request, reply) => {
      await deleteSuppression(ctx, actorOf(request), request.params.address);
      return reply.status(204).send();
    },
  );

  const agentTags = ['agents'];
  r.post(
    '/api/agents',
    {
      schema: {
        operationId: 'createAgent',
        errors: ['FORBIDDEN'],
        tags: agentTags,
        summary: 'Create an agent (201).',
        body: createAgentInput,
        response: { 201: agent },
      },
    },
    async (request, reply) => reply.status(201).send(await createAgent(ctx, actorOf(request), request.body)),
  );
  r.get(
    '/api/agents',
    {
      schema: {
        operationId: 'listAgents',
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
        tags: agentTags,
        summary: 'Agents of the account, oldest first; limit 1–200 (default 50); nextCursor null on the last page.',
        querystring: pageQuery,
        response: { 200: z.object({ agents: z.array(agent), nextCursor: z.string().nullable() }) },
      },
    },
    async (request) => listAgents(ctx, actorOf(request), request.query),
  );
  r.get(
    '/api/agents/:id',
    {
      schema: {
        operationId: 'getAgent',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags: agentTags,
        summary: 'One agent.',
        params: idParams,
        response: { 200: agent },
      },
    },
    async (request) => getAgent(ctx, actorOf(request), request.params.id),
  );
  r.patch(
    '/api/agents/:id',
    {
      schema: {
        operationId: 'updateAgent',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'AGENT_ASSIGNED'],
        tags: agentTags,
        summary: 'Change any agent field.',
        params: idParams,
        body: updateAgentInput,
        response: { 200: agent },
      },
    },
    async (request) => updateAgent(ctx, actorOf(request), request.params.id, request.body),
  );
  r.delete(
    '/api/agents/:id',
    {
      schema: {
        operationId: 'deleteAgent',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags: agentTags,
        summary: 'Delete an agent (204); its identities are unassigned.',
        params: idParams,
        response: { 204: z.undefined().describe('Deleted.') },
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
        operationId: 'addKnowledgeDocument',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'KNOWLEDGE_LIMIT_REACHED'],
        tags: agentTags,
        summary: 'Add a knowledge document (201).',
        params: idParams,
        body: addKnowledgeInput,
        response: { 201: knowledgeDocument },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await addKnowledgeDocument(ctx, actorOf(request), request.params.id, request.body)),
  );
  r.get(
    '/api/agents/:id/knowledge',
    {
      schema: {
        operationId: 'listKnowledgeDocuments',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'INVALID_CURSOR'],
        tags: agentTags,
        summary:
          'The agent’s knowledge documents, oldest first; limit 1–200 (default 50); nextCursor null on the last page.',
        params: idParams,
        querystring: pageQuery,
        response: { 200: z.object({ documents: z.array(knowledgeDocument), nextCursor: z.string().nullable() }) },
      },
    },
    async (request) => listKnowledgeDocuments(ctx, actorOf(request), request.params.id, request.query),
  );
  r.delete(
    '/api/agents/:id/knowledge/:documentId',
    {
      schema: {
        operationId: 'deleteKnowledgeDocument',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags: agentTags,
        response: { 204: z.undefined().describe('Deleted.') },
        summary: 'Delete a knowledge document (204).',
        params: z.object({ id: resourceId, documentId: resourceId }),
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
z.globalRegistry.add(smtpCredentials, {
  id: 'SmtpCredentials',
  description: 'Where and how a mail client submits as the identity (implicit TLS, AUTH PLAIN or LOGIN).',
});
z.globalRegistry.add(threadSummary, { id: 'ThreadSummary', description: 'A thread without its messages.' });
z.globalRegistry.add(message, { id: 'EmailMessage', description: 'One message of a thread, in or out.' });
z.globalRegistry.add(sent, { id: 'SentEmail', description: 'The queued message and its thread.' });
z.globalRegistry.add(agent, { id: 'Agent', description: 'An email agent that answers inbound mail.' });
z.globalRegistry.add(knowledgeDocument, { id: 'KnowledgeDocument', description: 'A document an agent answers from.' });
// Request bodies, named where they are used (the domain declares them; the document shows them as `<Name>`).
z.globalRegistry.add(createIdentityInput, { id: 'IdentityCreate' });
z.globalRegistry.add(updateIdentityInput, { id: 'IdentityUpdate' });
z.globalRegistry.add(sendEmailInput, { id: 'EmailSend' });
z.globalRegistry.add(replyInput, { id: 'EmailReply' });
z.globalRegistry.add(createAgentInput, { id: 'AgentCreate' });
z.globalRegistry.add(updateAgentInput, { id: 'AgentUpdate' });
z.globalRegistry.add(addKnowledgeInput, { id: 'KnowledgeDocumentCreate' });
