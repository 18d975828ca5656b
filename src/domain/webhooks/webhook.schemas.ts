import picomatch from 'picomatch';
import { z } from 'zod';
import { EVENT_TYPES, isEventType } from '../events/event-catalog.js';
import { pageQuery } from '../paging.js';
import { decimalInt } from '../validation.js';

/** Most webhooks one account may have (spec 8 leaves it open). */
export const MAX_WEBHOOKS_PER_ACCOUNT = 100;
/** Default and maximum `limit` of GET /api/webhooks/{id}/logs. */
export const LOGS_DEFAULT_LIMIT = 50;
export const LOGS_MAX_LIMIT = 200;

const matchers = new Map<string, (type: string) => boolean>();

/**
 * The matcher of one `events` entry (spec 6.1): an exact type, or a picomatch glob. Event types contain no `/`,
 * so `*` matches any run of characters, dots included: `voice.*` matches `voice.ai.completed` and `*` every type.
 * Braces (`sms.{sent,failed}`), `?` and character classes work as in picomatch.
 */
export function eventMatcher(pattern: string): (type: string) => boolean {
  let m = matchers.get(pattern);
  if (!m) {
    try {
      const glob = picomatch(pattern, { dot: true });
      m = (type: string) => type === pattern || glob(type);
    } catch {
      m = (type: string) => type === pattern;
    }
    matchers.set(pattern, m);
  }
  return m;
}

/** Whether any entry of a webhook's `events` matches `eventType`. */
export function matchesEvents(events: readonly string[], eventType: string): boolean {
  return events.some((p) => eventMatcher(p)(eventType));
}

/** Whether `entry` is a catalog type or a glob that matches at least one catalog type. */
export function isKnownTypeOrGlob(entry: string): boolean {
  if (isEventType(entry)) return true;
  const m = eventMatcher(entry);
  return EVENT_TYPES.some((t) => m(t));
}

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

function hasNoCredentials(value: string): boolean {
  try {
    const u = new URL(value);
    return u.username === '' && u.password === '';
  } catch {
    return true;
  }
}

const webhookUrl = z
  .string()
  .max(2048)
  .refine(isHttpUrl, { message: 'must be an absolute http:// or https:// URL', params: { code: 'INVALID_FORMAT' } })
  .refine(hasNoCredentials, {
    message: 'must not contain user:password (it would be stored and logged in clear)',
    params: { code: 'INVALID_FORMAT' },
  })
  .describe('Absolute http(s) URL that receives the deliveries.');

const webhookEvents = z
  .array(
    z
      .string()
      .min(1)
      .max(200)
      .refine(isKnownTypeOrGlob, {
        message: 'is neither a known event type nor a pattern matching one (see GET /api/events/catalog)',
        params: { code: 'UNKNOWN_EVENT_TYPE' },
      }),
  )
  .min(1)
  .max(100)
  .describe('Event types or glob patterns (spec 6.1), e.g. ["sms.*", "voice.ai.completed"].');

/** Most characters of a webhook's `description`. */
export const WEBHOOK_DESCRIPTION_MAX = 500;

const webhookDescription = z
  .string()
  .max(WEBHOOK_DESCRIPTION_MAX)
  .describe(`Free text for your own use, at most ${WEBHOOK_DESCRIPTION_MAX} characters.`);

/**
 * Body of POST /api/webhooks and input of `createWebhook`: `url` and `events` required (spec 4.6 leaves it open),
 * `description` optional.
 */
export const createWebhookInput = z
  .object({ url: webhookUrl, events: webhookEvents, description: webhookDescription.nullable().optional() })
  .strict();
/** Parsed createWebhookInput. */
export type CreateWebhookInput = z.output<typeof createWebhookInput>;

/**
 * Body of PATCH /api/webhooks/{id} and input of `updateWebhook` (issue 25): any of `url`, `events`, `description`
 * (null clears it) and `enabled` (false disables the endpoint, true re-enables it, e.g. after a 410 auto-disable);
 * absent fields keep their value, at least one is required.
 */
export const updateWebhookInput = z
  .object({
    url: webhookUrl.optional(),
    events: webhookEvents.optional(),
    description: webhookDescription.nullable().optional(),
    enabled: z.boolean().optional().describe('false disables the endpoint; true re-enables it.'),
  })
  .strict()
  .refine((v) => Object.values(v).some((x) => x !== undefined), {
    message: 'send at least one of url, events, description, enabled',
    params: { code: 'REQUIRED' },
  });
/** Parsed updateWebhookInput. */
export type UpdateWebhookInput = z.output<typeof updateWebhookInput>;

/** Query of GET /api/webhooks/{id}/logs: the one paging rule (docs/conventions.md), newest first. */
export const webhookLogsQuery = z
  .object({
    limit: decimalInt(1, LOGS_MAX_LIMIT)
      .default(LOGS_DEFAULT_LIMIT)
      .describe(`Entries to return, newest first (default ${LOGS_DEFAULT_LIMIT}, max ${LOGS_MAX_LIMIT}).`),
    cursor: z.string().min(1).max(200).optional().describe('`nextCursor` of the previous page (older entries).'),
  })
  .strict();

/** Query of GET /api/webhooks: the one paging rule (docs/conventions.md), oldest first. */
export const webhookListQuery = pageQuery;
/** Parsed webhookListQuery. */
export type WebhookListQuery = z.output<typeof webhookListQuery>;
/** Parsed webhookLogsQuery. */
export type WebhookLogsQuery = z.output<typeof webhookLogsQuery>;

/** Body of POST /api/webhooks/{id}/test. */
export const testWebhookInput = z
  .object({
    eventType: z
      .string()
      .refine(isEventType, { message: 'unknown event type', params: { code: 'UNKNOWN_EVENT_TYPE' } })
      .describe('Catalog event type of the example to send.'),
  })
  .strict();
/** Parsed testWebhookInput. */
export type TestWebhookInput = z.output<typeof testWebhookInput>;

/** Body of POST /api/webhooks/{id}/redeliver: every failed delivery created at or after `since`. */
export const redeliverFailedInput = z
  .object({
    since: z.iso.datetime({ offset: true }).describe('ISO 8601 timestamp; failed deliveries created at or after it.'),
  })
  .strict();
/** Parsed redeliverFailedInput. */
export type RedeliverFailedInput = z.output<typeof redeliverFailedInput>;

// ---- The nouns (issue 23 "one declaration per noun") --------------------------------------------------------------
// The shapes below are THE declaration of a webhook and of a delivery log entry: the domain's types are inferred from
// them, the REST routes answer with them (and OpenAPI shows them), and GraphQL's Webhook / WebhookDelivery types list
// their fields from them (src/graphql/shape-fields.ts). A new field is added here and in the row-to-shape mapping
// (webhook.service.ts `view` / `logEntry`), plus the store's record when it is a new column.

/** Delivery statuses (spec 2.9 shows `delivered`; README "Webhooks" documents the set). */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'cancelled'] as const;
/** Delivery kinds: an event fan-out, a test example, or a manual redelivery. */
export const DELIVERY_KINDS = ['event', 'test', 'redelivery'] as const;

/** A webhook as listed (spec 2.8 list shape, plus why it is inactive); never its secret. */
export const webhookShape = z.object({
  id: z.string(),
  url: z.string().describe('Receiving URL.'),
  events: z.array(z.string()).describe('Event types or glob patterns (spec 6.1).'),
  description: z.string().nullable().describe('Free text; null when none.'),
  active: z.boolean().describe('False once deleted or disabled (410 Gone, or updateWebhook enabled: false).'),
  disabledReason: z.string().nullable().describe('Why it is inactive.'),
  createdAt: z.iso.datetime(),
});

/** One attempt inside a delivery log entry. */
export const deliveryAttemptShape = z.object({
  attempt: z.number().int().describe('Attempt number, 1 to 5.'),
  at: z.iso.datetime().describe('When the attempt started.'),
  responseCode: z.number().int().nullable().describe('HTTP status answered; null when no answer came.'),
  error: z.string().nullable().describe('Why it failed (refused address, timeout, status…).'),
  durationMs: z.number().int().describe('Duration in milliseconds.'),
});

/** A delivery log entry (spec 2.9) plus what helps to operate it. */
export const deliveryLogEntryShape = z.object({
  id: z.string().describe('Delivery id; also the `webhook-id` and `X-Switchboard-Delivery` header.'),
  eventType: z.string().describe('Event type delivered.'),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number().int().describe('Attempts made so far (at most 5).'),
  responseCode: z.number().int().nullable().describe('HTTP status of the last answer; null when none.'),
  createdAt: z.iso.datetime().describe('When the delivery was created.'),
  kind: z.enum(DELIVERY_KINDS),
  eventId: z.string().nullable().describe('Event log id; null for test deliveries.'),
  nextAttemptAt: z.iso.datetime().nullable().describe('When the next attempt is due; null once final.'),
  lastError: z.string().nullable().describe('Why the last attempt failed.'),
  redeliveryOf: z.string().nullable().describe('The failed delivery this one redelivers.'),
  attemptHistory: z.array(deliveryAttemptShape).describe('Every attempt, oldest first.'),
});
