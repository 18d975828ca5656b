import { resolveArrayConnection, resolveCursorConnection } from '@pothos/plugin-relay';
import { requireScope } from '../../domain/accounts/account.service.js';
import {
  createWebhookInput,
  deliveryAttemptShape,
  deliveryLogEntryShape,
  redeliverFailedInput,
  testWebhookInput,
  updateWebhookInput,
  webhookLogsQuery,
  webhookShape,
} from '../../domain/webhooks/webhook.schemas.js';
import {
  createWebhook,
  DELIVERY_KINDS,
  DELIVERY_STATUSES,
  type DeliveryAttempted,
  type DeliveryLogEntry,
  deleteWebhook,
  getWebhook,
  listWebhookLogs,
  listWebhooks,
  openDeliveryAttempts,
  pageWebhookLogs,
  redeliverDelivery,
  redeliverFailedSince,
  rotateWebhookSecret,
  testWebhook,
  updateWebhook,
  type WebhookView,
  webhookLogCursor,
} from '../../domain/webhooks/webhook.service.js';
import { builder } from '../builder.js';
import { TOTAL_COUNT_DESCRIPTION } from '../connections.js';
import { parseArgs } from '../parse-args.js';
import { shapeFields } from '../shape-fields.js';
import { type Change, changesOf, countedFeed, orNull, payloadString, topicId } from '../subscriptions.js';
import { NodeRef } from './node.js';

const WebhookDeliveryStatusEnum = builder.enumType('WebhookDeliveryStatus', {
  description:
    'pending (attempts left), delivered (a 2xx answer), failed (attempts exhausted), cancelled (webhook deleted).',
  values: DELIVERY_STATUSES,
});
const WebhookDeliveryKindEnum = builder.enumType('WebhookDeliveryKind', {
  description: 'event (an event of the log), test (testWebhook), redelivery (of a failed delivery).',
  values: DELIVERY_KINDS,
});

const WebhookDeliveryAttempt = builder
  .objectRef<DeliveryLogEntry['attemptHistory'][number]>('WebhookDeliveryAttempt')
  .implement({
    description: 'One attempt of a delivery.',
    // The fields are the domain's declaration (webhook.schemas.ts), as the REST answer's.
    fields: (t) => shapeFields(t, deliveryAttemptShape),
  });

const WebhookDelivery = builder.objectRef<DeliveryLogEntry>('WebhookDelivery').implement({
  interfaces: [NodeRef],
  description: 'A delivery log entry (spec 2.9): one event (or test example) delivered to one webhook.',
  fields: (t) =>
    shapeFields(t, deliveryLogEntryShape, {
      ids: ['id'],
      custom: {
        status: t.field({ type: WebhookDeliveryStatusEnum, resolve: (d) => d.status }),
        kind: t.field({ type: WebhookDeliveryKindEnum, resolve: (d) => d.kind }),
        attemptHistory: t.field({
          type: [WebhookDeliveryAttempt],
          description: deliveryLogEntryShape.shape.attemptHistory.description,
          resolve: (d) => d.attemptHistory,
        }),
      },
    }),
});

const Webhook = builder.objectRef<WebhookView>('Webhook').implement({
  interfaces: [NodeRef],
  description: 'A webhook (spec 2.8). Its secret is returned only by createWebhook and rotateWebhookSecret.',
  fields: (t) =>
    shapeFields(t, webhookShape, {
      ids: ['id'],
      custom: {
        logs: t.field({
          type: [WebhookDelivery],
          description: 'Delivery log, newest first (limit default 50, max 200).',
          args: { limit: t.arg.int() },
          resolve: (w, args, ctx) =>
            listWebhookLogs(
              ctx.app,
              ctx.actor,
              w.id,
              parseArgs(ctx, 'webhooks', webhookLogsQuery, { limit: args.limit }),
            ).then((p) => p.logs),
        }),
      },
    }),
});

const CreateWebhookInput = builder.inputType('CreateWebhookInput', {
  description: 'A webhook to register; url and events required.',
  fields: (t) => ({
    url: t.string({ required: true, description: 'Absolute http(s) URL.' }),
    events: t.stringList({ required: true, description: 'Event types or glob patterns, e.g. ["sms.*"].' }),
    description: t.string({ description: 'Free text, at most 500 characters.' }),
  }),
});

const UpdateWebhookInput = builder.inputType('UpdateWebhookInput', {
  description: 'The webhook and the fields to change (PATCH /api/webhooks/{id}); absent fields keep their value.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'The webhook.' }),
    url: t.string({ description: 'Absolute http(s) URL.' }),
    events: t.stringList({ description: 'Event types or glob patterns.' }),
    description: t.string({ description: 'Free text; null clears it.' }),
    enabled: t.boolean({
      description: 'false disables the endpoint; true re-enables it and its cancelled-by-disable deliveries.',
    }),
  }),
});

const UpdateWebhookPayload = builder.objectRef<{ webhook: WebhookView }>('UpdateWebhookPayload').implement({
  description: 'The webhook after the change.',
  fields: (t) => ({ webhook: t.field({ type: Webhook, resolve: (p) => p.webhook }) }),
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
      deletedWebhookId: t.exposeID('id'),
      cancelledDeliveries: t.exposeInt('cancelledDeliveries', { description: 'Pending deliveries cancelled.' }),
    }),
  });

const RotateWebhookSecretPayload = builder
  .objectRef<{ id: string; secret: string; previousSecretExpiresAt: string }>('RotateWebhookSecretPayload')
  .implement({
    description: 'The new secret (shown only here); the previous one keeps signing until previousSecretExpiresAt.',
    fields: (t) => ({
      webhookId: t.exposeID('id'),
      secret: t.exposeString('secret'),
      previousSecretExpiresAt: t.field({ type: 'DateTime', resolve: (p) => p.previousSecretExpiresAt }),
    }),
  });

const RedeliverFailedWebhookDeliveriesPayload = builder
  .objectRef<{ count: number; deliveries: DeliveryLogEntry[] }>('RedeliverFailedWebhookDeliveriesPayload')
  .implement({
    description: 'Redeliveries created.',
    fields: (t) => ({
      count: t.exposeInt('count'),
      deliveries: t.field({ type: [WebhookDelivery], resolve: (p) => p.deliveries }),
    }),
  });

/** `<Verb>WebhookDeliveryPayload { delivery }`: the delivery log entry created. */
const deliveryPayload = (name: string, description: string) =>
  builder.objectRef<{ delivery: DeliveryLogEntry }>(name).implement({
    description,
    fields: (t) => ({ delivery: t.field({ type: WebhookDelivery, resolve: (p) => p.delivery }) }),
  });
const TestWebhookPayload = deliveryPayload('TestWebhookPayload', 'The test delivery, after its one attempt.');
const RedeliverWebhookDeliveryPayload = deliveryPayload(
  'RedeliverWebhookDeliveryPayload',
  'The new delivery (full retry schedule).',
);

const webhookIdInput = (name: string, description: string) =>
  builder.inputType(name, {
    description,
    fields: (t) => ({ id: t.id({ required: true, description: 'The webhook.' }) }),
  });
const DeleteWebhookInput = webhookIdInput('DeleteWebhookInput', 'The webhook to delete.');
const RotateWebhookSecretInput = webhookIdInput('RotateWebhookSecretInput', 'The webhook whose secret to rotate.');

const TestWebhookInput = builder.inputType('TestWebhookInput', {
  description: 'The webhook and the event type whose signed example to send.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'The webhook.' }),
    eventType: t.string({ required: true, description: 'A catalog event type (query `eventCatalog`).' }),
  }),
});

const RedeliverWebhookDeliveryInput = builder.inputType('RedeliverWebhookDeliveryInput', {
  description: 'One failed delivery of a webhook.',
  fields: (t) => ({ webhookId: t.id({ required: true }), deliveryId: t.id({ required: true }) }),
});

const RedeliverFailedWebhookDeliveriesInput = builder.inputType('RedeliverFailedWebhookDeliveriesInput', {
  description: 'The webhook and the time from which its failed deliveries are redelivered.',
  fields: (t) => ({
    webhookId: t.id({ required: true }),
    since: t.field({ type: 'DateTime', required: true, description: 'Deliveries created at or after this.' }),
  }),
});

builder.queryFields((t) => ({
  webhooks: t.connection(
    {
      type: Webhook,
      description:
        'The account’s webhooks, oldest first (GET /api/webhooks; at most MAX_WEBHOOKS_PER_ACCOUNT, so the page is cut ' +
        'from the whole list, read once).',
      resolve: async (_root, args, ctx) => {
        const all = await listWebhooks(ctx.app, ctx.actor);
        return Object.assign(resolveArrayConnection({ args }, all), { totalCount: all.length });
      },
    },
    {
      name: 'WebhookConnection',
      fields: (tc) => ({
        totalCount: tc.int({ description: TOTAL_COUNT_DESCRIPTION, resolve: (c) => c.totalCount }),
      }),
    },
    { name: 'WebhookEdge' },
  ),
  webhook: t.field({
    type: Webhook,
    description: 'One webhook; NOT_FOUND for another account’s id.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getWebhook(ctx.app, ctx.actor, String(args.id)),
  }),
  webhookLogs: t.connection(
    {
      type: WebhookDelivery,
      description:
        'Delivery log of a webhook, newest first (Relay connection; GET /api/webhooks/{id}/logs with the same ' +
        'cursors): `first`/`after` reach older entries. NOT_FOUND for another account’s webhook.',
      args: { webhookId: t.arg.id({ required: true }) },
      resolve: (_root, args, ctx) =>
        resolveCursorConnection<Promise<DeliveryLogEntry[]>>({ args, toCursor: webhookLogCursor }, (window) =>
          pageWebhookLogs(ctx.app, ctx.actor, String(args.webhookId), window),
        ),
    },
    { name: 'WebhookDeliveryConnection' },
    { name: 'WebhookDeliveryEdge' },
  ),
}));

builder.mutationFields((t) => ({
  createWebhook: t.field({
    type: CreateWebhookPayload,
    errors: {},
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
  updateWebhook: t.field({
    type: UpdateWebhookPayload,
    errors: {},
    description:
      'Changes url, events, description or enabled (PATCH /api/webhooks/{id}); enabled: true re-enables a disabled ' +
      'endpoint and makes its deliveries cancelled by the disable pending again.',
    args: { input: t.arg({ type: UpdateWebhookInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const { id, ...fields } = input;
      return {
        webhook: await updateWebhook(
          ctx.app,
          ctx.actor,
          String(id),
          parseArgs(ctx, 'webhooks', updateWebhookInput, fields, { keepNulls: true }),
        ),
      };
    },
  }),
  deleteWebhook: t.field({
    type: DeleteWebhookPayload,
    errors: {},
    description: 'Deletes a webhook and cancels its pending deliveries.',
    args: { input: t.arg({ type: DeleteWebhookInput, required: true }) },
    resolve: (_root, args, ctx) => deleteWebhook(ctx.app, ctx.actor, String(args.input.id)),
  }),
  rotateWebhookSecret: t.field({
    type: RotateWebhookSecretPayload,
    errors: {},
    description: 'Rotates the secret; both signatures are sent for 24 h.',
    args: { input: t.arg({ type: RotateWebhookSecretInput, required: true }) },
    resolve: (_root, args, ctx) => rotateWebhookSecret(ctx.app, ctx.actor, String(args.input.id)),
  }),
  testWebhook: t.field({
    type: TestWebhookPayload,
    errors: {},
    description: 'Sends a signed example of an event type now (one attempt) and logs it.',
    args: { input: t.arg({ type: TestWebhookInput, required: true }) },
    resolve: async (_root, { input }, ctx) => ({
      delivery: await testWebhook(
        ctx.app,
        ctx.actor,
        String(input.id),
        parseArgs(ctx, 'webhooks', testWebhookInput, { eventType: input.eventType }),
      ),
    }),
  }),
  redeliverWebhookDelivery: t.field({
    type: RedeliverWebhookDeliveryPayload,
    errors: {},
    description: 'Redelivers one failed delivery (a new delivery with the full retry schedule).',
    args: { input: t.arg({ type: RedeliverWebhookDeliveryInput, required: true }) },
    resolve: async (_root, { input }, ctx) => ({
      delivery: await redeliverDelivery(ctx.app, ctx.actor, String(input.webhookId), String(input.deliveryId)),
    }),
  }),
  redeliverFailedWebhookDeliveries: t.field({
    type: RedeliverFailedWebhookDeliveriesPayload,
    errors: {},
    description: 'Redelivers every failed delivery of the webhook created at or after `since`.',
    args: { input: t.arg({ type: RedeliverFailedWebhookDeliveriesInput, required: true }) },
    resolve: (_root, { input }, ctx) =>
      redeliverFailedSince(
        ctx.app,
        ctx.actor,
        String(input.webhookId),
        parseArgs(ctx, 'webhooks', redeliverFailedInput, { since: input.since.toISOString() }),
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

const WebhookChangeRef = builder.objectRef<Change<WebhookView>>('WebhookChange').implement({
  description:
    'A change of a webhook endpoint (created, updated, disabled, re-enabled, secret rotated, deleted) and the ' +
    'webhook re-read after it. Never carries a secret.',
  fields: (t) => ({
    eventId: t.exposeString('eventId', { description: 'Event id; pass it as `lastEventId` to resume after it.' }),
    eventType: t.exposeString('eventType', {
      description: 'webhook.created, webhook.updated, webhook.disabled (a 410), webhook.deleted.',
    }),
    timestamp: t.exposeString('timestamp', { description: 'When the event was recorded (ISO 8601 UTC).' }),
    changes: t.stringList({
      description: 'For webhook.updated: the fields that changed (url, events, description, enabled, secret).',
      resolve: (c) => (Array.isArray(c.payload.changes) ? c.payload.changes.map(String) : []),
    }),
    webhook: t.field({
      type: Webhook,
      nullable: true,
      description: 'The webhook now; null once deleted.',
      resolve: (c) => c.node,
    }),
  }),
});

/** The `webhook` channel's events about an endpoint (not `webhook.delivery.failed`, which is about a delivery). */
const ENDPOINT_EVENTS = new Set(['webhook.created', 'webhook.updated', 'webhook.disabled', 'webhook.deleted']);

builder.subscriptionFields((t) => ({
  webhookUpdated: t.field({
    type: WebhookChangeRef,
    description:
      'Changes of one webhook endpoint, or of every webhook of the account when `id` is omitted: created, updated, ' +
      'disabled (a 410 or the API), re-enabled, secret rotated (never the secret), deleted (scopes webhooks and ' +
      'events:read). With `lastEventId`, first the changes after it, then live ones, on every instance (Redis). ' +
      'NOT_FOUND for another account’s webhook.',
    args: {
      id: t.arg.id({ description: 'The webhook; omitted: every webhook of the account.' }),
      lastEventId: t.arg.string({ description: 'Resume after this event id.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const id = args.id === null || args.id === undefined ? undefined : String(args.id);
      if (id) await getWebhook(ctx.app, ctx.actor, id);
      else requireScope(ctx.actor, 'webhooks');
      return changesOf(ctx, {
        channels: ['webhook'],
        topic: ['webhook', topicId(id)],
        lastEventId: args.lastEventId,
        matches: (e) => {
          const webhookId = payloadString(e, 'webhookId');
          return ENDPOINT_EVENTS.has(e.eventType) && webhookId !== undefined && (id === undefined || webhookId === id);
        },
        load: (e) => orNull(getWebhook(ctx.app, ctx.actor, payloadString(e, 'webhookId')!)),
      });
    },
    resolve: (change) => change,
  }),
  webhookDeliveryAttempted: t.field({
    type: WebhookDeliveryAttempted,
    description:
      'Every attempt of every delivery of one webhook, live (scope webhooks), on every instance. Attempts are not ' +
      'events, so there is no lastEventId: catch up with `webhookLogs`. NOT_FOUND for another account’s webhook.',
    args: { webhookId: t.arg.id({ required: true }) },
    subscribe: (_root, args, ctx) =>
      countedFeed(ctx, (onEnd) => openDeliveryAttempts(ctx.app, ctx.actor, String(args.webhookId), onEnd)),
    resolve: (attempt) => attempt,
  }),
}));
