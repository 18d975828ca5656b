// The webhooks area's store (issue 23), part two: the dispatcher's SQL (the outbox fan-out that runs inside the
// event log's writes, the delivery job kind's claim, and the fenced attempt records). These are hot paths measured
// by `npm run bench`: the statements are the dispatcher's, moved here unchanged (the outbox insert, written twice
// before, is one builder now).

import { Prisma } from '../../generated/prisma/client.js';
import { arrayParam, type Database, type Db, jsonArrayParam, type Tx } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';
import type { WebhookRecord } from './webhook.store.js';

/**
 * The outbox fan-out's `read` (event-log.ts EventHook): the account's active webhooks as a JSON array ordered by id
 * (NULL when none), evaluated by the statement that records the events: `{id, events}` for the fan-out, and what an
 * attempt needs of the webhook (`url`, `key`: the secret's key id, `secret`, `previous`, `previousExpiresAt`), so the
 * fan-out can hand the deliveries it claims to this instance's dispatcher without a read (a rotation or a URL change
 * changes the value, so the next write reads it afresh).
 */
export function activeWebhooksRead(accountId: string): Prisma.Sql {
  return Prisma.sql`SELECT json_agg(json_build_object('id', w.id, 'events', w.events, 'url', w.url,
        'key', w.secret_key_id, 'secret', w.secret_ciphertext, 'previous', w.previous_secret_ciphertext,
        'previousExpiresAt', w.previous_secret_expires_at) ORDER BY w.id)
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
  /**
   * Set when the row is written already claimed by its creator (issue 24): the claim token, the lease end (ISO
   * 8601) and the attempt counted (1), as a claim of the job queue would have written them.
   */
  claim?: { token: string; until: string };
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
                                          next_attempt_at, created_at, updated_at, locked_by, locked_until, attempts)
          SELECT x.id, ${accountId}, x.webhook_id, ${byOrd ? Prisma.sql`ins.id` : Prisma.sql`x.event_id`}, x.event_type, x.body::text, 'event', 'pending', x.at, x.at, x.at,
                 x.locked_by, x.locked_until, CASE WHEN x.locked_by IS NULL THEN 0 ELSE 1 END
            FROM ROWS FROM (unnest(${arrayParam(rows.map((r) => r.id))}::text[]), unnest(${arrayParam(rows.map((r) => r.webhookId))}::text[]),
                        unnest(${byOrd ? Prisma.sql`${arrayParam(event.ords)}::int[]` : Prisma.sql`${arrayParam(event.ids)}::bigint[]`}), unnest(${arrayParam(rows.map((r) => r.eventType))}::text[]),
                        json_array_elements(${jsonArrayParam(rows.map((r) => r.body))}::json),
                        unnest(${arrayParam(rows.map((r) => r.at))}::timestamptz[]), unnest(${arrayParam(rows.map((r) => r.claim?.token ?? null))}::text[]),
                        unnest(${arrayParam(rows.map((r) => r.claim?.until ?? null))}::timestamptz[]))
                 AS x(id, webhook_id, ${byOrd ? Prisma.sql`ord` : Prisma.sql`event_id`}, event_type, body, at, locked_by, locked_until)${
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
    /**
     * Pending deliveries of webhooks whose secret key `keyId` encrypted. The key test is a scalar subquery, not
     * `EXISTS (… AND secret_key_id = key)`: PostgreSQL estimates an equality on a table without statistics (webhooks
     * rarely changes 50 times, so autovacuum seldom analyzes it) as 0.5 % selective, then reads every pending
     * delivery through `(webhook_id, created_at)` and sorts them for each claim of 100 (60 µs of backend CPU per
     * delivery with 6,000 pending; issue 24 round 6). A boolean subquery is estimated at one half, so the claim walks
     * the partial due index in its own order and stops after its batch (7–17 µs per delivery) once the table is
     * analyzed; before that (a backlog written faster than autovacuum analyzes) the job queue's batch claim keeps it
     * an index walk by leaving the sort out of the planner's choices (job-queue.ts CLAIM_PLANNER; issue 24 round 13).
     */
    where: () =>
      Prisma.sql`j.status = 'pending' AND (SELECT o.secret_key_id = ${keyId} FROM webhooks o WHERE o.id = j.webhook_id)`,
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
 * attempt, only when the fenced update matched. Attempt 1 goes into the delivery row's `first_attempt_*` columns
 * (the same UPDATE), any later one into a `webhook_delivery_attempts` row (migration
 * 20261128130000_webhook_delivery_first_attempt; the history reads both, `logEntry`).
 * @returns false when the claim was lost (lease passed and another instance claimed it, or the delivery was
 *   cancelled meanwhile); nothing is written then.
 */
export async function recordAttempt(db: Tx, r: AttemptRecord): Promise<boolean> {
  const first = r.attempt === 1;
  const rows = await db.$queryRaw<{ id: string }[]>`
    WITH d AS (
      UPDATE webhook_deliveries
         SET status = ${r.next}, attempts = ${r.attempt}::int, response_code = ${r.responseCode}::int,
             last_error = ${r.error}::text, next_attempt_at = ${r.nextAttemptAt}::timestamptz,
             locked_until = NULL, locked_by = NULL, updated_at = ${r.now}::timestamptz${
               first
                 ? Prisma.sql`, first_attempt_at = ${r.startedAt}::timestamptz,
             first_attempt_code = ${r.responseCode}::int, first_attempt_error = ${r.error}::text,
             first_attempt_ms = ${r.durationMs}::int`
                 : Prisma.empty
             }
       WHERE id = ${r.deliveryId} AND locked_by = ${r.token} AND status = 'pending'
      RETURNING id)${
        first
          ? Prisma.sql`
    SELECT id FROM d`
          : Prisma.sql`
    INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, started_at, response_code, error, duration_ms)
    SELECT ${uuidv7()}, d.id, ${r.attempt}::int, ${r.startedAt}::timestamptz, ${r.responseCode}::int,
           ${r.error}::text, ${r.durationMs}::int
      FROM d
    RETURNING delivery_id AS id`
      }`;
  return rows.length > 0;
}

/**
 * {@link recordAttempt} for many attempts in ONE statement (the dispatcher's hot path: one round trip per batch of
 * finished attempts instead of one per attempt). Each row is fenced as in recordAttempt. Its text is the same for
 * every batch (the rows go in arrays), so it is a named prepared statement: parsed and analyzed once per connection
 * instead of per batch (issue 24 round 6: about 8–10 µs of backend CPU per delivery less in test/bench/drain-probe.ts).
 * The three times go as epoch milliseconds (`Date.getTime()`, float8) and become timestamps in the statement
 * (`to_timestamp(ms / 1000)`), not as ISO strings: no string per time in the service, no date parsing in the backend
 * (issue 24 round 8). Every whole millisecond from 1970 to 2128 comes out of `to_timestamp(ms / 1000::float8)` as
 * exactly that millisecond (checked over 8 million values in PostgreSQL 15; the columns are `timestamptz(3)`), so what
 * is stored, and shown, is the same instant a `Date`'s ISO string gave. As in recordAttempt, attempt 1 goes into the
 * delivery row's `first_attempt_*` columns by the UPDATE that records the outcome, and only later attempts insert a
 * `webhook_delivery_attempts` row (issue 24 round 12: no attempt row, its two index entries and its foreign-key check
 * for a delivery delivered at its first attempt).
 * The `pending` fence is written `status || '' = 'pending'` (the same test: status is never NULL) so the planner
 * cannot match it to the partial due index: when it could, a custom plan (a connection's first five executions) of a
 * batch of 35–100 read every pending delivery through that index, dead entries included, and hash-joined the batch
 * to them (38 µs a row in the drain against 15 µs for the primary-key lookups of the other plans; issue 24 round 13).
 * @returns the ids whose record was written.
 */
export async function recordAttempts(
  database: Pick<Database, 'preparedWrite'>,
  rs: AttemptRecord[],
): Promise<Set<string>> {
  const col = (f: (r: AttemptRecord) => string | number | null) => arrayParam(rs.map(f));
  const q = Prisma.sql`
    WITH x AS (
      SELECT * FROM unnest(${col((r) => r.deliveryId)}::text[], ${col((r) => r.token)}::text[],
                           ${col((r) => r.next)}::text[], ${col((r) => r.attempt)}::int[],
                           ${col((r) => r.responseCode)}::int[], ${col((r) => r.error)}::text[],
                           ${col((r) => r.nextAttemptAt?.getTime() ?? null)}::float8[],
                           ${col((r) => r.startedAt.getTime())}::float8[], ${col((r) => r.durationMs)}::int[],
                           ${col((r) => r.now.getTime())}::float8[],
                           ${col((r) => (r.attempt === 1 ? null : uuidv7()))}::text[])
        AS x(id, token, next, attempt, code, error, next_ms, started_ms, duration_ms, now_ms, attempt_id)),
    t AS (
      SELECT x.*, to_timestamp(x.next_ms / 1000::float8) AS next_at, to_timestamp(x.started_ms / 1000::float8) AS started_at,
             to_timestamp(x.now_ms / 1000::float8) AS now
        FROM x),
    d AS (
      UPDATE webhook_deliveries w
         SET status = x.next, attempts = x.attempt, response_code = x.code, last_error = x.error,
             next_attempt_at = x.next_at, locked_until = NULL, locked_by = NULL, updated_at = x.now,
             first_attempt_at = CASE WHEN x.attempt = 1 THEN x.started_at ELSE w.first_attempt_at END,
             first_attempt_code = CASE WHEN x.attempt = 1 THEN x.code ELSE w.first_attempt_code END,
             first_attempt_error = CASE WHEN x.attempt = 1 THEN x.error ELSE w.first_attempt_error END,
             first_attempt_ms = CASE WHEN x.attempt = 1 THEN x.duration_ms ELSE w.first_attempt_ms END
        FROM t x
       WHERE w.id = x.id AND w.locked_by = x.token AND w.status || '' = 'pending'
      RETURNING w.id),
    a AS (
      INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, started_at, response_code, error, duration_ms)
      SELECT x.attempt_id, x.id, x.attempt, x.started_at, x.code, x.error, x.duration_ms
        FROM t x JOIN d ON d.id = x.id
       WHERE x.attempt <> 1)
    SELECT id FROM d`;
  const rows = await database.preparedWrite(q.text, q.values as unknown[]);
  return new Set(rows.map((r) => r.id as string));
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
