import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { idParams, resourceId } from '../../domain/validation.js';
import {
  createWebhookInput,
  deliveryLogEntryShape,
  redeliverFailedInput,
  testWebhookInput,
  updateWebhookInput,
  webhookListQuery,
  webhookLogsQuery,
  webhookShape,
} from '../../domain/webhooks/webhook.schemas.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookLogs,
  pageWebhooks,
  redeliverDelivery,
  redeliverFailedSince,
  rotateWebhookSecret,
  testWebhook,
  updateWebhook,
} from '../../domain/webhooks/webhook.service.js';
import { actorOf } from '../auth.js';

// The response shapes are the domain's declarations of the nouns (webhook.schemas.ts).
const logShape = deliveryLogEntryShape;

/** REST routes of the webhooks area (spec 4.6 plus rotation, test and redelivery; README "Webhooks"). */
export async function webhooksRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['webhooks'];

  r.post(
    '/api/webhooks',
    {
      schema: {
        operationId: 'createWebhook',
        errors: ['FORBIDDEN', 'WEBHOOK_LIMIT_REACHED', 'URL_NOT_PUBLIC'],
        tags,
        summary: 'Register a webhook; the answer carries its secret, shown only here (201).',
        body: createWebhookInput,
        response: { 201: createdWebhook },
      },
    },
    async (request, reply) => reply.status(201).send(await createWebhook(ctx, actorOf(request), request.body)),
  );

  r.get(
    '/api/webhooks',
    {
      schema: {
        operationId: 'listWebhooks',
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
        tags,
        summary: 'List the account’s webhooks, oldest first (never their secrets); `limit` and `cursor` page it.',
        querystring: webhookListQuery,
        response: { 200: z.object({ webhooks: z.array(webhookShape), nextCursor: z.string().nullable() }) },
      },
    },
    async (request) => pageWebhooks(ctx, actorOf(request), request.query),
  );

  r.get(
    '/api/webhooks/:id',
    {
      schema: {
        operationId: 'getWebhook',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'One webhook.',
        params: idParams,
        response: { 200: webhookShape },
      },
    },
    async (request) => getWebhook(ctx, actorOf(request), request.params.id),
  );

  r.patch(
    '/api/webhooks/:id',
    {
      schema: {
        operationId: 'updateWebhook',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'URL_NOT_PUBLIC'],
        tags,
        summary:
          'Change url, events, description or enabled; `enabled: true` re-enables a disabled endpoint (e.g. after a ' +
          '410) and its deliveries cancelled by the disable are pending again.',
        params: idParams,
        body: updateWebhookInput,
        response: { 200: webhookShape },
      },
    },
    async (request) => updateWebhook(ctx, actorOf(request), request.params.id, request.body),
  );

  r.delete(
    '/api/webhooks/:id',
    {
      schema: {
        operationId: 'deleteWebhook',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'Delete a webhook and cancel its pending deliveries.',
        params: idParams,
        response: {
          200: z.object({ id: z.string(), deleted: z.literal(true), cancelledDeliveries: z.number() }),
        },
      },
    },
    async (request) => deleteWebhook(ctx, actorOf(request), request.params.id),
  );

  r.get(
    '/api/webhooks/:id/logs',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'Delivery log of a webhook, newest first.',
        params: idParams,
        querystring: webhookLogsQuery,
        response: { 200: z.object({ logs: z.array(logShape), nextCursor: z.string().nullable() }) },
      },
    },
    async (request) => listWebhookLogs(ctx, actorOf(request), request.params.id, request.query),
  );

  r.post(
    '/api/webhooks/:id/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'WEBHOOK_CHANGED'],
        tags,
        summary: 'Rotate the secret: the new one is shown only here; the old one keeps signing for 24 h.',
        params: idParams,
        response: {
          200: z.object({ id: z.string(), secret: z.string(), previousSecretExpiresAt: z.string() }),
        },
      },
    },
    async (request) => rotateWebhookSecret(ctx, actorOf(request), request.params.id),
  );

  r.post(
    '/api/webhooks/:id/test',
    {
      schema: {
        operationId: 'testWebhook',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'Send a signed example of an event type now (one attempt) and log it.',
        params: idParams,
        body: testWebhookInput,
        response: { 200: logShape },
      },
    },
    async (request) => testWebhook(ctx, actorOf(request), request.params.id, request.body),
  );

  r.post(
    '/api/webhooks/:id/logs/:deliveryId/redeliver',
    {
      schema: {
        operationId: 'redeliverWebhookDelivery',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'DELIVERY_NOT_FAILED', 'WEBHOOK_INACTIVE'],
        tags,
        summary: 'Redeliver one failed delivery (a new delivery with the full retry schedule; 202).',
        params: z.object({ id: resourceId, deliveryId: resourceId }),
        response: { 202: logShape },
      },
    },
    async (request, reply) =>
      reply
        .status(202)
        .send(await redeliverDelivery(ctx, actorOf(request), request.params.id, request.params.deliveryId)),
  );

  r.post(
    '/api/webhooks/:id/redeliver',
    {
      schema: {
        operationId: 'redeliverFailedWebhookDeliveries',
        errors: ['FORBIDDEN', 'NOT_FOUND', 'WEBHOOK_INACTIVE'],
        tags,
        summary: 'Redeliver every failed delivery created at or after `since` (202).',
        params: idParams,
        body: redeliverFailedInput,
        response: { 202: z.object({ count: z.number(), deliveries: z.array(logShape) }) },
      },
    },
    async (request, reply) =>
      reply.status(202).send(await redeliverFailedSince(ctx, actorOf(request), request.params.id, request.body)),
  );
}

// OpenAPI component names of the response shapes declared above (docs/openapi.md).
z.globalRegistry.add(webhookShape, { id: 'Webhook', description: 'A webhook (its secret shows only on creation).' });
z.globalRegistry.add(logShape, { id: 'WebhookDelivery', description: 'One delivery to a webhook, with its attempts.' });
const createdWebhook = webhookShape
  .extend({ secret: z.string().describe('The signing secret, shown only here.') })
  .meta({ id: 'CreatedWebhook', description: 'A new webhook with its signing secret.' });
// Request bodies, named where they are used (the domain declares them; the document shows them as `<Name>`).
z.globalRegistry.add(createWebhookInput, { id: 'WebhookCreate' });
z.globalRegistry.add(testWebhookInput, { id: 'WebhookTest' });
z.globalRegistry.add(redeliverFailedInput, { id: 'WebhookRedeliverFailed' });
