import {
  createWebhookInput,
  redeliverFailedInput,
  testWebhookInput,
  webhookLogsQuery,
} from '../../domain/webhooks/webhook.schemas.js';
import {
  createWebhook,
  type DeliveryAttempted,
  type DeliveryLogEntry,
  deleteWebhook,
  getWebhook,
  listWebhookLogs,
  listWebhooks,
  openDeliveryAttempts,
  redeliverDelivery,
  redeliverFailedSince,
  rotateWebhookSecret,
  testWebhook,
  type WebhookView,
} from '../../domain/webhooks/webhook.service.js';
import { builder } from '../builder.js';
import { parseArgs } from '../parse-args.js';

const WebhookDeliveryAttempt = builder
  .objectRef<DeliveryLogEntry['attemptHistory'][number]>('WebhookDeliveryAttempt')
  .implement({
    description: 'One attempt of a delivery.',
    fields: (t) => ({
      attempt: t.exposeInt('attempt', { description: 'Attempt number, 1 to 5.' }),
      at: t.field({ type: 'DateTime', description: 'When the attempt started.', resolve: (a) => a.at }),
      responseCode: t.exposeInt('responseCode', {
        nullable: true,
        description: 'HTTP status answered; null when no answer came.',
      }),
      error: t.exposeString('error', {
        nullable: true,
        description: 'Why it failed (refused address, timeout, status…).',
      }),
      durationMs: t.exposeInt('durationMs', { description: 'Duration in milliseconds.' }),
    }),
  });

const WebhookDelivery = builder.objectRef<DeliveryLogEntry>('WebhookDelivery').implement({
  description: 'A delivery log entry (spec 2.9): one event (or test example) delivered to one webhook.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Delivery id; also the `webhook-id` and `X-Switchboard-Delivery` header.' }),
    eventType: t.exposeString('eventType', { description: 'Event type delivered.' }),
    status: t.exposeString('status', { description: 'pending | delivered | failed | cancelled.' }),
    attempts: t.exposeInt('attempts', { description: 'Attempts made so far (at most 5).' }),
    responseCode: t.exposeInt('responseCode', {
      nullable: true,
      description: 'HTTP status of the last answer; null when none.',
    }),
    createdAt: t.field({
      type: 'DateTime',
      description: 'When the delivery was created.',
      resolve: (d) => d.createdAt,
    }),
    kind: t.exposeString('kind', { description: 'event | test | redelivery.' }),
    eventId: t.exposeString('eventId', { nullable: true, description: 'Event log id; null for test deliveries.' }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the next attempt is due; null once final.',
      resolve: (d) => d.nextAttemptAt,
    }),
    lastError: t.exposeString('lastError', { nullable: true, description: 'Why the last attempt failed.' }),
    redeliveryOf: t.exposeString('redeliveryOf', {
      nullable: true,
      description: 'The failed delivery this one redelivers.',
    }),
    attemptHistory: t.field({
      type: [WebhookDeliveryAttempt],
      description: 'Every attempt, oldest first.',
      resolve: (d) => d.attemptHistory,
    }),
  }),
});

const Webhook = builder.objectRef<WebhookView>('Webhook').implement({
  description: 'A webhook (spec 2.8). Its secret is returned only by createWebhook and rotateWebhookSecret.',
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.exposeString('url', { description: 'Receiving URL.' }),
    events: t.exposeStringList('events', { description: 'Event types or glob patterns (spec 6.1).' }),
    active: t.exposeBoolean('active', { description: 'False once deleted or disabled (410 Gone).' }),
    disabledReason: t.exposeString('disabledReason', { nullable: true, description: 'Why it is inactive.' }),
    createdAt: t.field({ type: 'DateTime', resolve: (w) => w.createdAt }),
    logs: t.field({
      type: [WebhookDelivery],
      description: 'Delivery log, newest first (limit default 50, max 200).',
      args: { limit: t.arg.int() },
      resolve: (w, args, ctx) =>
        listWebhookLogs(ctx.app, ctx.actor, w.id, parseArgs(ctx, 'webhooks', webhookLogsQuery, { limit: args.limit })),
    }),
  }),
});

const CreateWebhookInput = builder.inputType('CreateWebhookInput', {
  description: 'A webhook to register; both fields required.',
  fields: (t) => ({
    url: t.string({ required: true, description: 'Absolute http(s) URL.' }),
    events: t.stringList({ required: true, description: 'Event types or glob patterns, e.g. ["sms.*"].' }),
  }),
});

const CreateWebhookPayload = builder
  .objectRef<{ webhook: WebhookView; secret: string }>('CreateWebhookPayload')
  .implement({
    description: 'The new webhook and its secret, shown only here.',
    fields: (t) => ({
      webhook: t.field({ type: Webhook, resolve: (p) => p.webhook }),
      secret: t.exposeString('secret', { description: '`whsec_<base64 of 32 random bytes>`; shown only here.' }),
    }),
  });

const DeleteWebhookPayload = builder
  .objectRef<{ id: string; deleted: true; cancelledDeliveries: number }>('DeleteWebhookPayload')
  .implement({
    description: 'Result of deleting a webhook.',
    fields: (t) => ({
      id: t.exposeID('id'),
      deleted: t.exposeBoolean('deleted'),
      cancelledDeliveries: t.exposeInt('cancelledDeliveries', { description: 'Pending deliveries cancelled.' }),
    }),
  });

const RotateWebhookSecretPayload = builder
  .objectRef<{ id: string; secret: string; previousSecretExpiresAt: string }>('RotateWebhookSecretPayload')
  .implement({
    description: 'The new secret (shown only here); the previous one keeps signing until previousSecretExpiresAt.',
    fields: (t) => ({
      id: t.exposeID('id'),
      secret: t.exposeString('secret'),
      previousSecretExpiresAt: t.field({ type: 'DateTime', resolve: (p) => p.previousSecretExpiresAt }),
    }),
  });

const RedeliverPayload = builder
  .objectRef<{ count: number; deliveries: DeliveryLogEntry[] }>('RedeliverWebhookDeliveriesPayload')
  .implement({
    description: 'Redeliveries created.',
    fields: (t) => ({
      count: t.exposeInt('count'),
      deliveries: t.field({ type: [WebhookDelivery], resolve: (p) => p.deliveries }),
    }),
  });

builder.queryFields((t) => ({
  webhooks: t.field({
    type: [Webhook],
    description: 'The account’s webhooks (GET /api/webhooks).',
    resolve: (_root, _args, ctx) => listWebhooks(ctx.app, ctx.actor),
  }),
  webhook: t.field({
    type: Webhook,
    description: 'One webhook; NOT_FOUND for another account’s id.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getWebhook(ctx.app, ctx.actor, String(args.id)),
  }),
  webhookLogs: t.field({
    type: [WebhookDelivery],
    description: 'Delivery log of a webhook, newest first (GET /api/webhooks/{id}/logs).',
    args: { webhookId: t.arg.id({ required: true }), limit: t.arg.int() },
    resolve: (_root, args, ctx) =>
      listWebhookLogs(
        ctx.app,
        ctx.actor,
        String(args.webhookId),
        parseArgs(ctx, 'webhooks', webhookLogsQuery, { limit: args.limit }),
      ),
  }),
}));

builder.mutationFields((t) => ({
  createWebhook: t.field({
    type: CreateWebhookPayload,
    description: 'Registers a webhook (POST /api/webhooks); the secret is returned only here.',
    args: { input: t.arg({ type: CreateWebhookInput, required: true }) },
    resolve: async (_root, args, ctx) => {
      const { secret, ...webhook } = await createWebhook(
        ctx.app,
        ctx.actor,
        parseArgs(ctx, 'webhooks', createWebhookInput, args.input, { keepNulls: true }),
      );
      return { webhook, secret };
    },
  }),
  deleteWebhook: t.field({
    type: DeleteWebhookPayload,
    description: 'Deletes a webhook and cancels its pending deliveries.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => deleteWebhook(ctx.app, ctx.actor, String(args.id)),
  }),
  rotateWebhookSecret: t.field({
    type: RotateWebhookSecretPayload,
    description: 'Rotates the secret; both signatures are sent for 24 h.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => rotateWebhookSecret(ctx.app, ctx.actor, String(args.id)),
  }),
  testWebhook: t.field({
    type: WebhookDelivery,
    description: 'Sends a signed example of an event type now (one attempt) and logs it.',
    args: { id: t.arg.id({ required: true }), eventType: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) =>
      testWebhook(
        ctx.app,
        ctx.actor,
        String(args.id),
        parseArgs(ctx, 'webhooks', testWebhookInput, { eventType: args.eventType }),
      ),
  }),
  redeliverWebhookDelivery: t.field({
    type: WebhookDelivery,
    description: 'Redelivers one failed delivery (a new delivery with the full retry schedule).',
    args: { webhookId: t.arg.id({ required: true }), deliveryId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) =>
      redeliverDelivery(ctx.app, ctx.actor, String(args.webhookId), String(args.deliveryId)),
  }),
  redeliverFailedWebhookDeliveries: t.field({
    type: RedeliverPayload,
    description: 'Redelivers every failed delivery of the webhook created at or after `since`.',
    args: { webhookId: t.arg.id({ required: true }), since: t.arg({ type: 'DateTime', required: true }) },
    resolve: (_root, args, ctx) =>
      redeliverFailedSince(
        ctx.app,
        ctx.actor,
        String(args.webhookId),
        parseArgs(ctx, 'webhooks', redeliverFailedInput, { since: args.since.toISOString() }),
      ),
  }),
}));

const WebhookDeliveryAttempted = builder.objectRef<DeliveryAttempted>('WebhookDeliveryAttempted').implement({
  description: 'One recorded attempt of a delivery of a webhook, with the delivery re-read after it.',
  fields: (t) => ({
    attempt: t.exposeInt('attempt', { description: '1-based attempt number.' }),
    timestamp: t.exposeString('timestamp', { description: 'When the attempt was recorded (ISO 8601 UTC).' }),
    delivery: t.field({
      type: WebhookDelivery,
      nullable: true,
      description: 'The delivery log entry now (status, attempts, attempt history).',
      resolve: (a) => a.delivery,
    }),
  }),
});

builder.subscriptionFields((t) => ({
  webhookDeliveryAttempted: t.field({
    type: WebhookDeliveryAttempted,
    description:
      'Every attempt of every delivery of one webhook, live (scope webhooks), on every instance. Attempts are not ' +
      'events, so there is no lastEventId: catch up with `webhookLogs`. NOT_FOUND for another account’s webhook.',
    args: { webhookId: t.arg.id({ required: true }) },
    subscribe: (_root, args, ctx) => openDeliveryAttempts(ctx.app, ctx.actor, String(args.webhookId)),
    resolve: (attempt) => attempt,
  }),
}));
