// The webhooks area's store (issue 23): every Prisma call and every SQL text about webhooks, their deliveries and
// their attempts. Services and the dispatcher call these with plain parameters and get the plain records below;
// a function that must run inside the caller's transaction takes its `Tx`. Behaviour is the services': the SQL here
// is theirs, moved, not rewritten (the dispatcher's claim, record and fan-out are hot paths measured by the bench).

import { v7 as uuidv7 } from 'uuid';
import { Prisma } from '../../generated/prisma/client.js';
import type { Database, Db, Tx } from '../kernel/db.js';

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

/** A delivery row with its attempts (what a log entry is made of). */
export interface DeliveryWithAttempts extends DeliveryRecord {
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

/**
 * Up to `take` deliveries of the account's webhook, newest first (createdAt, then id, descending), older than
 * `before` when given (a keyset page), each with its attempts.
 */
export async function deliveryLogPage(
  db: Db,
  accountId: string,
  webhookId: string,
  before: { at: Date; id: string } | undefined,
  take: number,
): Promise<DeliveryWithAttempts[]> {
  return db.webhookDelivery.findMany({
    where: {
      webhookId,
      accountId,
      ...(before ? { OR: [{ createdAt: { lt: before.at } }, { createdAt: before.at, id: { lt: before.id } }] } : {}),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take,
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

// ---- The dispatcher: outbox fan-out, claims, attempts -------------------------------------------------------

/**
 * The outbox fan-out's `read` (event-log.ts EventHook): the account's active webhooks as a JSON array of
 * `{id, events}` ordered by id (NULL when none), evaluated by the statement that records the events.
 */
export function activeWebhooksRead(accountId: string): Prisma.Sql {
  return Prisma.sql`SELECT json_agg(json_build_object('id', w.id, 'events', w.events) ORDER BY w.id)
      FROM webhooks w WHERE w.account_id = ${accountId} AND w.active AND w.deleted_at IS NULL`;
}

/** One delivery row of the outbox fan-out: `event` is the event's id, or its 1-based `ord` in a single-statement write. */
export interface OutboxRow {
  id: string;
  webhookId: string;
  eventType: string;
  /** The JSON body (spec 2.11 envelope). */
  body: string;
  /** The event's timestamp: due, created and updated at. */
  at: string;
}

/**
 * THE outbox insert: one `pending` `event` delivery per row, due at its event's time. `event` says where each
 * row's event id comes from: `{ids}`, the ids of events already inserted (an interactive transaction), or `{ords}`,
 * the 1-based positions in a single-statement write whose CTE `ins(id, seq, ord)` holds the inserted events (then it
 * is a CTE body and RETURNs, see EventHook.statement).
 */
export function outboxInsert(
  accountId: string,
  rows: OutboxRow[],
  event: { ids: string[] } | { ords: number[] },
): Prisma.Sql {
  const byOrd = 'ords' in event;
  return Prisma.sql`
          INSERT INTO webhook_deliveries (id, account_id, webhook_id, event_id, event_type, body, kind, status,
                                          next_attempt_at, created_at, updated_at)
          SELECT x.id, ${accountId}, x.webhook_id, ${byOrd ? Prisma.sql`ins.id` : Prisma.sql`x.event_id`}, x.event_type, x.body, 'event', 'pending', x.at, x.at, x.at
            FROM unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.webhookId)}::text[],
                        ${byOrd ? Prisma.sql`${event.ords}::int[]` : Prisma.sql`${event.ids}::bigint[]`}, ${rows.map((r) => r.eventType)}::text[],
                        ${rows.map((r) => r.body)}::text[],
                        ${rows.map((r) => r.at)}::timestamptz[])
                 AS x(id, webhook_id, ${byOrd ? Prisma.sql`ord` : Prisma.sql`event_id`}, event_type, body, at)${
                   byOrd
                     ? Prisma.sql`
            JOIN ins ON ins.ord = x.ord
          RETURNING 1`
                     : Prisma.empty
                 }`;
}

/** Runs the {@link outboxInsert} of events already inserted, inside the recording transaction. */
export async function insertOutboxRows(
  tx: Tx,
  accountId: string,
  rows: OutboxRow[],
  eventIds: string[],
): Promise<void> {
  await tx.$executeRaw(outboxInsert(accountId, rows, { ids: eventIds }));
}

/** The SQL parts of the delivery job kind (src/infra/jobs JobKind): which rows are due, and what a claim returns. */
export function deliveryJobSql(keyId: string) {
  return {
    /** Pending deliveries of webhooks whose secret key `keyId` encrypted. */
    where: () =>
      Prisma.sql`j.status = 'pending' AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = j.webhook_id AND w.secret_key_id = ${keyId})`,
    join: () => Prisma.sql`JOIN webhooks w ON w.id = j.webhook_id`,
    columns: () => ({
      kind: Prisma.sql`j.kind`,
      body: Prisma.sql`j.body`,
      eventType: Prisma.sql`j.event_type`,
      eventId: Prisma.sql`j.event_id::text`,
      accountId: Prisma.sql`j.account_id`,
      webhookId: Prisma.sql`w.id`,
      url: Prisma.sql`w.url`,
      active: Prisma.sql`w.active`,
      deletedAt: Prisma.sql`w.deleted_at`,
      secretCiphertext: Prisma.sql`w.secret_ciphertext`,
      previousSecretCiphertext: Prisma.sql`w.previous_secret_ciphertext`,
      previousSecretExpiresAt: Prisma.sql`w.previous_secret_expires_at`,
    }),
  };
}

/** What an attempt needs of a delivery and its webhook (what the dispatcher's claim returns; docs/jobs.md). */
export interface ClaimedDelivery {
  id: string;
  lockedBy: string | null;
  attempts: number;
  kind: string;
  body: string;
  eventType: string;
  eventId: bigint | null;
  accountId: string;
  webhook: Pick<
    WebhookRecord,
    'id' | 'url' | 'active' | 'deletedAt' | 'secretCiphertext' | 'previousSecretCiphertext' | 'previousSecretExpiresAt'
  >;
}

/** Delivery `id` with its webhook when `token` holds its claim; null otherwise. */
export async function findClaimedDelivery(db: Db, id: string, token: string): Promise<ClaimedDelivery | null> {
  return db.webhookDelivery.findFirst({ where: { id, lockedBy: token }, include: { webhook: true } });
}

/**
 * Cancels claimed delivery `id` (fenced by `token` and `status = 'pending'`) because its webhook is deleted or
 * disabled; `uncount` takes back the attempt the claim counted.
 */
export async function cancelClaimedDelivery(
  db: Db,
  id: string,
  token: string,
  reason: 'webhook deleted' | 'webhook disabled',
  now: Date,
  uncount: boolean,
): Promise<void> {
  await db.webhookDelivery.updateMany({
    where: { id, lockedBy: token, status: 'pending' },
    data: {
      status: 'cancelled',
      nextAttemptAt: null,
      lockedUntil: null,
      lockedBy: null,
      lastError: reason,
      updatedAt: now,
      // The claim counted an attempt that is not made.
      ...(uncount ? { attempts: { decrement: 1 } } : {}),
    },
  });
}

/** One attempt's result and the delivery's state after it, as {@link recordAttempt} writes them. */
export interface AttemptRecord {
  deliveryId: string;
  token: string;
  next: 'delivered' | 'failed' | 'pending';
  attempt: number;
  responseCode: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
  startedAt: Date;
  durationMs: number;
  now: Date;
}

/**
 * Writes an attempt's result in ONE statement (so it needs no interactive transaction, nor the event-order lock
 * when nothing is emitted): the delivery's new state, fenced by the claim token and `status = 'pending'`, and the
 * attempt row, inserted only when the fenced update matched.
 * @returns false when the claim was lost (lease passed and another instance claimed it, or the delivery was
 *   cancelled meanwhile); nothing is written then.
 */
export async function recordAttempt(db: Tx, r: AttemptRecord): Promise<boolean> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    WITH d AS (
      UPDATE webhook_deliveries
         SET status = ${r.next}, attempts = ${r.attempt}::int, response_code = ${r.responseCode}::int,
             last_error = ${r.error}::text, next_attempt_at = ${r.nextAttemptAt}::timestamptz,
             locked_until = NULL, locked_by = NULL, updated_at = ${r.now}::timestamptz
       WHERE id = ${r.deliveryId} AND locked_by = ${r.token} AND status = 'pending'
      RETURNING id)
    INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, started_at, response_code, error, duration_ms)
    SELECT ${uuidv7()}, d.id, ${r.attempt}::int, ${r.startedAt}::timestamptz, ${r.responseCode}::int,
           ${r.error}::text, ${r.durationMs}::int
      FROM d
    RETURNING id`;
  return rows.length > 0;
}

/**
 * {@link recordAttempt} for many attempts in ONE statement (the dispatcher's hot path: one round trip per batch of
 * finished attempts instead of one per attempt). Each row is fenced as in recordAttempt.
 * @returns the ids whose record was written.
 */
export async function recordAttempts(database: Pick<Database, 'statement'>, rs: AttemptRecord[]): Promise<Set<string>> {
  const col = <T>(f: (r: AttemptRecord) => T) => rs.map(f);
  const rows = await database.statement<{ id: string }>(Prisma.sql`
    WITH x AS (
      SELECT * FROM unnest(${col((r) => r.deliveryId)}::text[], ${col((r) => r.token)}::text[],
                           ${col((r) => r.next)}::text[], ${col((r) => r.attempt)}::int[],
                           ${col((r) => r.responseCode)}::int[], ${col((r) => r.error)}::text[],
                           ${col((r) => r.nextAttemptAt?.toISOString() ?? null)}::timestamptz[],
                           ${col((r) => r.startedAt.toISOString())}::timestamptz[], ${col((r) => r.durationMs)}::int[],
                           ${col((r) => r.now.toISOString())}::timestamptz[], ${col(() => uuidv7())}::text[])
        AS x(id, token, next, attempt, code, error, next_at, started_at, duration_ms, now, attempt_id)),
    d AS (
      UPDATE webhook_deliveries w
         SET status = x.next, attempts = x.attempt, response_code = x.code, last_error = x.error,
             next_attempt_at = x.next_at, locked_until = NULL, locked_by = NULL, updated_at = x.now
        FROM x
       WHERE w.id = x.id AND w.locked_by = x.token AND w.status = 'pending'
      RETURNING w.id)
    INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, started_at, response_code, error, duration_ms)
    SELECT x.attempt_id, x.id, x.attempt, x.started_at, x.code, x.error, x.duration_ms FROM x JOIN d ON d.id = x.id
    RETURNING delivery_id AS id`);
  return new Set(rows.map((r) => r.id));
}

/** Inserts the log row of a lost try, fenced by the claim token. */
export async function recordLostAttempt(
  db: Tx,
  deliveryId: string,
  token: string,
  r: { attempt: number; error: string; startedAt: Date; durationMs: number },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, started_at, response_code, error, duration_ms)
    SELECT ${uuidv7()}, d.id, ${r.attempt}::int, ${r.startedAt}::timestamptz, NULL, ${r.error}::text, ${r.durationMs}::int
      FROM webhook_deliveries d WHERE d.id = ${deliveryId} AND d.locked_by = ${token}`;
}
