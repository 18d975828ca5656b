import type { Prisma } from '../../generated/prisma/client.js';
import type { Tx } from './db.js';

/*
 * Durable work as the domain declares it: job kinds as plain data, retry schedules, and the port of the job queue
 * (src/infra/jobs/job-queue.ts implements it; docs/jobs.md).
 */

/** Default lease of a claim, in ms: long enough for one attempt of a slow kind (mail relay, model call). */
export const CLAIM_LEASE_MS = 5 * 60_000;

/**
 * A retry schedule: `delaysMs[i]` is the wait after failed attempt i+1 (1-based attempts), and attempt
 * `maxAttempts` is the last. For webhooks this is spec 8 exactly (0 s, then 30 s, 2 min, 10 min, 1 h).
 */
export interface RetrySchedule {
  readonly maxAttempts: number;
  readonly delaysMs: readonly number[];
}

/** The spec 8 schedule (webhooks), also used for outbound mail relay retries: 5 attempts, 30 s/2 min/10 min/1 h. */
export const SPEC8_SCHEDULE: RetrySchedule = {
  maxAttempts: 5,
  delaysMs: [30_000, 120_000, 600_000, 3_600_000],
} as const;

/**
 * When attempt `attempt + 1` is due after attempt `attempt` (1-based) failed at `now`, or undefined when `attempt`
 * was the last one of `schedule` (the job is then failed for good). `atLeastMs` (e.g. a Retry-After) can only
 * lengthen the wait.
 */
export function nextAttemptAt(
  schedule: RetrySchedule,
  attempt: number,
  now: Date,
  atLeastMs = 0,
  maxAttempts = schedule.maxAttempts,
): Date | undefined {
  if (attempt >= maxAttempts) return undefined;
  const delay = schedule.delaysMs[attempt - 1] ?? schedule.delaysMs.at(-1) ?? 0;
  return new Date(now.getTime() + Math.max(delay, atLeastMs));
}

/** One claimed job as a kind's `run` receives it. */
export interface ClaimedJob {
  id: string;
  /** The claim token (the fence): every write of the job's outcome must match `locked_by = token`. */
  token: string;
  /** The attempt number this claim makes (1-based) when the kind counts attempts; otherwise 0. */
  attempt: number;
  /** True when the previous claim's lease ran out (its instance died or hung mid-attempt): that try was lost. */
  recovered: boolean;
  /** The previous claim's lease end, when `recovered`. */
  previousLeaseUntil: Date | null;
  /** The job's value of each of the kind's `perKey` columns (e.g. its account and webhook), in that order. */
  keys: string[];
  /** The kind's {@link JobKind.data} columns of this job, by alias (empty when the kind declares none). */
  data: Record<string, unknown>;
}

/**
 * A kind of durable work. Table and column names are trusted constants of the service (never user input).
 * The table needs a text key (`id`, or `idColumn`), a due column, `locked_by text` and `locked_until timestamptz`.
 */
export interface JobKind {
  /** Name (also the NOTIFY payload that wakes it). */
  name: string;
  table: string;
  /** The table's text key column (default `id`; e.g. `number` for DIDs). */
  idColumn?: string;
  /** Column holding when the job is due (`next_attempt_at`, `due_at`). */
  dueColumn: string;
  /** Extra condition a claimable row meets, over the table alias `j` (e.g. `j.status = 'pending'`). */
  where: () => Prisma.Sql;
  /** Column counting attempts, incremented by the claim (so a lost attempt counts); omit when not counted. */
  attemptsColumn?: string;
  /** Lease of a claim in ms (default {@link CLAIM_LEASE_MS}); a running job's lease is extended every third of it. */
  leaseMs?: number;
  /** Most jobs of this kind in flight on this instance. */
  concurrency: number;
  /** Most jobs claimed per tick (default: `concurrency`). */
  batch?: number;
  /**
   * Run the jobs of one claim one after another, in due order (for work whose effects must keep that order, e.g.
   * registry decisions); otherwise they run concurrently.
   */
  ordered?: boolean;
  /**
   * Limits per key inside `concurrency` (e.g. per account and per webhook), so one key's slow jobs cannot hold the
   * others: a job is claimed only while every one of its keys has room.
   */
  perKey?: { column: string; limit: number }[];
  /**
   * What the claim returns with each job, in the same statement (so `run` needs no query to load it): `columns`
   * maps an alias to an expression over the job row `j` and the tables of `join` (JOIN clauses, e.g. the webhook of
   * a delivery). Values are as of the claim, before its own update (`attempts` is in {@link ClaimedJob.attempt}).
   */
  data?: { join?: () => Prisma.Sql; columns: () => Record<string, Prisma.Sql> };
  /**
   * Runs one claimed job. Must record its outcome fenced by `job.token` and clear the claim; a throw leaves the claim
   * to expire (the job is then retried after the lease). Work it starts must finish before it resolves; what it
   * resolves with is ignored.
   */
  run(job: ClaimedJob): Promise<unknown>;
}

/** One kind's runner as the domain uses it (src/infra/jobs/job-queue.ts `JobRunner`). */
export interface JobRunnerPort {
  /** Claims up to `limit` due jobs (or only `onlyId`) with a lease and a fresh token; the caller runs them. */
  claim(limit: number, onlyId?: string): Promise<ClaimedJob[]>;
  /** Claims and runs the job `id` now on this instance when it is due and unclaimed; true when it ran. */
  runNow(id: string): Promise<boolean>;
  /** Lease of this kind's claims, in ms. */
  readonly leaseMs: number;
  /**
   * Runs now on this instance, waiting for it, a job its creator claimed itself: the row was committed with
   * `locked_by = job.token`, `locked_until` = its creation + {@link leaseMs} and its attempt counted, so no claim
   * statement is needed (issue 24). From then on it is like any claimed job: its lease is extended while it runs,
   * and if this process dies first the job is claimed again once the lease has run out.
   */
  runClaimed(job: ClaimedJob): Promise<void>;
  /**
   * Takes one slot for a job its creator is about to commit already claimed (issue 24: the webhook fan-out claims
   * the deliveries of the events it records, so no claim statement is needed): true when this instance runs the
   * kind's jobs (its queue is started) and the kind's concurrency and every `perKey` limit (`keys`, one value per
   * `perKey` column, in order) have room, counting the slot as in flight from now on; false otherwise (the row is
   * then written unclaimed, for any instance's claim). Every true must be followed by exactly one
   * {@link runReserved} (the row committed) or {@link release} (it did not).
   */
  reserve(keys: readonly string[]): boolean;
  /** Gives back a slot taken by {@link reserve} whose job was not committed. */
  release(keys: readonly string[]): void;
  /**
   * Starts (without waiting) a job committed claimed in a slot taken by {@link reserve}: like {@link runClaimed},
   * its row was committed with `locked_by = job.token`, a lease and its attempt counted; if this process dies first
   * the job is claimed again once the lease has run out.
   */
  runReserved(job: ClaimedJob): void;
}

/** The job queue as the domain uses it (src/infra/jobs/job-queue.ts `JobQueue`). */
export interface Jobs {
  /** Registers a kind; its runner starts with the app. */
  register(kind: JobKind): JobRunnerPort;
  /** The runner of a registered kind. @throws Error when `name` was not registered. */
  runner(name: string): JobRunnerPort;
  /** Inside the transaction that enqueues work of kind `name`: wakes its workers after the commit (NOTIFY). */
  notify(tx: Pick<Tx, '$executeRaw'>, name: string): Promise<void>;
  /** Wakes the workers of kind `name` on every instance (for work committed outside a transaction of ours). */
  announce(name: string): void;
}
