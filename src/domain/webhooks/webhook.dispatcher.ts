import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { changeTopic } from '../events/change-notices.port.js';
import { toEnvelope } from '../events/event.js';
import { channelOf } from '../events/event-catalog.js';
import type { EventHook, WriteAttempt } from '../events/event-log.js';
import type { DomainContext } from '../kernel/context.js';
import type { Tx } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';
import {
  type ClaimedJob,
  type JobKind,
  type JobRunnerPort,
  SPEC8_SCHEDULE,
  nextAttemptAt as scheduledAfter,
} from '../kernel/jobs.js';
import { decryptSecret, secretsKeyId } from '../kernel/secrets.js';
import { matchesEvents } from './webhook.schemas.js';
import { deliveryHeaders, type SigningSecrets, signingKey } from './webhook.signing.js';
import { cancelPendingDeliveries, disableWebhook } from './webhook.store.js';
import {
  type AttemptRecord,
  activeWebhooksRead,
  type ClaimedDelivery,
  cancelClaimedDelivery,
  deliveryJobSql,
  findClaimedDelivery,
  insertOutboxRows,
  type OutboxRow,
  outboxInsert,
  recordAttempt,
  recordAttempts,
  recordLostAttempt,
} from './webhook-dispatch.store.js';
import type { AttemptResult } from './webhook-transport.port.js';

export type { ClaimedDelivery } from './webhook-dispatch.store.js';

/** The job kind of webhook deliveries in the job queue (src/infra/jobs; docs/jobs.md). */
export const WEBHOOK_JOB = 'webhook-delivery';
/** Attempts per delivery (spec 8). */
export const MAX_ATTEMPTS = SPEC8_SCHEDULE.maxAttempts;
/** Longest Retry-After honoured, in ms (24 h); longer values are cut to it. */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;
/**
 * Attempts one instance has in flight at most, over all accounts; a tick claims only as many due deliveries as
 * there are free slots, so a lease is never taken for work that cannot start at once.
 */
export const MAX_IN_FLIGHT = 500;
/**
 * Attempts of one account in flight on one instance at most (inside {@link MAX_IN_FLIGHT}): an account whose
 * receivers hang holds at most these slots, never the other accounts' (issue 9 "a slow receiver is bounded").
 */
export const MAX_IN_FLIGHT_PER_ACCOUNT = 200;
/** Attempts to one webhook (one receiver URL) in flight on one instance at most. */
export const MAX_IN_FLIGHT_PER_WEBHOOK = 50;
/**
 * Statements of attempt outcomes (the batched `recordAttempts`) one instance has in flight at most; outcomes that
 * finish meanwhile wait and share the next statement (issue 24: each statement is a commit with its WAL flush, a
 * round trip and the pool's and PostgreSQL's per-statement work, paid per batch instead of per turn of the event
 * loop). An outcome waits at most for the statements in flight, well inside the lease's margin (LEASE_MARGIN_MS).
 */
export const OUTCOMES_IN_FLIGHT = 1;
/** How many due deliveries one tick claims at most. */
const CLAIM_BATCH = 100;
/** Margin of the lease over the attempt's own timeout, in ms: room to record the result. */
const LEASE_MARGIN_MS = 10_000;

/**
 * How long a claim holds a delivery, in ms: the attempt's timeout (WEBHOOK_TIMEOUT_MS) plus {@link LEASE_MARGIN_MS},
 * extended every third of it while the attempt still runs. An attempt whose instance died is retried once it ends
 * (issue 13: within the lease plus WORKER_POLL_MS, 21 s by default), and counts as an attempt.
 */
export function leaseMs(ctx: DomainContext): number {
  return ctx.config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS;
}

/** An event as the fan-out sees it, and an active webhook as the fan-out's `read` returns it. */
type HookEvent = { channel: string; eventType: string; payload: Record<string, unknown> };
type HookWebhook = {
  id: string;
  events: string[];
  url?: string;
  /** Id of the key that encrypted the secret (only that key's instances can sign). */
  key?: string;
  secret?: string;
  previous?: string | null;
  previousExpiresAt?: string | null;
};

/** Whether webhook `w` gets a delivery of `event`: its `events` match, and it is not a health event about `w` itself. */
function receives(w: HookWebhook, event: HookEvent): boolean {
  if (!matchesEvents(w.events, event.eventType)) return false;
  return !(event.channel === 'webhook' && event.payload.webhookId === w.id);
}

/** A delivery the fan-out wrote claimed for this instance: the job handed to the dispatcher after the commit. */
interface PreClaimed {
  row: OutboxRow;
  /** Index of its event in the write. */
  index: number;
  webhook: HookWebhook;
}

/**
 * The outbox fan-out (ARCHITECTURE "Events are facts"): runs in the transaction that records each event and writes
 * one `pending` delivery, due at once, per active webhook of the event's account whose `events` match its type, so
 * the event and its deliveries commit together or not at all. A `webhook.*` health event about webhook W is never
 * delivered to W itself (W is the one failing), which keeps health events from feeding on themselves.
 *
 * Issue 24: in a single-statement write on an instance whose dispatcher runs (its job queue started), each delivery
 * this instance can start at once (a slot free within MAX_IN_FLIGHT and the account's and webhook's limits, and a
 * secret this instance's key encrypted) is written already claimed: `locked_by` a fresh token, `locked_until` its
 * event's time plus {@link leaseMs}, its first attempt counted, exactly as a claim of the job queue writes it. After
 * the commit those deliveries start here with what the write already holds (body, webhook, secrets), without a claim
 * statement, a wake-up or a read. At-least-once holds as for any claim: if this process dies before recording the
 * attempt, the lease runs out and any instance claims the delivery again (the lost try counted, docs/jobs.md). The
 * others are written unclaimed and the dispatchers are woken for them as before.
 */
export function fanOutHook(ctx: DomainContext): EventHook {
  /** The delivery rows of `events` for the account's active `webhooks` (as `read` returned them), with `bodies`. */
  const deliveries = (events: HookEvent[], read: unknown, bodies: string[], at: (index: number) => string) => {
    const rows: OutboxRow[] = [];
    const index: number[] = [];
    const hooks: HookWebhook[] = [];
    events.forEach((event, i) => {
      for (const w of (read ?? []) as HookWebhook[]) {
        if (receives(w, event)) {
          rows.push({ id: uuidv7(), webhookId: w.id, eventType: event.eventType, body: bodies[i]!, at: at(i) });
          index.push(i);
          hooks.push(w);
        }
      }
    });
    return { rows, index, hooks };
  };
  const wantsDelivery = (events: HookEvent[], read: unknown) =>
    ((read ?? []) as HookWebhook[]).some((w) => events.some((e) => receives(w, e)));
  /** Per statement built: the deliveries it claims for this instance, and whether it left any unclaimed. */
  const claims = new WeakMap<
    WriteAttempt,
    { jobs: PreClaimed[]; token: string; accountId: string; unclaimed: boolean }
  >();
  let runner: JobRunnerPort | undefined;
  const dispatcher = () => {
    runner ??= ctx.jobs.runner(WEBHOOK_JOB);
    return runner;
  };
  return {
    // The account's active webhooks, read by the statement that records the events (no round trip of its own).
    read: activeWebhooksRead,
    async run(tx, events, read) {
      if (!wantsDelivery(events, read)) return;
      const bodies = events.map((e) => JSON.stringify(toEnvelope(e)));
      const { rows, index } = deliveries(events, read, bodies, (i) => events[i]!.timestamp);
      await insertOutboxRows(
        tx,
        events[0]!.accountId,
        rows,
        index.map((i) => events[i]!.id),
      );
    },
    statement(events, read, _name, attempt) {
      if (!wantsDelivery(events, read)) return [];
      const accountId = events[0]!.accountId;
      const bodies = events.map((e) =>
        JSON.stringify(toEnvelope({ ...e, id: '', seq: '', accountId: e.accountId, timestamp: e.timestamp })),
      );
      const { rows, index, hooks } = deliveries(events, read, bodies, (i) => events[i]!.timestamp);
      const jobs: PreClaimed[] = [];
      const token = randomUUID();
      const lease = leaseMs(ctx);
      const d = dispatcher();
      rows.forEach((row, n) => {
        const w = hooks[n]!;
        if (w.key !== ctx.secretsKeyId || w.url === undefined || w.secret === undefined) return;
        if (!d.reserve([accountId, w.id])) return;
        row.claim = { token, until: new Date(Date.parse(row.at) + lease).toISOString() };
        jobs.push({ row, index: index[n]!, webhook: w });
      });
      claims.set(attempt, { jobs, token, accountId, unclaimed: jobs.length < rows.length });
      return [outboxInsert(accountId, rows, { ords: index.map((i) => events[i]!.ord) })];
    },
    abandoned(attempt) {
      const c = claims.get(attempt);
      if (!c) return;
      claims.delete(attempt);
      for (const j of c.jobs) dispatcher().release([c.accountId, j.webhook.id]);
    },
    // The dispatchers are woken after the commit, not by a NOTIFY inside the write: see JobQueue.announce.
    committed(events, read, attempt) {
      const c = attempt ? claims.get(attempt) : undefined;
      if (c) {
        claims.delete(attempt!);
        const d = dispatcher();
        // After this turn of the event loop: the answers of the write (e.g. the 202s of ingest) go out first.
        if (c.jobs.length > 0)
          setImmediate(() => {
            for (const j of c.jobs) {
              const event = events[j.index]!;
              d.runReserved({
                id: j.row.id,
                token: c.token,
                attempt: 1,
                recovered: false,
                previousLeaseUntil: null,
                keys: [event.accountId, j.webhook.id],
                data: {
                  kind: 'event',
                  body: j.row.body,
                  eventType: j.row.eventType,
                  eventId: event.id,
                  accountId: event.accountId,
                  webhookId: j.webhook.id,
                  url: j.webhook.url,
                  active: true,
                  deletedAt: null,
                  secretCiphertext: j.webhook.secret,
                  previousSecretCiphertext: j.webhook.previous ?? null,
                  previousSecretExpiresAt: j.webhook.previousExpiresAt ?? null,
                },
              });
            }
          });
        if (!c.unclaimed) return;
      }
      if (wantsDelivery(events, read)) ctx.jobs.announce(WEBHOOK_JOB);
    },
  };
}

/**
 * Claims up to `limit` due deliveries as a dispatcher does, without attempting them (tests use it to play an instance
 * that claims and dies). @returns the claim token and the claimed ids.
 */
export async function claimDue(ctx: DomainContext, limit = CLAIM_BATCH): Promise<{ token: string; ids: string[] }> {
  const jobs = await ctx.jobs.runner(WEBHOOK_JOB).claim(limit);
  return { token: jobs[0]?.token ?? '', ids: jobs.map((j) => j.id) };
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
  ctx: DomainContext,
  webhook: {
    id: string;
    secretCiphertext: string;
    previousSecretCiphertext: string | null;
    previousSecretExpiresAt: Date | null;
  },
  at: Date,
  log: DomainContext['log'],
): SigningSecrets | undefined {
  const key = ctx.secretsKey;
  let secrets: SigningSecrets;
  try {
    secrets = { current: signingKey(decryptSecret(key, webhook.secretCiphertext, webhook.id)) };
  } catch {
    return undefined;
  }
  if (webhook.previousSecretCiphertext && webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt > at) {
    try {
      secrets.previous = signingKey(decryptSecret(key, webhook.previousSecretCiphertext, webhook.id));
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
  const atLeast = status === 429 || status === 503 ? (retryAfterMs(result.retryAfter, now) ?? 0) : 0;
  const next = gone ? undefined : scheduledAfter(SPEC8_SCHEDULE, attempt, now, atLeast, maxAttempts);
  if (!next) return { next: 'failed', nextAttemptAt: null, error, gone };
  return { next: 'pending', nextAttemptAt: next, error, gone };
}

/**
 * Lost the claim mid-attempt: another instance owns the delivery now (the lease passed), or it was cancelled meanwhile
 * (webhook deleted or disabled), so this result is dropped.
 */
class LeaseLostError extends Error {}

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
  ctx: DomainContext,
  deliveryId: string,
  token: string,
  opts: AttemptOptions = {},
): Promise<string | undefined> {
  const delivery: ClaimedDelivery | null = opts.delivery ?? (await findClaimedDelivery(ctx.db, deliveryId, token));
  if (!delivery || delivery.lockedBy !== token) return undefined;
  const webhook = delivery.webhook;
  const log = attemptLog(ctx, delivery);
  const recovered = opts.job?.recovered ?? false;
  if (webhook.deletedAt || (!webhook.active && !opts.ignoreInactive)) {
    await cancelClaimedDelivery(
      ctx.db,
      deliveryId,
      token,
      webhook.deletedAt ? 'webhook deleted' : 'webhook disabled',
      ctx.clock.now(),
      // The claim counted an attempt that is not made.
      Boolean(opts.job && !recovered),
    );
    return 'cancelled';
  }

  // The claim counted this attempt (so a try lost with its instance counts too: issue 13).
  const attempt = delivery.attempts;
  const maxAttempts = delivery.kind === 'test' ? 1 : MAX_ATTEMPTS;
  // Subject of the whole attempt: a fresh record of a lost try first, when the previous claim's lease ran out.
  const lostTry = recovered ? lostAttempt(ctx, opts.job!, attempt - 1) : undefined;
  if (lostTry && attempt > maxAttempts) {
    // The lost try was the last one allowed: the delivery fails without another send.
    log().warn({ attempt: attempt - 1 }, 'webhook delivery attempt lost with its instance; no attempts left');
    return finishAttempt(
      ctx,
      delivery,
      token,
      log,
      { ...lostTry, next: 'failed', nextAttemptAt: null, gone: false },
      opts.record,
    );
  }
  if (lostTry) {
    log().warn({ attempt: attempt - 1 }, 'webhook delivery attempt lost with its instance; retrying now');
    await recordLostAttempt(ctx.db, deliveryId, token, lostTry);
  }
  const send = prepareSend(ctx, delivery, opts.secrets);
  const result = send.headers ? await ctx.webhookTransport.post(webhook.url, send.body, send.headers) : send.refusal;
  return finishAttempt(ctx, delivery, token, log, attemptOutcome(ctx, send, result, log), opts.record);
}

/** The delivery's logger, a child made only when a line is written (most attempts write none at the default level). */
function attemptLog(ctx: DomainContext, delivery: ClaimedDelivery): () => DomainContext['log'] {
  let child: DomainContext['log'] | undefined;
  return () => {
    child ??= ctx.log.child({ deliveryId: delivery.id, webhookId: delivery.webhook.id });
    return child;
  };
}

/** One attempt's POST as worked out before it is sent: the signed headers, or the result when it cannot be signed. */
interface PreparedSend {
  attempt: number;
  maxAttempts: number;
  startedAt: Date;
  /** `performance.now()` at the start, ms. */
  started: number;
  body: Buffer;
  /** Undefined when the secret cannot be decrypted: then `refusal` is the attempt's result, nothing is sent. */
  headers?: string[];
  refusal: AttemptResult;
}

const UNDECRYPTABLE: AttemptResult = {
  error: 'the webhook secret cannot be decrypted (was SECRETS_KEY or DATA_DIR/secrets.key changed?)',
};

/** Signs attempt `delivery.attempts` of `delivery` now (spec 2.11 headers over the body's UTF-8 bytes). */
function prepareSend(
  ctx: DomainContext,
  delivery: ClaimedDelivery,
  cachedSecrets: AttemptOptions['secrets'],
): PreparedSend {
  const webhook = delivery.webhook;
  const attempt = delivery.attempts;
  const startedAt = ctx.clock.now();
  const started = performance.now();
  const secrets = cachedSecrets ? cachedSecrets(webhook, startedAt) : signingSecrets(ctx, webhook, startedAt, ctx.log);
  const body = Buffer.from(delivery.body, 'utf8');
  const send = {
    attempt,
    maxAttempts: delivery.kind === 'test' ? 1 : MAX_ATTEMPTS,
    startedAt,
    started,
    body,
    refusal: UNDECRYPTABLE,
  };
  if (!secrets) return send;
  const headers = deliveryHeaders(body, secrets, {
    deliveryId: delivery.id,
    eventType: delivery.eventType,
    eventId: delivery.eventId?.toString() ?? null,
    attempt,
    timestamp: Math.floor(startedAt.getTime() / 1000),
    test: delivery.kind === 'test',
  });
  return { ...send, headers };
}

/** What a sent (or unsendable) attempt's `result` means, counted in the metrics and logged. */
function attemptOutcome(
  ctx: DomainContext,
  send: PreparedSend,
  result: AttemptResult,
  log: () => DomainContext['log'],
): Outcome {
  const { attempt } = send;
  const durationMs = Math.round(performance.now() - send.started);
  const now = ctx.clock.now();
  const status = result.status;
  const { next, nextAttemptAt, error, gone } = outcomeOf(result, attempt, send.maxAttempts, now);

  ctx.metrics.webhookAttempt(
    next === 'delivered' ? 'delivered' : result.refused ? 'refused' : next === 'pending' ? 'retry' : 'failed',
  );
  if (next === 'delivered') {
    if (ctx.log.isLevelEnabled('debug')) log().debug({ attempt, status }, 'webhook delivered');
  } else if (result.refused)
    log().warn({ attempt, reason: result.error }, 'webhook delivery refused by the SSRF guard');
  else log().warn({ attempt, status, reason: error, next, nextAttemptAt }, 'webhook delivery attempt failed');
  return {
    next,
    attempt,
    responseCode: status ?? null,
    error,
    nextAttemptAt,
    startedAt: send.startedAt,
    durationMs,
    now,
    gone,
  };
}

/** An attempt's outcome as {@link finishAttempt} writes it. */
type Outcome = Omit<AttemptRecord, 'deliveryId' | 'token'> & { gone: boolean };

/** What the log shows for a try lost with its instance (issue 13; docs/jobs.md "Lost attempts"). */
export const LOST_ATTEMPT_ERROR = "lost: the attempt's instance stopped before its answer was recorded (lease expired)";

/** The record of attempt `attempt`, lost with the instance that claimed it (it started about when it was claimed). */
function lostAttempt(ctx: DomainContext, job: ClaimedJob, attempt: number) {
  const lease = leaseMs(ctx);
  const now = ctx.clock.now();
  const startedAt = job.previousLeaseUntil ? new Date(job.previousLeaseUntil.getTime() - lease) : now;
  return {
    attempt,
    responseCode: null,
    error: LOST_ATTEMPT_ERROR,
    startedAt,
    durationMs: Math.max(0, now.getTime() - startedAt.getTime()),
    now,
  };
}

/** Options of {@link attemptClaimed}. */
export interface AttemptOptions {
  /** Attempt even when the webhook is inactive (a test delivery). */
  ignoreInactive?: boolean;
  /** The queue's claim (whether the previous claim was lost, and its lease end). */
  job?: ClaimedJob;
  /** The claimed delivery with its webhook, when the claim already returned it (the dispatcher's claim does). */
  delivery?: ClaimedDelivery;
  /** Records an outcome that emits no event (the dispatcher batches these writes). @returns false when fenced out. */
  record?: (r: AttemptRecord) => Promise<boolean>;
  /** The signing secrets of a webhook at a time (the dispatcher caches the decrypted secrets). */
  secrets?: (webhook: ClaimedDelivery['webhook'], at: Date) => SigningSecrets | undefined;
}

/** Whether outcome `o` emits an event (410 Gone, or a last failure reported), so it needs the event transaction. */
function emitsEvent(delivery: ClaimedDelivery, o: Outcome): boolean {
  // A `webhook.*` delivery failing for good emits nothing, so health events never feed on themselves.
  return o.gone || (o.next === 'failed' && delivery.kind !== 'test' && channelOf(delivery.eventType) !== 'webhook');
}

/**
 * After the attempt is recorded: a notice for webhookDeliveryAttempted subscribers (never throws). Built only when
 * someone may listen on its topic (issue 24: with the in-process notices and no subscriber, as on nearly every
 * attempt, the notice object and its ISO timestamp were made for nobody).
 */
function notifyAttempted(ctx: DomainContext, delivery: ClaimedDelivery, o: Outcome): void {
  const topic = changeTopic(delivery.accountId, 'webhookDelivery', delivery.webhook.id);
  if (!ctx.notices.listening(topic)) return;
  ctx.notices.publish(topic, {
    kind: 'webhook.delivery.attempted',
    accountId: delivery.accountId,
    webhookId: delivery.webhook.id,
    deliveryId: delivery.id,
    attempt: o.attempt,
    status: o.next,
    timestamp: o.now.toISOString(),
  });
}

/** A result dropped because the claim was lost (logged). @returns undefined, the attempt's "claim lost". */
function claimLost(log: () => DomainContext['log'], attempt: number): undefined {
  log().warn({ attempt }, 'webhook delivery claim lost (lease passed or delivery cancelled); result not recorded');
  return undefined;
}

/** Writes an attempt's outcome (and its event, when it emits one). @returns the status afterwards, or undefined when the claim was lost. */
async function finishAttempt(
  ctx: DomainContext,
  delivery: ClaimedDelivery,
  token: string,
  log: () => DomainContext['log'],
  o: Outcome,
  record?: AttemptOptions['record'],
): Promise<string | undefined> {
  const { next, attempt, gone, now } = o;
  const webhook = delivery.webhook;
  const deliveryId = delivery.id;
  const status = o.responseCode ?? undefined;
  const error = o.error;
  const rec: AttemptRecord = { deliveryId, token, ...o };
  if (!emitsEvent(delivery, o)) {
    // No event to emit (the common case): one statement, outside the serialised event transactions.
    const recorded = record ? await record(rec) : await recordAttempt(ctx.db, rec);
    if (!recorded) return claimLost(log, attempt);
    notifyAttempted(ctx, delivery, o);
    return next;
  }
  try {
    await ctx.events.transaction(async (tx: Tx, emit) => {
      if (!(await recordAttempt(tx, rec))) throw new LeaseLostError();
      if (gone) {
        const reason = 'the receiver answered 410 Gone';
        await disableWebhook(tx, webhook.id, reason);
        await cancelPendingDeliveries(tx, webhook.id, 'webhook disabled', now);
        await emit(delivery.accountId, 'webhook.disabled', {
          webhookId: webhook.id,
          url: webhook.url,
          reason,
          responseCode: 410,
          deliveryId,
        });
      } else {
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
    if (err instanceof LeaseLostError) return claimLost(log, attempt);
    throw err;
  }
  notifyAttempted(ctx, delivery, o);
  return next;
}

/** The delivery and webhook a claim returned ({@link webhookJobKind}'s `data` columns). */
function claimedDelivery(job: ClaimedJob): ClaimedDelivery {
  const d = job.data as {
    kind: string;
    body: string;
    eventType: string;
    eventId: string | null;
    accountId: string;
    webhookId: string;
    url: string;
    active: boolean;
    deletedAt: Date | string | null;
    secretCiphertext: string;
    previousSecretCiphertext: string | null;
    previousSecretExpiresAt: Date | string | null;
  };
  const date = (v: Date | string | null) => (v === null ? null : new Date(v));
  return {
    id: job.id,
    lockedBy: job.token,
    attempts: job.attempt,
    kind: d.kind,
    body: d.body,
    eventType: d.eventType,
    eventId: d.eventId === null ? null : BigInt(d.eventId),
    accountId: d.accountId,
    webhook: {
      id: d.webhookId,
      url: d.url,
      active: d.active,
      deletedAt: date(d.deletedAt),
      secretCiphertext: d.secretCiphertext,
      previousSecretCiphertext: d.previousSecretCiphertext,
      previousSecretExpiresAt: date(d.previousSecretExpiresAt),
    },
  };
}

/**
 * The webhook delivery job kind (src/infra/jobs): due `pending` deliveries of webhooks whose secret this instance's
 * key encrypted (an instance with another SECRETS_KEY leaves them to the instances that can sign them instead of
 * burning their attempts), at most {@link MAX_IN_FLIGHT} in flight on this instance,
 * {@link MAX_IN_FLIGHT_PER_ACCOUNT} per account and {@link MAX_IN_FLIGHT_PER_WEBHOOK} per webhook, so a receiver that is slow or never answers (up to
 * WEBHOOK_TIMEOUT_MS) holds only its own account's slots. Claimed deliveries are loaded in one query per batch, and
 * each webhook's secrets are decrypted once (until rotated), not per attempt.
 */
export function webhookJobKind(ctx: DomainContext): JobKind {
  const sql = deliveryJobSql(secretsKeyId(ctx.secretsKey));
  // Per webhook id: the signing keys and the ciphertexts they came from (a rotation changes the stamp, so the entry
  // is replaced); the 10,000 most recently used webhooks are kept.
  const secretCache = new LRUCache<string, { stamp: string; secrets: SigningSecrets | false }>({ max: 10_000 });
  const secrets = (webhook: ClaimedDelivery['webhook'], at: Date): SigningSecrets | undefined => {
    const overlap = Boolean(webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt > at);
    const stamp = `${webhook.secretCiphertext}|${overlap ? webhook.previousSecretCiphertext : ''}`;
    const hit = secretCache.get(webhook.id);
    if (hit && hit.stamp === stamp) return hit.secrets || undefined;
    const s = signingSecrets(ctx, webhook, at, ctx.log);
    secretCache.set(webhook.id, { stamp, secrets: s ?? false });
    return s;
  };
  // Outcomes that emit no event, written together (group commit, as the event log's appends): a statement starts at
  // the end of a turn of the event loop, so every attempt finishing meanwhile joins it (at most 500 per statement),
  // and at most OUTCOMES_IN_FLIGHT run at once; outcomes that finish while they run wait and go together in the next
  // one. Each waits with its callbacks, no promise of its own.
  const queued: { r: AttemptRecord; resolve: (ok: boolean) => void; reject: (e: unknown) => void }[] = [];
  let running = 0;
  let scheduled = false;
  const schedule = () => {
    if (scheduled || running >= OUTCOMES_IN_FLIGHT || queued.length === 0) return;
    scheduled = true;
    setImmediate(flush);
  };
  const settled = () => {
    running--;
    schedule();
  };
  const flush = () => {
    scheduled = false;
    if (running >= OUTCOMES_IN_FLIGHT || queued.length === 0) return;
    const batch = queued.splice(0, 500);
    running++;
    schedule();
    recordAttempts(
      ctx.database,
      batch.map((b) => b.r),
    ).then(
      (done) => {
        settled();
        for (const b of batch) b.resolve(done.has(b.r.deliveryId));
      },
      (err: unknown) => {
        settled();
        for (const b of batch) b.reject(err);
      },
    );
  };
  const enqueue = (r: AttemptRecord, resolve: (ok: boolean) => void, reject: (e: unknown) => void) => {
    queued.push({ r, resolve, reject });
    schedule();
  };
  const record = (r: AttemptRecord) => new Promise<boolean>((resolve, reject) => enqueue(r, resolve, reject));
  return {
    name: WEBHOOK_JOB,
    table: 'webhook_deliveries',
    dueColumn: 'next_attempt_at',
    where: sql.where,
    attemptsColumn: 'attempts',
    leaseMs: leaseMs(ctx),
    concurrency: MAX_IN_FLIGHT,
    batch: CLAIM_BATCH,
    perKey: [
      { column: 'account_id', limit: MAX_IN_FLIGHT_PER_ACCOUNT },
      { column: 'webhook_id', limit: MAX_IN_FLIGHT_PER_WEBHOOK },
    ],
    // The claim returns each delivery with its webhook (one statement per batch, no load query per tick).
    data: {
      join: sql.join,
      columns: sql.columns,
    },
    // The attempt's own promise, without an async wrapper (issue 24: promises per delivery); a row that cannot be
    // read still rejects, never throws (the queue logs it and the claim expires).
    run(job) {
      let delivery: ClaimedDelivery;
      try {
        delivery = claimedDelivery(job);
      } catch (err) {
        return Promise.reject(err);
      }
      // A fresh claim of an active webhook's delivery whose outcome emits no event (nearly every one): one promise
      // for the attempt and one for the POST's reaction, instead of two async functions and a promise per record
      // (issue 24 round 6). Everything else takes attemptClaimed's general path.
      if (job.recovered || delivery.webhook.deletedAt || !delivery.webhook.active)
        return attemptClaimed(ctx, job.id, job.token, { job, delivery, secrets, record });
      return new Promise<string | undefined>((resolve, reject) => {
        const log = attemptLog(ctx, delivery);
        const send = prepareSend(ctx, delivery, secrets);
        const finish = (result: AttemptResult) => {
          try {
            const o = attemptOutcome(ctx, send, result, log);
            if (emitsEvent(delivery, o)) {
              finishAttempt(ctx, delivery, job.token, log, o).then(resolve, reject);
              return;
            }
            enqueue(
              { deliveryId: delivery.id, token: job.token, ...o },
              (ok) => {
                if (!ok) return resolve(claimLost(log, o.attempt));
                notifyAttempted(ctx, delivery, o);
                resolve(o.next);
              },
              reject,
            );
          } catch (err) {
            reject(err);
          }
        };
        if (send.headers) ctx.webhookTransport.post(delivery.webhook.url, send.body, send.headers).then(finish, reject);
        else finish(send.refusal);
      });
    },
  };
}
