import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import {
  createDraft,
  createDraftInput,
  deleteDraft,
  draftAttachmentParams,
  draftParams,
  getDraft,
  listDrafts,
  listDraftsInput,
  openDraftAttachment,
  sendDraft,
  updateDraft,
  updateDraftInput,
} from '../../domain/email/draft.service.js';
import { attachmentShape, sentShape } from '../../domain/email/email.shapes.js';
import { idParams } from '../../domain/validation.js';
import { actorOf } from '../auth.js';
import { contentRoute, SEND_ERRORS, sendAttachment } from './email-content.js';

/** REST shape of a draft (src/domain/email/draft.service.ts `DraftView`). */
export const draftSchema = z.object({
  draftId: z.string(),
  identityId: z.string(),
  threadId: z.string().nullable().describe('The thread a reply draft answers on; null for a new thread.'),
  to: z.array(z.string()),
  cc: z.array(z.string()),
  bcc: z.array(z.string()),
  replyTo: z.string().nullable(),
  subject: z.string(),
  body: z.string().nullable(),
  html: z.string().nullable(),
  attachments: z.array(attachmentShape.pick({ attachmentId: true, filename: true, contentType: true, size: true })),
  labels: z.array(z.string()),
  inReplyTo: z.string().nullable(),
  references: z.array(z.string()),
  sendAt: z.string().nullable().describe('When the job queue sends it by itself; null: only on request.'),
  createdBy: z.enum(['user', 'agent']),
  reviewReason: z
    .string()
    .nullable()
    .describe('Why a person should look before sending, e.g. SENDER_NOT_AUTHENTICATED; null otherwise.'),
  lastError: z.string().nullable().describe('Why the last scheduled send failed (`CODE: message`); null otherwise.'),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** REST routes of drafts and scheduled send (issue 21 item 3). */
export async function emailDraftRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['email'];
  r.post(
    '/api/email/identities/:id/drafts',
    contentRoute({
      operationId: 'createEmailDraft',
      errors: [
        'FORBIDDEN',
        'NOT_FOUND',
        'IDENTITY_DEPROVISIONING',
        'DRAFT_INCOMPLETE',
        'DRAFT_LIMIT_REACHED',
        'ATTACHMENTS_TOO_LARGE',
      ],
      summary: 'Write a draft (201): the send fields, all optional; threadId makes a reply draft; sendAt schedules it.',
      params: idParams,
      body: createDraftInput,
      response: { 201: draftSchema },
    }),
    async (request, reply) =>
      reply.status(201).send(await createDraft(ctx, actorOf(request), request.params.id, request.body)),
  );
  r.get(
    '/api/email/identities/:id/drafts',
    {
      schema: {
        operationId: 'listEmailDrafts',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'INVALID_CURSOR'],
        tags,
        summary: 'The identity’s drafts, oldest first; limit 1–200, default 50; nextCursor null on the last page.',
        params: idParams,
        querystring: listDraftsInput,
        response: { 200: z.object({ drafts: z.array(draftSchema), nextCursor: z.string().nullable() }) },
      },
    },
    async (request) => listDrafts(ctx, actorOf(request), request.params.id, request.query),
  );
  r.get(
    '/api/email/identities/:id/drafts/:draftId',
    {
      schema: {
        operationId: 'getEmailDraft',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'One draft.',
        params: draftParams,
        response: { 200: draftSchema },
      },
    },
    async (request) => getDraft(ctx, actorOf(request), request.params.id, request.params.draftId),
  );
  r.get(
    '/api/email/identities/:id/drafts/:draftId/attachments/:attachmentId',
    {
      schema: {
        operationId: 'downloadEmailDraftAttachment',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'A draft attachment’s bytes (its content type, Content-Disposition with its filename), streamed.',
        params: draftAttachmentParams,
      },
    },
    async (request, reply) => {
      const { attachment, stream } = await openDraftAttachment(
        ctx,
        actorOf(request),
        request.params.id,
        request.params.draftId,
        request.params.attachmentId,
      );
      return sendAttachment(reply, attachment, stream, attachment.size);
    },
  );
  r.patch(
    '/api/email/identities/:id/drafts/:draftId',
    contentRoute({
      operationId: 'updateEmailDraft',
      errors: ['FORBIDDEN', 'NOT_FOUND', 'DRAFT_SENDING', 'DRAFT_INCOMPLETE', 'ATTACHMENTS_TOO_LARGE'],
      summary:
        'Change a draft; null clears replyTo, body, html or sendAt (clearing sendAt cancels the scheduled send).',
      params: draftParams,
      body: updateDraftInput,
      response: { 200: draftSchema },
    }),
    async (request) => updateDraft(ctx, actorOf(request), request.params.id, request.params.draftId, request.body),
  );
  r.delete(
    '/api/email/identities/:id/drafts/:draftId',
    {
      schema: {
        operationId: 'deleteEmailDraft',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'DRAFT_SENDING'],
        tags,
        summary: 'Delete a draft and cancel its scheduled send (204).',
        params: draftParams,
        response: { 204: z.undefined().describe('Deleted.') },
      },
    },
    async (request, reply) => {
      await deleteDraft(ctx, actorOf(request), request.params.id, request.params.draftId);
      return reply.status(204).send();
    },
  );
  r.post(
    '/api/email/identities/:id/drafts/:draftId/send',
    {
      schema: {
        operationId: 'sendEmailDraft',
        errors: [...SEND_ERRORS, 'DRAFT_SENDING', 'DRAFT_INCOMPLETE'],
        tags,
        summary: 'Send the draft now (202 {messageId, threadId}); the draft is deleted.',
        params: draftParams,
        response: { 202: sentShape },
      },
    },
    async (request, reply) =>
      reply.status(202).send(await sendDraft(ctx, actorOf(request), request.params.id, request.params.draftId)),
  );
}
