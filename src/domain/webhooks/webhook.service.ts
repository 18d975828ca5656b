import type { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { BadRequestError, ConflictError, NotFoundError, UnprocessableError } from '../errors.js';
import { type FeedEnds, listenNotices } from '../events/change-feed.js';
import { changeTopic, type DeliveryAttemptNotice, isAttemptNotice } from '../events/change-notices.port.js';
import type { EventEnvelope } from '../events/event.js';
import { channelOf } from '../events/event-catalog.js';
import type { DomainContext } from '../kernel/context.js';
import { uuidv7 } from '../kernel/ids.js';
import { encryptSecret } from '../kernel/secrets.js';
import { decodeCursor, encodeCursor, keysetPage } from '../paging.js';
import { attemptClaimed, leaseMs, WEBHOOK_JOB } from './webhook.dispatcher.js';
import {
  type CreateWebhookInput,
  type DELIVERY_KINDS,
  type DELIVERY_STATUSES,
  type deliveryAttemptShape,
  type deliveryLogEntryShape,
  MAX_WEBHOOKS_PER_ACCOUNT,
  type RedeliverFailedInput,
  type TestWebhookInput,
  type UpdateWebhookInput,
  type WebhookListQuery,
  type WebhookLogsQuery,
  type webhookShape,
} from './webhook.schemas.js';
import { generateWebhookSecret } from './webhook.secrets.js';
import { refusedLiteralHostReason } from './webhook.ssrf.js';
import {
  allWebhooks,
  cancelPendingDeliveries,
  countWebhooks,
  type DeliveryLogKey,
  type DeliveryRecord,
  type DeliveryWithAttempts,
  deliveryLogWindow,
  deliveryWithAttempts,
  failedDeliveriesSince,
  findDelivery,
  findDeliveryWithAttempts,
  findOwnWebhook,
  insertClaimedTestDelivery,
  insertRedeliveries,
  insertWebhook,
  markWebhookDeleted,
  reviveDisabledDeliveries,
  rotateSecretRow,
  updateWebhookRow,
  type WebhookChanges,
  type WebhookRecord,
  webhookPage,
} from './webhook.store.js';

/** How long the previous secret keeps signing after a rotation, in ms (24 h). */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** Most deliveries one "redeliver everything failed since T" call creates (oldest first). */
export const MAX_BULK_REDELIVERIES = 1000;

/** A webhook as listed (spec 2.8 list shape, plus why it is inactive): declared by `webhookShape`. */
export type WebhookView = z.output<typeof webhookShape>;

/** The registration answer (spec 4.6): the webhook and its secret, shown only here. */
export interface CreatedWebhook extends WebhookView {
  secret: string;
}

export { DELIVERY_KINDS, DELIVERY_STATUSES } from './webhook.schemas.js';
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

/** One attempt inside a log entry: declared by `deliveryAttemptShape`. */
export type AttemptView = z.output<typeof deliveryAttemptShape>;

/** A delivery log entry (spec 2.9) plus what helps to operate it: declared by `deliveryLogEntryShape`. */
export type DeliveryLogEntry = z.output<typeof deliveryLogEntryShape>;

type WebhookRow = WebhookRecord;
type DeliveryRow = DeliveryWithAttempts;

/** The API shape of a webhook row (secrets never included). */
export function view(w: WebhookRow): WebhookView {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    description: w.description,
    active: w.active,
    disabledReason: w.disabledReason,
    createdAt: w.createdAt.toISOString(),
  };
}

/**
 * Payload of `webhook.created` / `webhook.updated` / `webhook.deleted` (channel `webhook`, issue 22): the webhook as
 * listed, under `webhookId`, never a secret; `webhook.updated` adds `changes`, the fields that changed (`url`,
 * `events`, `description`, `enabled`, `secret` for a rotation: the secret itself is never sent).
 */
export function webhookEventPayload(w: WebhookRow, changes?: string[]): Record<string, unknown> {
  const { id, ...rest } = view(w);
  return { webhookId: id, ...rest, ...(changes ? { changes } : {}) };
}

/**
 * Converts a delivery row (with its attempts) to a log entry. The attempt history is the attempt held in the row's
 * `firstAttempt*` columns (attempt 1, when recorded there) and the `attemptLog` rows, ordered by start then number.
 */
export function logEntry(d: DeliveryRow): DeliveryLogEntry {
  return {
    id: d.id,
    eventType: d.eventType,
    status: d.status as DeliveryStatus,
    attempts: d.attempts,
    responseCode: d.responseCode,
    createdAt: d.createdAt.toISOString(),
    kind: d.kind as DeliveryKind,
    eventId: d.eventId?.toString() ?? null,
    nextAttemptAt: d.nextAttemptAt?.toISOString() ?? null,
    lastError: d.lastError,
    redeliveryOf: d.redeliveryOf,
    attemptHistory: (d.firstAttemptAt
      ? [
          {
            attempt: 1,
            startedAt: d.firstAttemptAt,
            responseCode: d.firstAttemptCode,
            error: d.firstAttemptError,
            durationMs: d.firstAttemptMs ?? 0,
          },
          ...d.attemptLog,
        ]
      : [...d.attemptLog]
    )
      .sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime() || a.attempt - b.attempt)
      .map((a) => ({
        attempt: a.attempt,
        at: a.startedAt.toISOString(),
        responseCode: a.responseCode,
        error: a.error,
        durationMs: a.durationMs,
      })),
  };
}

async function ownWebhook(ctx: DomainContext, actor: Actor, id: string): Promise<WebhookRow> {
  const w = await findOwnWebhook(ctx.db, actor.accountId, id);
  if (!w) throw new NotFoundError('Webhook', id, 'id');
  return w;
}

/**
 * Registers a webhook (spec 4.6, 2.8, 6.1). `url` (absolute http/https, no credentials) and `events` (1–100 catalog
 * types or globs matching at least one) are both required. The server generates the secret
 * (`whsec_<base64 of 32 random bytes>`), stores it AES-256-GCM encrypted and returns it only here.
 * `input` is parsed at the door by `createWebhookInput` (400 naming each bad field: `events.2` UNKNOWN_EVENT_TYPE,
 * `url` INVALID_FORMAT…).
 * Emits `webhook.created` (no secret in it).
 * @throws UnprocessableError WEBHOOK_LIMIT_REACHED at {@link MAX_WEBHOOKS_PER_ACCOUNT} webhooks; UnprocessableError
 *   URL_NOT_PUBLIC (field `url`) when the host is a literal loopback, private, link-local, CGNAT, metadata or other
 *   special address (the delivery guard's list, webhook.ssrf.ts) and WEBHOOK_ALLOW_PRIVATE_NETWORKS is off.
 */
export async function createWebhook(
  ctx: DomainContext,
  actor: Actor,
  input: CreateWebhookInput,
): Promise<CreatedWebhook> {
  requireScope(actor, 'webhooks');
  const { url, events } = input;
  refusePrivateUrl(ctx, url);
  const count = await countWebhooks(ctx.db, actor.accountId);
  if (count >= MAX_WEBHOOKS_PER_ACCOUNT) {
    throw new UnprocessableError(
      'WEBHOOK_LIMIT_REACHED',
      `An account can have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first.`,
    );
  }
  const id = uuidv7();
  const secret = generateWebhookSecret();
  const row = await ctx.events.transaction(async (tx, emit) => {
    const created = await insertWebhook(tx, {
      id,
      accountId: actor.accountId,
      url,
      events,
      description: input.description ?? null,
      secretKeyId: ctx.secretsKeyId,
      secretCiphertext: encryptSecret(ctx.secretsKey, secret, id),
      createdAt: ctx.clock.now(),
    });
    await emit(actor.accountId, 'webhook.created', webhookEventPayload(created));
    return created;
  });
  return { ...view(row), secret };
}

/** A literal special address can never receive a delivery: say so at once rather than fail every attempt later. */
function refusePrivateUrl(ctx: DomainContext, url: string): void {
  const refused = ctx.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS ? undefined : refusedLiteralHostReason(url);
  if (refused) {
    throw new UnprocessableError(
      'URL_NOT_PUBLIC',
      `url: ${refused}; webhooks are delivered to public addresses only (WEBHOOK_ALLOW_PRIVATE_NETWORKS)`,
      'url',
    );
  }
}

/** `disabledReason` of an endpoint disabled through PATCH /api/webhooks/{id} `{"enabled": false}`. */
export const DISABLED_BY_API = 'disabled through the API';

/**
 * PATCH /api/webhooks/{id} and GraphQL `updateWebhook` (issue 25): changes `url`, `events`, `description` (null
 * clears) and `enabled`. Absent fields keep their value; the secret never changes here (rotateWebhookSecret).
 * - `enabled: false` disables the endpoint as a 410 does: its pending deliveries become `cancelled` (lastError
 *   `webhook disabled`) and events are no longer fanned out to it.
 * - `enabled: true` on a disabled endpoint (after a 410 auto-disable or a manual disable) re-enables it: every
 *   delivery the disable cancelled (`cancelled`, lastError `webhook disabled`) is pending again, due now, with the
 *   attempts it had left, so nothing that was pending is lost; new events fan out to it again. Events that
 *   happened while it was disabled were not queued for it (`GET /api/events/history` has them).
 * Emits `webhook.updated` with `changes` (the fields whose value changed) when anything changed.
 * `input` is parsed at the door by `updateWebhookInput`.
 * @returns the webhook as listed.
 * @throws NotFoundError for an unknown, deleted or another account's id; UnprocessableError URL_NOT_PUBLIC (as
 *   createWebhook).
 */
export async function updateWebhook(
  ctx: DomainContext,
  actor: Actor,
  id: string,
  input: UpdateWebhookInput,
): Promise<WebhookView> {
  requireScope(actor, 'webhooks');
  if (input.url !== undefined) refusePrivateUrl(ctx, input.url);
  const now = ctx.clock.now();
  const row = await ctx.events.transaction(async (tx, emit) => {
    const before = await findOwnWebhook(tx, actor.accountId, id);
    if (!before) throw new NotFoundError('Webhook', id, 'id');
    const changes: string[] = [];
    const data: WebhookChanges = {};
    if (input.url !== undefined && input.url !== before.url) {
      data.url = input.url;
      changes.push('url');
    }
    if (input.events !== undefined && JSON.stringify(input.events) !== JSON.stringify(before.events)) {
      data.events = input.events;
      changes.push('events');
    }
    if (input.description !== undefined && input.description !== before.description) {
      data.description = input.description;
      changes.push('description');
    }
    if (input.enabled !== undefined && input.enabled !== before.active) {
      data.active = input.enabled;
      data.disabledReason = input.enabled ? null : DISABLED_BY_API;
      changes.push('enabled');
    }
    if (changes.length === 0) return before;
    const after = await updateWebhookRow(tx, id, data);
    if (input.enabled === false && changes.includes('enabled')) {
      await cancelPendingDeliveries(tx, id, 'webhook disabled', now);
    }
    if (input.enabled === true && changes.includes('enabled')) {
      const count = await reviveDisabledDeliveries(tx, id, now);
      if (count > 0) await ctx.jobs.notify(tx, WEBHOOK_JOB);
    }
    await emit(actor.accountId, 'webhook.updated', webhookEventPayload(after, changes));
    return after;
  });
  return view(row);
}

/**
 * GET /api/webhooks (spec 4.6): a page of the account's webhooks, oldest first (uuidv7 ids, so id order), with the
 * one paging rule (`limit` 1–200 default 50, `cursor`; docs/conventions.md). The secret is never part of it.
 * @returns `{webhooks, nextCursor}`, nextCursor null on the last page. @throws BadRequestError INVALID_CURSOR.
 */
export async function pageWebhooks(
  ctx: DomainContext,
  actor: Actor,
  query: WebhookListQuery,
): Promise<{ webhooks: WebhookView[]; nextCursor: string | null }> {
  requireScope(actor, 'webhooks');
  const after = decodeCursor(query.cursor);
  const page = await keysetPage(query.limit, (take) => webhookPage(ctx.db, actor.accountId, after, take));
  return { webhooks: page.items.map(view), nextCursor: page.last ? encodeCursor(page.last.id) : null };
}

/** The account's webhooks, oldest first (spec 4.6), all of them (at most MAX_WEBHOOKS_PER_ACCOUNT). No secret. */
export async function listWebhooks(ctx: DomainContext, actor: Actor): Promise<WebhookView[]> {
  requireScope(actor, 'webhooks');
  const rows = await allWebhooks(ctx.db, actor.accountId);
  return rows.map(view);
}

/** One webhook. @throws NotFoundError for an unknown, deleted or another account's id. */
export async function getWebhook(ctx: DomainContext, actor: Actor, id: string): Promise<WebhookView> {
  requireScope(actor, 'webhooks');
  return view(await ownWebhook(ctx, actor, id));
}

/**
 * Deletes a webhook (spec 4.6): it disappears from every read, receives nothing more, its encrypted secrets are
 * erased, and all its pending deliveries become `cancelled`, claimed ones included (an attempt already in flight
 * still reaches the receiver, but its result no longer changes the cancelled delivery).
 * Emits `webhook.deleted`.
 * @returns `{id, deleted: true, cancelledDeliveries}`.
 * @throws NotFoundError for an unknown, already deleted or another account's id.
 */
export async function deleteWebhook(
  ctx: DomainContext,
  actor: Actor,
  id: string,
): Promise<{ id: string; deleted: true; cancelledDeliveries: number }> {
  requireScope(actor, 'webhooks');
  const now = ctx.clock.now();
  return ctx.events.transaction(async (tx, emit) => {
    // The secret goes with it: nothing may be signed for a deleted webhook again.
    const deleted = await markWebhookDeleted(tx, actor.accountId, id, now);
    if (!deleted) throw new NotFoundError('Webhook', id, 'id');
    await emit(actor.accountId, 'webhook.deleted', webhookEventPayload(deleted));
    // Claimed ones too (an attempt in flight, or a claim of a crashed instance): the dispatcher's record of an
    // attempt is fenced on `status = 'pending'`, so a result arriving later never revives a cancelled delivery.
    const cancelled = await cancelPendingDeliveries(tx, id, 'webhook deleted', now);
    return { id, deleted: true as const, cancelledDeliveries: cancelled };
  });
}

/** The cursor key of a log entry: `<createdAt ms>.<id>` (its position in newest-first order). */
function logCursor(row: { createdAt: Date; id: string }): string {
  return encodeCursor(`${row.createdAt.getTime()}.${row.id}`);
}

/** Decodes a log cursor ({@link webhookLogCursor}). @throws BadRequestError 400 INVALID_CURSOR. */
function decodeLogCursor(cursor: string | undefined): DeliveryLogKey | undefined {
  const key = decodeCursor(cursor);
  if (key === undefined) return undefined;
  const dot = key.indexOf('.');
  const at = new Date(Number(key.slice(0, dot)));
  if (dot < 1 || Number.isNaN(at.getTime())) {
    throw new BadRequestError('INVALID_CURSOR', 'cursor is not a nextCursor this API returned', 'cursor');
  }
  return { at, id: key.slice(dot + 1) };
}

/** The cursor of a log entry as REST's `nextCursor` and GraphQL's edge cursors give it. */
export function webhookLogCursor(entry: DeliveryLogEntry): string {
  return logCursor({ createdAt: new Date(entry.createdAt), id: entry.id });
}

/**
 * Delivery log of a webhook (spec 4.6, 2.9), newest first (createdAt, then id, descending), `limit` default 50, max
 * 200, `cursor` the `nextCursor` of the previous page (older entries; the one paging rule of docs/conventions.md).
 * `query` is parsed at the door by `webhookLogsQuery`.
 * @returns `{logs, nextCursor}`, nextCursor null on the last page.
 * @throws NotFoundError for another account's webhook; BadRequestError INVALID_CURSOR.
 */
export async function listWebhookLogs(
  ctx: DomainContext,
  actor: Actor,
  id: string,
  query: WebhookLogsQuery,
): Promise<{ logs: DeliveryLogEntry[]; nextCursor: string | null }> {
  requireScope(actor, 'webhooks');
  const after = decodeLogCursor(query.cursor);
  await ownWebhook(ctx, actor, id);
  const page = await keysetPage(query.limit, (limit) =>
    deliveryLogWindow(ctx.db, actor.accountId, id, { after, limit }),
  );
  return { logs: page.items.map(logEntry), nextCursor: page.last ? logCursor(page.last) : null };
}

/**
 * A window of a webhook's delivery log for a Relay connection (GraphQL `webhookLogs`), in the log's newest-first
 * order: entries after the cursor `after` (older) and before `before` (newer), at most `limit`; `inverted` (Relay
 * `last`) reads from the `before` end and answers in reverse, the shape Pothos' `resolveCursorConnection` asks for.
 * Cursors are REST's ({@link webhookLogCursor}).
 * @throws NotFoundError for another account's webhook; BadRequestError INVALID_CURSOR.
 */
export async function pageWebhookLogs(
  ctx: DomainContext,
  actor: Actor,
  id: string,
  window: { after?: string; before?: string; limit: number; inverted: boolean },
): Promise<DeliveryLogEntry[]> {
  requireScope(actor, 'webhooks');
  const after = decodeLogCursor(window.after);
  const before = decodeLogCursor(window.before);
  await ownWebhook(ctx, actor, id);
  const rows = await deliveryLogWindow(ctx.db, actor.accountId, id, {
    after,
    before,
    limit: window.limit,
    inverted: window.inverted,
  });
  return rows.map(logEntry);
}

/**
 * Rotates the secret (beyond the spec, as Stripe/Svix): a new secret is returned once; for
 * {@link ROTATION_OVERLAP_MS} (24 h) deliveries carry signatures with both (README "Webhooks" › Rotation). Rotating
 * again within the overlap drops the oldest secret. Emits `webhook.updated` with `changes: ["secret"]` (never the
 * secret).
 * @returns `{id, secret, previousSecretExpiresAt}`.
 * @throws NotFoundError for another account's webhook.
 */
export async function rotateWebhookSecret(
  ctx: DomainContext,
  actor: Actor,
  id: string,
): Promise<{ id: string; secret: string; previousSecretExpiresAt: string }> {
  requireScope(actor, 'webhooks');
  const w = await ownWebhook(ctx, actor, id);
  const secret = generateWebhookSecret();
  const expires = new Date(ctx.clock.now().getTime() + ROTATION_OVERLAP_MS);
  await ctx.events.transaction(async (tx, emit) => {
    const rotated = await rotateSecretRow(tx, id, w.secretCiphertext, {
      secretKeyId: ctx.secretsKeyId,
      secretCiphertext: encryptSecret(ctx.secretsKey, secret, id),
      previousExpiresAt: expires,
    });
    if (!rotated) throw new ConflictError('WEBHOOK_CHANGED', 'The webhook changed meanwhile; rotate again.');
    await emit(actor.accountId, 'webhook.updated', webhookEventPayload(w, ['secret']));
  });
  return { id, secret, previousSecretExpiresAt: expires.toISOString() };
}

/**
 * An example payload for a test delivery of `eventType` (spec 2.11; SMS fields per 2.11, email per 6.1, role mail as
 * `deliverRoleMail` emits it); other types get `{example: true}`.
 */
function examplePayload(eventType: string): Record<string, unknown> {
  if (eventType.startsWith('sms.')) {
    return { id: 'msg_example', from: '+14155550100', to: '+14155550101', status: eventType.slice(4) };
  }
  if (eventType === 'email.received') {
    return {
      event: 'email.received',
      data: {
        identityId: '00000000-0000-0000-0000-000000000000',
        from: 'sender@example.com',
        to: 'agent@agents.switchboard.local',
        subject: 'Example',
        threadId: 'thread_example',
        messageId: '<example@example.com>',
      },
    };
  }
  if (eventType === 'email.role_mail.received') {
    // The shape deliverRoleMail emits (role-mail.service.ts): no body, only what names the message.
    return {
      event: 'email.role_mail.received',
      data: {
        id: '00000000-0000-0000-0000-000000000000',
        address: 'postmaster@mail.example.com',
        from: 'reporter@example.org',
        subject: 'Example abuse report',
        receivedAt: '2026-01-01T00:00:00.000Z',
      },
    };
  }
  return { example: true };
}

/**
 * Sends a signed example of `eventType` to the webhook now (one attempt, waiting for it, at most
 * WEBHOOK_TIMEOUT_MS) and logs it as a delivery of kind `test` (no retries, no health event). Works on an
 * inactive webhook too, so a receiver can be checked before re-creating one.
 * @returns the log entry (`delivered` or `failed`, with `responseCode`/`lastError`).
 * `input` is parsed at the door by `testWebhookInput`. @throws NotFoundError for another account's webhook.
 */
export async function testWebhook(
  ctx: DomainContext,
  actor: Actor,
  id: string,
  input: TestWebhookInput,
): Promise<DeliveryLogEntry> {
  requireScope(actor, 'webhooks');
  const { eventType } = input;
  const w = await ownWebhook(ctx, actor, id);
  const now = ctx.clock.now();
  const envelope: EventEnvelope = {
    channel: channelOf(eventType)!,
    eventType,
    payload: examplePayload(eventType),
    customerId: actor.accountId,
    timestamp: now.toISOString(),
  };
  const deliveryId = uuidv7();
  const token = `test-${uuidv7()}`;
  // Created already claimed: if this process dies mid-attempt, the dispatcher makes the one attempt after the lease.
  await insertClaimedTestDelivery(ctx.db, {
    id: deliveryId,
    accountId: actor.accountId,
    webhookId: w.id,
    eventType,
    body: JSON.stringify(envelope),
    now,
    lockedUntil: new Date(now.getTime() + leaseMs(ctx)),
    lockedBy: token,
  });
  // A test is explicit, so it is attempted even on an inactive webhook (the dispatcher would cancel it).
  await attemptClaimed(ctx, deliveryId, token, { ignoreInactive: true });
  const row = await deliveryWithAttempts(ctx.db, deliveryId);
  return logEntry(row);
}

/**
 * Manual redelivery of one `failed` delivery: a new delivery (kind `redelivery`, a new id, the same body and event,
 * the full schedule of 5 attempts again, due now). The original is marked redelivered.
 * @returns the new delivery's log entry.
 * @throws NotFoundError for another account's webhook or delivery; ConflictError DELIVERY_NOT_FAILED when the
 *   delivery is not `failed`, WEBHOOK_INACTIVE when the webhook is disabled.
 */
export async function redeliverDelivery(
  ctx: DomainContext,
  actor: Actor,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryLogEntry> {
  requireScope(actor, 'webhooks');
  const w = await ownWebhook(ctx, actor, webhookId);
  const original = await findDelivery(ctx.db, actor.accountId, webhookId, deliveryId);
  if (!original) throw new NotFoundError('Delivery', deliveryId, 'deliveryId');
  if (original.status !== 'failed') {
    throw new ConflictError(
      'DELIVERY_NOT_FAILED',
      `Only failed deliveries can be redelivered; this one is ${original.status}.`,
      'deliveryId',
    );
  }
  if (!w.active) throw inactive(w);
  const [created] = await createRedeliveries(ctx, [original]);
  return created!;
}

/**
 * "Redeliver everything that failed since T": a redelivery (see {@link redeliverDelivery}) of every `failed`
 * delivery of the webhook created at or after `since` that was not redelivered before and is not a test, oldest
 * first, at most {@link MAX_BULK_REDELIVERIES} per call.
 * @returns `{count, deliveries}` (the new log entries).
 * `input` is parsed at the door by `redeliverFailedInput`.
 * @throws NotFoundError for another account's webhook; ConflictError
 *   WEBHOOK_INACTIVE when the webhook is disabled.
 */
export async function redeliverFailedSince(
  ctx: DomainContext,
  actor: Actor,
  webhookId: string,
  input: RedeliverFailedInput,
): Promise<{ count: number; deliveries: DeliveryLogEntry[] }> {
  requireScope(actor, 'webhooks');
  const { since } = input;
  const w = await ownWebhook(ctx, actor, webhookId);
  if (!w.active) throw inactive(w);
  const failed = await failedDeliveriesSince(
    ctx.db,
    actor.accountId,
    webhookId,
    new Date(since),
    MAX_BULK_REDELIVERIES,
  );
  const deliveries = await createRedeliveries(ctx, failed);
  return { count: deliveries.length, deliveries };
}

function inactive(w: WebhookRow): ConflictError {
  return new ConflictError(
    'WEBHOOK_INACTIVE',
    `The webhook is disabled (${w.disabledReason ?? 'inactive'}); re-enable it (PATCH /api/webhooks/{id} {"enabled": true}) to receive deliveries.`,
    'id',
  );
}

async function createRedeliveries(ctx: DomainContext, originals: DeliveryRecord[]): Promise<DeliveryLogEntry[]> {
  if (originals.length === 0) return [];
  const now = ctx.clock.now();
  const rows = originals.map((o) => ({
    id: uuidv7(),
    accountId: o.accountId,
    webhookId: o.webhookId,
    eventId: o.eventId,
    eventType: o.eventType,
    body: o.body,
    redeliveryOf: o.id,
  }));
  const created = await insertRedeliveries(
    ctx.db,
    rows,
    originals.map((o) => o.id),
    now,
    (tx) => ctx.jobs.notify(tx, WEBHOOK_JOB),
  );
  return created.map(logEntry);
}

/** One recorded attempt of a delivery of a webhook, with the delivery re-read after it. */
export interface DeliveryAttempted {
  /** 1-based attempt number. */
  attempt: number;
  /** When the attempt was recorded (ISO 8601 UTC). */
  timestamp: string;
  /** The delivery log entry now (status, attempts, attempt history); null once gone (webhook deleted and purged). */
  delivery: DeliveryLogEntry | null;
}

/**
 * Live attempts of the deliveries of one webhook (beyond the spec: GraphQL's webhookDeliveryAttempted), each with
 * the delivery re-read through the log entry of spec 2.9. Listens on the `webhookDelivery:<webhookId>` notice topic
 * (RedisPubSub across instances). Attempts are rows of the delivery log, not events, so there is no replay: a
 * client that was away reads `webhookLogs` (the same entries). Requires scope `webhooks`. It ends when the actor's
 * credential stops holding (checked every EVENT_STREAM_HEARTBEAT_MS); `onEnd` is told why once (listenNotices).
 * @throws NotFoundError for an unknown webhook or another account's; FeedInterrupted while streaming on a gap.
 */
export async function openDeliveryAttempts(
  ctx: DomainContext,
  actor: Actor,
  webhookId: string,
  onEnd?: FeedEnds['onEnd'],
): Promise<AsyncGenerator<DeliveryAttempted>> {
  requireScope(actor, 'webhooks');
  await ownWebhook(ctx, actor, webhookId);
  const notices = await listenNotices(
    ctx,
    actor,
    changeTopic(actor.accountId, 'webhookDelivery', webhookId),
    (n): n is DeliveryAttemptNotice => isAttemptNotice(n) && n.accountId === actor.accountId,
    onEnd,
  );
  async function* run(): AsyncGenerator<DeliveryAttempted> {
    try {
      for await (const n of notices) {
        const row = await findDeliveryWithAttempts(ctx.db, actor.accountId, n.deliveryId);
        yield { attempt: n.attempt, timestamp: n.timestamp, delivery: row ? logEntry(row) : null };
      }
    } finally {
      await notices.return(undefined);
    }
  }
  const iterator = run();
  const originalReturn = iterator.return.bind(iterator);
  iterator.return = (value) => {
    void notices.return(undefined);
    return originalReturn(value);
  };
  return iterator;
}
