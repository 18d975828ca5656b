// The webhooks area's store (issue 23), part one: every Prisma call about webhooks and the delivery log as the
// services read and change them. The dispatcher's statements (outbox fan-out, claims, attempt records) are in
// webhook-dispatch.store.ts. Services call these with plain parameters and get the plain records below; a function
// that must run inside the caller's transaction takes its `Tx`. The queries are the services', moved, not rewritten.

import type { Db, Tx } from '../kernel/db.js';

/** A webhook row (secrets encrypted; never leaves the domain as such: `view` makes its API shape). */
export interface WebhookRecord {
  id: string;
  accountId: string;
  url: string;
  events: string[];
  description: string | null;
  active: boolean;
  disabledReason: string | null;
  /** Id of the SECRETS_KEY that encrypted the secret. */
  secretKeyId: string;
  /** AES-256-GCM ciphertext of the current secret; empty once deleted. */
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  deletedAt: Date | null;
}

/** One attempt row of a delivery. */
export interface AttemptRecordRow {
  attempt: number;
  startedAt: Date;
  responseCode: number | null;
  error: string | null;
  durationMs: number;
}

/** A delivery row. */
export interface DeliveryRecord {
  id: string;
  accountId: string;
  webhookId: string;
  /** Event log id; null for test deliveries. */
  eventId: bigint | null;
  eventType: string;
  /** The JSON body sent (spec 2.11 envelope). */
  body: string;
  kind: string;
  status: string;
  attempts: number;
  responseCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  redeliveryOf: string | null;
  redeliveredAt: Date | null;
  createdAt: Date;
}

/**
 * A delivery row with its attempts (what a log entry is made of): attempt 1 in the row's `firstAttempt*` fields
 * when `firstAttemptAt` is set, every other attempt in `attemptLog` (migration
 * 20261128130000_webhook_delivery_first_attempt).
 */
export interface DeliveryWithAttempts extends DeliveryRecord {
  /** When attempt 1 started, if it is recorded in the row; null otherwise (then it is in `attemptLog`, or not made). */
  firstAttemptAt: Date | null;
  /** Attempt 1's HTTP status, when in the row and one came. */
  firstAttemptCode: number | null;
  /** Attempt 1's error (`receiver answered 503`, a timeout…), when in the row; null when it delivered. */
  firstAttemptError: string | null;
  /** Attempt 1's duration in milliseconds, when in the row. */
  firstAttemptMs: number | null;
  attemptLog: AttemptRecordRow[];
}

/** The include that loads a delivery with its attempts. */
const withAttempts = { attemptLog: true } as const;

/** The account's webhook `id`, unless deleted; null otherwise (another account's id answers the same). */
export async function findOwnWebhook(db: Db | Tx, accountId: string, id: string): Promise<WebhookRecord | null> {
  return db.webhook.findFirst({ where: { id, accountId, deletedAt: null } });
}

/** Webhooks of `accountId` among `ids`, not deleted, in no particular order. */
export async function webhooksAmong(db: Db, accountId: string, ids: readonly string[]): Promise<WebhookRecord[]> {
  return db.webhook.findMany({ where: { id: { in: [...ids] }, accountId, deletedAt: null } });
}

/** How many webhooks the account has (deleted ones not counted). */
export async function countWebhooks(db: Db, accountId: string): Promise<number> {
  return db.webhook.count({ where: { accountId, deletedAt: null } });
}

/** Active webhooks whose secret a SECRETS_KEY other than `keyId` encrypted (start-up warning). */
export async function countForeignKeyWebhooks(db: Db, keyId: string): Promise<number> {
  return db.webhook.count({ where: { deletedAt: null, active: true, secretKeyId: { not: keyId } } });
}

/** Inserts a webhook. @returns the row. */
export async function insertWebhook(
  tx: Tx,
  data: {
    id: string;
    accountId: string;
    url: string;
    events: string[];
    description: string | null;
    secretKeyId: string;
    secretCiphertext: string;
    createdAt: Date;
  },
): Promise<WebhookRecord> {
  return tx.webhook.create({ data });
}

/** The fields of a webhook PATCH changes. */
export interface WebhookChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  active?: boolean;
  disabledReason?: string | null;
}

/** Updates webhook `id` with `data`. @returns the row after. */
export async function updateWebhookRow(tx: Tx, id: string, data: WebhookChanges): Promise<WebhookRecord> {
  return tx.webhook.update({ where: { id }, data });
}

/**
 * Cancels every `pending` delivery of webhook `webhookId`, claimed ones included (an attempt in flight is fenced on
 * `status = 'pending'`, so its result no longer changes them), with `lastError` = `reason`.
 * @returns how many were cancelled.
 */
export async function cancelPendingDeliveries(
  tx: Tx,
  webhookId: string,
  reason: 'webhook disabled' | 'webhook deleted',
  now: Date,
): Promise<number> {
  const { count } = await tx.webhookDelivery.updateMany({
    where: { webhookId, status: 'pending' },
    data: {
      status: 'cancelled',
      nextAttemptAt: null,
      lockedUntil: null,
      lockedBy: null,
      lastError: reason,
      updatedAt: now,
    },
  });
  return count;
}

/**
 * Makes every delivery a disable cancelled (`cancelled`, lastError `webhook disabled`) `pending` again, due at
 * `now`, unclaimed. @returns how many.
 */
export async function reviveDisabledDeliveries(tx: Tx, webhookId: string, now: Date): Promise<number> {
  const { count } = await tx.webhookDelivery.updateMany({
    where: { webhookId, status: 'cancelled', lastError: 'webhook disabled' },
    data: {
      status: 'pending',
      nextAttemptAt: now,
      lockedUntil: null,
      lockedBy: null,
      lastError: null,
      updatedAt: now,
    },
  });
  return count;
}

/** Disables webhook `id` after its receiver answered 410 (the dispatcher), with `reason`. */
export async function disableWebhook(tx: Tx, id: string, reason: string): Promise<void> {
  await tx.webhook.update({ where: { id }, data: { active: false, disabledReason: reason } });
}

/** Up to `take` webhooks of the account with id above `after`, in id order (a keyset page). */
export async function webhookPage(
  db: Db,
  accountId: string,
  after: string | undefined,
  take: number,
): Promise<WebhookRecord[]> {
  return db.webhook.findMany({
    where: { accountId, deletedAt: null, ...(after ? { id: { gt: after } } : {}) },
    orderBy: { id: 'asc' },
    take,
  });
}

/** Every webhook of the account, oldest first (createdAt, then id). */
export async function allWebhooks(db: Db, accountId: string): Promise<WebhookRecord[]> {
  return db.webhook.findMany({
    where: { accountId, deletedAt: null },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}

/**
 * Marks the account's webhook `id` deleted at `now` and erases its encrypted secrets.
 * @returns the row after, or null when no undeleted webhook `id` of the account existed.
 */
export async function markWebhookDeleted(
  tx: Tx,
  accountId: string,
  id: string,
  now: Date,
): Promise<WebhookRecord | null> {
  const { count } = await tx.webhook.updateMany({
    where: { id, accountId, deletedAt: null },
    // The secret goes with it: nothing may be signed for a deleted webhook again.
    data: { deletedAt: now, active: false, secretCiphertext: '', previousSecretCiphertext: null },
  });
  if (count === 0) return null;
  return tx.webhook.findUniqueOrThrow({ where: { id } });
}

/**
 * Replaces the secret of webhook `id` unless it changed since it was read as `currentCiphertext` (or was deleted):
 * the current one becomes the previous one until `previousExpiresAt`.
 * @returns false when the webhook changed meanwhile (nothing written).
 */
export async function rotateSecretRow(
  tx: Tx,
  id: string,
  currentCiphertext: string,
  next: { secretKeyId: string; secretCiphertext: string; previousExpiresAt: Date },
): Promise<boolean> {
  const { count } = await tx.webhook.updateMany({
    where: { id, secretCiphertext: currentCiphertext, deletedAt: null },
    data: {
      secretKeyId: next.secretKeyId,
      secretCiphertext: next.secretCiphertext,
      previousSecretCiphertext: currentCiphertext,
      previousSecretExpiresAt: next.previousExpiresAt,
    },
  });
  return count > 0;
}

/** Position of a delivery in the log's order: its creation time, then its id. */
export interface DeliveryLogKey {
  at: Date;
  id: string;
}

/**
 * A keyset window of the account's webhook's deliveries in log order, newest first (createdAt, then id,
 * descending), each with its attempts: older than `after`, newer than `before` (both optional), at most `limit`;
 * `inverted` reads from the newest-but-`before` end backwards (Relay `last`), answering oldest first.
 */
export async function deliveryLogWindow(
  db: Db,
  accountId: string,
  webhookId: string,
  w: { after?: DeliveryLogKey; before?: DeliveryLogKey; limit: number; inverted?: boolean },
): Promise<DeliveryWithAttempts[]> {
  const older = (k: DeliveryLogKey) => ({ OR: [{ createdAt: { lt: k.at } }, { createdAt: k.at, id: { lt: k.id } }] });
  const newer = (k: DeliveryLogKey) => ({ OR: [{ createdAt: { gt: k.at } }, { createdAt: k.at, id: { gt: k.id } }] });
  const dir = w.inverted ? 'asc' : 'desc';
  return db.webhookDelivery.findMany({
    where: {
      webhookId,
      accountId,
      AND: [...(w.after ? [older(w.after)] : []), ...(w.before ? [newer(w.before)] : [])],
    },
    orderBy: [{ createdAt: dir }, { id: dir }],
    take: w.limit,
    include: withAttempts,
  });
}

/** Deliveries of `accountId` among `ids`, each with its attempts, in no particular order. */
export async function deliveriesAmong(
  db: Db,
  accountId: string,
  ids: readonly string[],
): Promise<DeliveryWithAttempts[]> {
  return db.webhookDelivery.findMany({ where: { id: { in: [...ids] }, accountId }, include: withAttempts });
}

/** The account's delivery `id` with its attempts, or null. */
export async function findDeliveryWithAttempts(
  db: Db,
  accountId: string,
  id: string,
): Promise<DeliveryWithAttempts | null> {
  return db.webhookDelivery.findFirst({ where: { id, accountId }, include: withAttempts });
}

/** Delivery `id` with its attempts. @throws when it does not exist. */
export async function deliveryWithAttempts(db: Db, id: string): Promise<DeliveryWithAttempts> {
  return db.webhookDelivery.findUniqueOrThrow({ where: { id }, include: withAttempts });
}

/** The account's delivery `id` of webhook `webhookId`, or null. */
export async function findDelivery(
  db: Db,
  accountId: string,
  webhookId: string,
  id: string,
): Promise<DeliveryRecord | null> {
  return db.webhookDelivery.findFirst({ where: { id, webhookId, accountId } });
}

/**
 * Up to `take` `failed` deliveries of the webhook created at or after `since`, not redelivered before and not tests,
 * oldest first.
 */
export async function failedDeliveriesSince(
  db: Db,
  accountId: string,
  webhookId: string,
  since: Date,
  take: number,
): Promise<DeliveryRecord[]> {
  return db.webhookDelivery.findMany({
    where: {
      webhookId,
      accountId,
      status: 'failed',
      redeliveredAt: null,
      kind: { not: 'test' },
      createdAt: { gte: since },
    },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take,
  });
}

/** A test delivery, created claimed by `lockedBy` until `lockedUntil` with its one attempt counted. */
export async function insertClaimedTestDelivery(
  db: Db,
  d: {
    id: string;
    accountId: string;
    webhookId: string;
    eventType: string;
    body: string;
    now: Date;
    lockedUntil: Date;
    lockedBy: string;
  },
): Promise<void> {
  await db.webhookDelivery.create({
    data: {
      id: d.id,
      accountId: d.accountId,
      webhookId: d.webhookId,
      eventType: d.eventType,
      body: d.body,
      kind: 'test',
      status: 'pending',
      // Created claimed, and the claim counts the attempt (as the job queue's claims do).
      attempts: 1,
      nextAttemptAt: d.now,
      lockedUntil: d.lockedUntil,
      lockedBy: d.lockedBy,
      createdAt: d.now,
      updatedAt: d.now,
    },
  });
}

/** A redelivery row to insert (kind `redelivery`, pending, due at once). */
export interface NewRedelivery {
  id: string;
  accountId: string;
  webhookId: string;
  eventId: bigint | null;
  eventType: string;
  body: string;
  redeliveryOf: string;
}

/**
 * In one transaction: inserts `rows` (pending, due `now`), marks `originalIds` redelivered at `now`, and runs
 * `inTx` (waking the dispatchers after the commit). @returns the new deliveries with their attempts, oldest first.
 */
export async function insertRedeliveries(
  db: Db,
  rows: NewRedelivery[],
  originalIds: string[],
  now: Date,
  inTx: (tx: Tx) => Promise<void>,
): Promise<DeliveryWithAttempts[]> {
  const data = rows.map((r) => ({
    ...r,
    kind: 'redelivery',
    status: 'pending',
    nextAttemptAt: now,
    createdAt: now,
    updatedAt: now,
  }));
  await db.$transaction(async (tx) => {
    await tx.webhookDelivery.createMany({ data });
    await tx.webhookDelivery.updateMany({
      where: { id: { in: originalIds } },
      data: { redeliveredAt: now, updatedAt: now },
    });
    await inTx(tx);
  });
  return db.webhookDelivery.findMany({
    where: { id: { in: data.map((d) => d.id) } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    include: withAttempts,
  });
}
