import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../../app-context.js';
import type { Tx } from '../../infra/db.js';
import { decryptSecret } from '../../infra/secrets.js';
import type { Worker } from '../../infra/workers.js';
import { channelOf } from '../events/event-catalog.js';
import { type EventHook, toEnvelope } from '../events/event-log.js';
import { matchesEvents } from './webhook.schemas.js';
import { deliveryHeaders, type SigningSecrets } from './webhook.signing.js';
import { type AttemptResult, postOnce } from './webhook.transport.js';

/** Attempts per delivery (spec 8). */
export const MAX_ATTEMPTS = 5;
/** Delay before attempts 2, 3, 4 and 5, in ms (spec 8: 30 s, 2 min, 10 min, 1 h). */
export const RETRY_DELAYS_MS = [30_000, 120_000, 600_000, 3_600_000] as const;
/** Longest Retry-After honoured, in ms (24 h); longer values are cut to it. */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;
/**
 * Attempts one instance has in flight at most: a tick claims only as many due deliveries as there are free slots,
 * so a lease is never taken for work that cannot start at once.
 */
export const MAX_IN_FLIGHT = 50;

/** Per-app state of the webhooks area: the secrets key and its fingerprint (see webhook.secrets.ts). */
interface WebhookRuntime {
  key: Buffer;
  keyId: string;
}
const runtimes = new WeakMap<AppContext, WebhookRuntime>();

/** Registers the webhooks runtime of one app (called by setupWebhooks). */
export function registerRuntime(ctx: AppContext, runtime: WebhookRuntime): void {
  runtimes.set(ctx, runtime);
}

/** The webhooks runtime of `ctx`. @throws Error when setupWebhooks did not run for this app. */
export function runtimeOf(ctx: AppContext): WebhookRuntime {
  const r = runtimes.get(ctx);
  if (!r) throw new Error('webhooks area not set up for this app');
  return r;
}

/** How long a claim holds a delivery, in ms: the attempt's timeout plus a margin; a crashed claim is retried after. */
export function leaseMs(ctx: AppContext): number {
  return ctx.config.WEBHOOK_TIMEOUT_MS + 60_000;
}

/**
 * The outbox fan-out (ARCHITECTURE "Events are facts"): runs in the transaction that records each event and writes
 * one `pending` delivery, due at once, per active webhook of the event's account whose `events` match its type, so
 * the event and its deliveries commit together or not at all. A `webhook.*` health event about webhook W is never
 * delivered to W itself (W is the one failing), which keeps health events from feeding on themselves.
 */
export function fanOutHook(): EventHook {
  return async (tx, event) => {
    const webhooks = await tx.webhook.findMany({
      where: { accountId: event.accountId, active: true, deletedAt: null },
      select: { id: true, events: true },
    });
    const targets = webhooks.filter(
      (w) =>
        matchesEvents(w.events, event.eventType) && !(event.channel === 'webhook' && event.payload.webhookId === w.id),
    );
    if (targets.length === 0) return;
    const now = new Date(event.timestamp);
    const body = JSON.stringify(toEnvelope(event));
    await tx.webhookDelivery.createMany({
      data: targets.map((w) => ({
        id: uuidv7(),
        accountId: event.accountId,
        webhookId: w.id,
        eventId: BigInt(event.id),
        eventType: event.eventType,
        body,
        kind: 'event',
        status: 'pending',
        nextAttemptAt: now,
        createdAt: now,
        updatedAt: now,
      })),
    });
  };
}

/**
 * Claims up to `limit` due deliveries for this caller: sets a lease (`lockedUntil`) and a fresh claim token in one
 * statement whose row selection uses `FOR UPDATE SKIP LOCKED`, so concurrent dispatchers (other instances) never
 * claim the same row, and a row whose lease passed (its claimer crashed) is claimable again. Only deliveries of
 * webhooks whose secret this instance's key encrypted are claimed: an instance with another SECRETS_KEY leaves them
 * to the instances that can sign them instead of burning their attempts.
 * @returns the claim token and the claimed ids.
 */
export async function claimDue(ctx: AppContext, limit = MAX_IN_FLIGHT): Promise<{ token: string; ids: string[] }> {
  const now = ctx.clock.now();
  const until = new Date(now.getTime() + leaseMs(ctx));
  const token = randomUUID();
  const { keyId } = runtimeOf(ctx);
  const rows = await ctx.db.$queryRaw<{ id: string }[]>`
    UPDATE webhook_deliveries SET locked_until = ${until}, locked_by = ${token}
     WHERE id IN (
       SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.status = 'pending' AND d.next_attempt_at <= ${now}
          AND (d.locked_until IS NULL OR d.locked_until <= ${now})
          AND w.secret_key_id = ${keyId}
        ORDER BY d.next_attempt_at
        LIMIT ${limit}
        FOR UPDATE OF d SKIP LOCKED)
    RETURNING id`;
  return { token, ids: rows.map((r) => r.id) };
}

/** Parses Retry-After (delta seconds or HTTP date, RFC 9110 10.2.3) into ms from `now`; undefined when unusable. */
export function retryAfterMs(value: string | undefined, now: Date): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(at - now.getTime(), 0), MAX_RETRY_AFTER_MS);
}

/**
 * The secrets an attempt at `at` signs with: the current one and, during a rotation's overlap, the previous one.
 * @returns undefined when the current secret cannot be decrypted with this instance's key.
 */
function signingSecrets(
  ctx: AppContext,
  webhook: {
    id: string;
    secretCiphertext: string;
    previousSecretCiphertext: string | null;
    previousSecretExpiresAt: Date | null;
  },
  at: Date,
  log: AppContext['log'],
): SigningSecrets | undefined {
  const { key } = runtimeOf(ctx);
  let secrets: SigningSecrets;
  try {
    secrets = { current: decryptSecret(key, webhook.secretCiphertext, webhook.id) };
  } catch {
    return undefined;
  }
  if (webhook.previousSecretCiphertext && webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt > at) {
    try {
      secrets.previous = decryptSecret(key, webhook.previousSecretCiphertext, webhook.id);
    } catch {
      log.warn('the previous secret cannot be decrypted (SECRETS_KEY changed?); sending the current signature only');
    }
  }
  return secrets;
}

/**
 * What one attempt's result means (spec 8 and README "Webhooks" › Retries): 2xx → `delivered`; 410 or the last
 * allowed attempt → `failed`; otherwise `pending` again after the scheduled delay for this attempt number, or a
 * longer Retry-After on 429/503.
 */
export function outcomeOf(
  result: AttemptResult,
  attempt: number,
  maxAttempts: number,
  now: Date,
): { next: 'delivered' | 'failed' | 'pending'; nextAttemptAt: Date | null; error: string | null; gone: boolean } {
  const status = result.status;
  if (status !== undefined && status >= 200 && status < 300) {
    return { next: 'delivered', nextAttemptAt: null, error: null, gone: false };
  }
  const error = result.error ?? (status !== undefined ? `receiver answered ${status}` : 'no answer');
  const gone = status === 410;
  if (gone || attempt >= maxAttempts) return { next: 'failed', nextAttemptAt: null, error, gone };
  let delay: number = RETRY_DELAYS_MS[attempt - 1]!;
  if (status === 429 || status === 503) delay = Math.max(delay, retryAfterMs(result.retryAfter, now) ?? 0);
  return { next: 'pending', nextAttemptAt: new Date(now.getTime() + delay), error, gone };
}

/**
 * Lost the claim mid-attempt: another instance owns the delivery now (the lease passed), or it was cancelled meanwhile
 * (webhook deleted or disabled), so this result is dropped.
 */
class LeaseLostError extends Error {}

/** One attempt's result and the delivery's state after it, as {@link recordAttempt} writes them. */
interface AttemptRecord {
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
async function recordAttempt(db: Tx, r: AttemptRecord): Promise<boolean> {
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
 * Makes one attempt of a claimed delivery and records it (spec 3 and 8; README "Webhooks" › Retries):
 * 2xx → `delivered`; 410 → `failed` and the webhook disabled (its other pending deliveries `cancelled`,
 * `webhook.disabled` emitted); any other answer, a refusal, a timeout or a connection error → a failed attempt,
 * retried after 30 s, 2 min, 10 min, 1 h (or a longer Retry-After on 429/503), and after the 5th (the 1st for a
 * test delivery) `failed`, emitting `webhook.delivery.failed` unless the delivery itself carries a `webhook.*`
 * event or is a test. The attempt row and the new state commit together, fenced by the claim token and
 * `status = 'pending'` (a delivery cancelled meanwhile stays cancelled); only an attempt that emits an event goes
 * through the (serialised) event transaction.
 * @returns the delivery's status afterwards, or undefined when the claim was lost.
 */
export async function attemptClaimed(
  ctx: AppContext,
  deliveryId: string,
  token: string,
  opts: { ignoreInactive?: boolean } = {},
): Promise<string | undefined> {
  const delivery = await ctx.db.webhookDelivery.findFirst({
    where: { id: deliveryId, lockedBy: token },
    include: { webhook: true },
  });
  if (!delivery) return undefined;
  const webhook = delivery.webhook;
  const log = ctx.log.child({ deliveryId, webhookId: webhook.id });
  if (webhook.deletedAt || (!webhook.active && !opts.ignoreInactive)) {
    await ctx.db.webhookDelivery.updateMany({
      where: { id: deliveryId, lockedBy: token, status: 'pending' },
      data: {
        status: 'cancelled',
        nextAttemptAt: null,
        lockedUntil: null,
        lockedBy: null,
        lastError: webhook.deletedAt ? 'webhook deleted' : 'webhook disabled',
        updatedAt: ctx.clock.now(),
      },
    });
    return 'cancelled';
  }

  const attempt = delivery.attempts + 1;
  const startedAt = ctx.clock.now();
  const started = performance.now();
  const secrets = signingSecrets(ctx, webhook, startedAt, log);
  let result: AttemptResult;
  if (!secrets) {
    result = { error: 'the webhook secret cannot be decrypted (was SECRETS_KEY or DATA_DIR/secrets.key changed?)' };
  } else {
    const body = Buffer.from(delivery.body, 'utf8');
    const headers = deliveryHeaders(body, secrets, {
      deliveryId: delivery.id,
      eventType: delivery.eventType,
      eventId: delivery.eventId?.toString() ?? null,
      attempt,
      timestamp: Math.floor(startedAt.getTime() / 1000),
      test: delivery.kind === 'test',
    });
    result = await postOnce(webhook.url, body, headers, {
      timeoutMs: ctx.config.WEBHOOK_TIMEOUT_MS,
      allowPrivate: ctx.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    });
  }
  const durationMs = Math.round(performance.now() - started);
  const now = ctx.clock.now();
  const status = result.status;
  const { next, nextAttemptAt, error, gone } = outcomeOf(
    result,
    attempt,
    delivery.kind === 'test' ? 1 : MAX_ATTEMPTS,
    now,
  );
  const ok = next === 'delivered';

  ctx.metrics.webhookAttempt(ok ? 'delivered' : result.refused ? 'refused' : next === 'pending' ? 'retry' : 'failed');
  if (ok) log.info({ attempt, status }, 'webhook delivered');
  else if (result.refused) log.warn({ attempt, reason: result.error }, 'webhook delivery refused by the SSRF guard');
  else log.warn({ attempt, status, reason: error, next, nextAttemptAt }, 'webhook delivery attempt failed');

  const record: AttemptRecord = {
    deliveryId,
    token,
    next,
    attempt,
    responseCode: status ?? null,
    error,
    nextAttemptAt,
    startedAt,
    durationMs,
    now,
  };
  // A `webhook.*` delivery failing for good emits nothing, so health events never feed on themselves.
  const mayReportFailure = delivery.kind !== 'test' && channelOf(delivery.eventType) !== 'webhook';
  const lost = () => {
    log.warn({ attempt }, 'webhook delivery claim lost (lease passed or delivery cancelled); result not recorded');
    return undefined;
  };
  if (!gone && !(next === 'failed' && mayReportFailure)) {
    // No event to emit (the common case): one statement, outside the serialised event transactions.
    return (await recordAttempt(ctx.db, record)) ? next : lost();
  }
  try {
    await ctx.events.transaction(async (tx: Tx, emit) => {
      if (!(await recordAttempt(tx, record))) throw new LeaseLostError();
      if (gone) {
        const reason = 'the receiver answered 410 Gone';
        await tx.webhook.update({ where: { id: webhook.id }, data: { active: false, disabledReason: reason } });
        await tx.webhookDelivery.updateMany({
          where: { webhookId: webhook.id, status: 'pending' },
          data: {
            status: 'cancelled',
            nextAttemptAt: null,
            lockedUntil: null,
            lockedBy: null,
            lastError: 'webhook disabled',
            updatedAt: now,
          },
        });
        await emit(delivery.accountId, 'webhook.disabled', {
          webhookId: webhook.id,
          url: webhook.url,
          reason,
          responseCode: 410,
          deliveryId,
        });
      } else if (next === 'failed' && mayReportFailure) {
        await emit(delivery.accountId, 'webhook.delivery.failed', {
          webhookId: webhook.id,
          deliveryId,
          eventId: delivery.eventId?.toString() ?? null,
          eventType: delivery.eventType,
          attempts: attempt,
          responseCode: status ?? null,
          error,
        });
      }
    });
  } catch (err) {
    if (err instanceof LeaseLostError) return lost();
    throw err;
  }
  return next;
}

/**
 * The dispatcher worker. Each tick claims up to the free slots of {@link MAX_IN_FLIGHT} due deliveries
 * ({@link claimDue}) and STARTS their attempts without waiting for them, so a receiver that is slow or never answers
 * (up to WEBHOOK_TIMEOUT_MS) holds one slot, not the tick: other accounts' deliveries are claimed by the next tick,
 * at once. `settle()` resolves when every started attempt has finished (drain, shutdown).
 * @returns per tick, how many deliveries it claimed and started (0 when nothing was due or every slot is busy).
 */
export function createDispatcher(ctx: AppContext): Worker {
  const inFlight = new Set<Promise<void>>();
  return {
    name: 'webhook-dispatcher',
    async tick() {
      const free = MAX_IN_FLIGHT - inFlight.size;
      if (free <= 0) return 0;
      const { token, ids } = await claimDue(ctx, free);
      for (const id of ids) {
        const attempt: Promise<void> = attemptClaimed(ctx, id, token)
          .then(
            () => undefined,
            (err: unknown) => {
              ctx.log.error({ err, deliveryId: id }, 'webhook delivery attempt crashed; the lease expiry retries it');
            },
          )
          .finally(() => inFlight.delete(attempt));
        inFlight.add(attempt);
      }
      return ids.length;
    },
    async settle() {
      while (inFlight.size > 0) await Promise.all(inFlight);
    },
  };
}
