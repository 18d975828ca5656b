import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { CLAIM_LEASE_MS, type ClaimedJob, type JobKind, type Jobs } from '../../domain/kernel/jobs.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { Clock } from '../clock.js';
import type { Database, Db, Tx } from '../db.js';
import type { Worker, WorkerSet } from '../workers.js';

export {
  CLAIM_LEASE_MS,
  type ClaimedJob,
  type JobKind,
  nextAttemptAt,
  type RetrySchedule,
  SPEC8_SCHEDULE,
} from '../../domain/kernel/jobs.js';

/**
 * The one durable job queue of the service (docs/jobs.md). Every kind of durable work (webhook deliveries, agent
 * jobs, outbound mail, registry tasks) is a row in its own table (the outbox row IS the job, so enqueueing commits
 * with the change that causes it), and every kind is claimed, leased, fenced, retried and woken by this module.
 * It is the only place that writes `FOR UPDATE SKIP LOCKED`, the lease and the retry arithmetic.
 */

/** The NOTIFY channel that wakes workers when work is committed (payload: the job kind's name). */
export const JOBS_CHANNEL = 'switchboard_jobs';

/** Dependencies of a {@link JobRunner}. */
export interface JobRunnerDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  /**
   * Runs the claim and lease statements below Prisma (one statement each, no transaction; issue 9). Without it they
   * go through `db.$queryRaw`.
   */
  database?: Pick<Database, 'statement'>;
}

/**
 * Planner settings of a batch claim (`claim(limit)`; a claim of one id reads the primary key and needs none): no
 * sort unless nothing else can give the due order, so the claim walks its kind's due index in order and stops after
 * its batch. Without statistics on the backlog (a table written faster than autovacuum analyzes it, or one analyzed
 * while almost nothing was pending) PostgreSQL estimates a few due rows and, costed as equal, reads every due row
 * through a bitmap scan and sorts them for each batch: the webhook drain's claim of 100 read all 3,000 pending
 * deliveries, 4–9 ms and ~55 µs of backend CPU per delivery claimed instead of ~7 (issue 24 round 13).
 */
const CLAIM_PLANNER = ['enable_sort = off'] as const;

const ident = (name: string) => Prisma.raw(`"${name.replace(/"/g, '')}"`);

/**
 * Claims and runs one kind of job on this instance: a `Worker` (ticked by the WorkerSet's loop and by wake-ups) that
 * claims due rows with `FOR UPDATE SKIP LOCKED`, a lease and a fresh token, starts them without waiting (up to the
 * kind's concurrency and per-key limit), extends the lease of jobs still running, and ticks again as soon as a slot
 * frees while more work was due. `settle()` resolves when every started job has finished.
 */
export class JobRunner implements Worker {
  readonly name: string;
  /** Woken only (on commit, on a freed slot, or by the queue's one poll for every kind). */
  readonly polls = false;
  readonly #inFlight = new Map<string, { token: string; done: Promise<void> }>();
  /** Jobs in flight per key, one map per `perKey` entry. */
  readonly #perKey: Map<string, number>[];
  #backlog = false;
  /** Jobs the last claim gave back because their key filled up within the batch. */
  #surplus = 0;
  #heartbeat: NodeJS.Timeout | undefined;
  #onFree: (() => void) | undefined;
  /** Slots taken by {@link reserve} for jobs their creator claims itself, not started yet. */
  #reserved = 0;
  /** Whether this instance runs this kind's jobs (its queue started, not stopped): only then {@link reserve} grants. */
  accepting = false;

  constructor(
    readonly kind: JobKind,
    private readonly deps: JobRunnerDeps,
  ) {
    this.name = `jobs:${kind.name}`;
    this.#perKey = (kind.perKey ?? []).map(() => new Map());
  }

  /** Lease of this kind's claims, in ms. */
  get leaseMs(): number {
    return this.kind.leaseMs ?? CLAIM_LEASE_MS;
  }

  /**
   * SQL selecting this kind's name when at least one of its jobs is claimable now (the queue's one poll asks every
   * kind in one statement).
   */
  dueProbe(now: Date): Prisma.Sql {
    const k = this.kind;
    const due = Prisma.raw(`j.${ident(k.dueColumn).text}`);
    return Prisma.sql`(SELECT ${k.name}::text AS kind FROM ${ident(k.table)} j
      WHERE ${due} <= ${now} AND (j.locked_until IS NULL OR j.locked_until <= ${now}) AND (${k.where()}) LIMIT 1)`;
  }

  /** Jobs running now on this instance. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Called when a job finished while more work was due (the WorkerSet wakes this runner). */
  onFree(cb: () => void): void {
    this.#onFree = cb;
  }

  /**
   * Claims up to `limit` due jobs for one token (at most the kind's per-key room for each key) and returns them; the
   * caller runs them. Public for tests that simulate an instance that claims and then dies.
   */
  async claim(limit: number, onlyId?: string): Promise<ClaimedJob[]> {
    if (limit <= 0) return [];
    const k = this.kind;
    const now = this.deps.clock.now();
    const until = new Date(now.getTime() + this.leaseMs);
    const token = randomUUID();
    const table = ident(k.table);
    const due = Prisma.raw(`j.${ident(k.dueColumn).text}`);
    const id = ident(k.idColumn ?? 'id').text;
    const only = onlyId === undefined ? Prisma.empty : Prisma.sql` AND j.${Prisma.raw(id)} = ${onlyId}`;
    const claimable = Prisma.sql`${due} <= ${now} AND (j.locked_until IS NULL OR j.locked_until <= ${now}) AND (${k.where()})${only}`;
    const attemptsSet = k.attemptsColumn
      ? Prisma.raw(`, ${ident(k.attemptsColumn).text} = t.${ident(k.attemptsColumn).text} + 1`)
      : Prisma.empty;
    const attemptsOut = k.attemptsColumn ? Prisma.raw(`t.${ident(k.attemptsColumn).text}`) : Prisma.raw('0');
    const limits = k.perKey ?? [];
    // Each key as a text column of its own ("k0", "k1", …), not one ARRAY column: pg parses a text[] value character
    // by character (postgres-array), once per claimed row (issue 24 round 6: CPU per delivery).
    let keysOut: Prisma.Sql = Prisma.empty;
    // Keys at their limit are left out here; a batch that would take a key past its room gives the surplus back at
    // once (see `#withinLimits`), so no key ever holds more than its limit.
    let notFull: Prisma.Sql = Prisma.empty;
    if (limits.length > 0) {
      const col = (i: number) => ident(limits[i]!.column).text;
      keysOut = Prisma.raw(`, ${limits.map((_, i) => `t.${col(i)}::text AS "k${i}"`).join(', ')}`);
      const full = limits.map((l, i) => {
        const keys = [...this.#perKey[i]!.entries()].filter(([, n]) => n >= l.limit).map(([key]) => key);
        return Prisma.sql`NOT (j.${Prisma.raw(col(i))}::text = ANY(${keys}::text[]))`;
      });
      notFull = Prisma.sql` AND ${Prisma.join(full, ' AND ')}`;
    }
    const dataCols = Object.entries(k.data?.columns() ?? {});
    const dataAlias = (i: number) => Prisma.raw(`"d${i}"`);
    const dataPick =
      dataCols.length > 0
        ? Prisma.sql`, ${Prisma.join(dataCols.map(([, e], i) => Prisma.sql`${e} AS ${dataAlias(i)}`))}`
        : Prisma.empty;
    const dataOut =
      dataCols.length > 0
        ? Prisma.sql`, ${Prisma.join(dataCols.map((_, i) => Prisma.sql`pick.${dataAlias(i)}`))}`
        : Prisma.empty;
    const join = k.data?.join?.() ?? Prisma.empty;
    const pick = Prisma.sql`
        SELECT j.${Prisma.raw(id)} AS id, j.locked_by AS prev, j.locked_until AS prev_until${dataPick}
          FROM ${table} j ${join}
         WHERE ${claimable}${notFull}
         ORDER BY ${due}, j.${Prisma.raw(id)}
         LIMIT ${limit}
         FOR UPDATE OF j SKIP LOCKED`;
    const claimSql = Prisma.sql`
      WITH pick AS (${pick})
      UPDATE ${table} t SET locked_until = ${until}, locked_by = ${token}${attemptsSet}
        FROM pick WHERE t.${Prisma.raw(id)} = pick.id
      RETURNING t.${Prisma.raw(id)} AS id, ${attemptsOut}::int AS attempt, pick.prev, pick.prev_until${keysOut},
                t.${ident(k.dueColumn)} AS due${dataOut}`;
    const rows = await this.#query<
      { id: string; attempt: number; prev: string | null; prev_until: Date | null; due: Date } & Record<string, unknown>
    >(claimSql, onlyId === undefined ? CLAIM_PLANNER : undefined);
    // RETURNING has no order: put the jobs back in due order (ordered kinds run them in it). pg hands a Date; no copy
    // of it per comparison (a claim of 100 made ~1,400).
    const at = (r: { due: Date }) => (r.due instanceof Date ? r.due.getTime() : new Date(r.due).getTime());
    rows.sort((a, b) => at(a) - at(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    // Each job's keys and data read by plain loops over the column names (no entry arrays per row).
    const keyCols = limits.map((_, i) => `k${i}`);
    const dataNames = dataCols.map(([alias], i) => [alias, `d${i}`] as const);
    const jobs = rows.map((r) => {
      const keys: string[] = [];
      for (const c of keyCols) keys.push(r[c] as string);
      const data: Record<string, unknown> = {};
      for (const [alias, c] of dataNames) data[alias] = r[c];
      return {
        id: r.id,
        token,
        attempt: Number(r.attempt),
        recovered: r.prev !== null,
        previousLeaseUntil: r.prev_until ? new Date(r.prev_until) : null,
        keys,
        data,
      };
    });
    return limits.length > 0 ? this.#withinLimits(jobs, rows) : jobs;
  }

  /**
   * Keeps the jobs of a claim that fit each key's room (in due order) and gives the others back at once: their
   * claim is undone (previous lease and token restored, the attempt uncounted), so they are claimable as before.
   */
  async #withinLimits(jobs: ClaimedJob[], rows: { id: string; prev: string | null; prev_until: Date | null }[]) {
    const limits = this.kind.perKey ?? [];
    const taken = limits.map(() => new Map<string, number>());
    const keep: ClaimedJob[] = [];
    const surplus: typeof rows = [];
    jobs.forEach((job, n) => {
      const fits = limits.every((l, i) => {
        const key = job.keys[i] ?? '';
        return (this.#perKey[i]!.get(key) ?? 0) + (taken[i]!.get(key) ?? 0) < l.limit;
      });
      if (!fits) {
        surplus.push(rows[n]!);
        return;
      }
      for (const [i, key] of job.keys.entries()) taken[i]?.set(key, (taken[i]!.get(key) ?? 0) + 1);
      keep.push(job);
    });
    this.#surplus = surplus.length;
    if (surplus.length > 0) {
      const k = this.kind;
      const uncount = k.attemptsColumn
        ? Prisma.raw(`, ${ident(k.attemptsColumn).text} = t.${ident(k.attemptsColumn).text} - 1`)
        : Prisma.empty;
      await this.#query(Prisma.sql`
        UPDATE ${ident(k.table)} t SET locked_by = x.prev, locked_until = x.prev_until${uncount}
          FROM unnest(${surplus.map((r) => r.id)}::text[], ${surplus.map((r) => r.prev)}::text[],
                      ${surplus.map((r) => (r.prev_until ? new Date(r.prev_until).toISOString() : null))}::timestamptz[])
               AS x(id, prev, prev_until)
         WHERE t.${ident(k.idColumn ?? 'id')} = x.id AND t.locked_by = ${jobs[0]!.token}`);
    }
    return keep;
  }

  /**
   * One statement below Prisma when the runner has a `database` (with `planner`'s settings local to it, see
   * Database.statement), else through Prisma.
   */
  #query<T>(q: Prisma.Sql, planner?: readonly string[]): Promise<T[]> {
    const d = this.deps.database;
    return d ? d.statement<T>({ text: q.text, values: q.values }, planner) : this.deps.db.$queryRaw<T[]>(q);
  }

  /** Claims as many due jobs as there are free slots and starts them. @returns how many were started. */
  async tick(): Promise<number> {
    let started = 0;
    // A claim that gave back surplus (keys that filled up within the batch) leaves slots free: claim again at once,
    // now without those keys (a few rounds at most).
    for (let round = 0; round < 4; round++) {
      const free = this.kind.concurrency - this.#inFlight.size - this.#reserved;
      const limit = Math.min(free, this.kind.batch ?? this.kind.concurrency);
      if (limit <= 0) {
        this.#backlog = true;
        return started;
      }
      this.#surplus = 0;
      const jobs = await this.claim(limit);
      for (const job of jobs) this.#start(job);
      started += jobs.length;
      // A full batch, or a key at its limit, means more may be due: tick again as soon as a job finishes.
      this.#backlog =
        jobs.length === limit ||
        this.#surplus > 0 ||
        this.kind.perKey?.some((l, i) => [...this.#perKey[i]!.values()].some((n) => n >= l.limit)) === true;
      if (this.#surplus === 0) break;
    }
    return started;
  }

  /**
   * Claims job `id` if it is due and unclaimed, and runs it now, waiting for it (e.g. mail sent by a request is
   * attempted in that request). When this instance's worker claimed it just before, waits for that run.
   * @returns false when it was not claimable (not due, done, or another instance's claim holds it).
   */
  async runNow(id: string): Promise<boolean> {
    const [job] = await this.claim(1, id);
    if (job) {
      await this.#start(job);
      return true;
    }
    // This instance's own worker may have claimed it a moment earlier: then wait for that run instead.
    for (let i = 0; i < 3; i++) {
      const running = this.#inFlight.get(id);
      if (running) {
        await running.done;
        return true;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    return false;
  }

  /** See {@link JobRunnerPort.runClaimed}. */
  runClaimed(job: ClaimedJob): Promise<void> {
    return this.#start(job);
  }

  /** See {@link JobRunnerPort.reserve}. */
  reserve(keys: readonly string[]): boolean {
    if (!this.accepting || this.#inFlight.size + this.#reserved >= this.kind.concurrency) return false;
    const limits = this.kind.perKey ?? [];
    if (!limits.every((l, i) => (this.#perKey[i]!.get(keys[i] ?? '') ?? 0) < l.limit)) return false;
    this.#reserved++;
    this.#countKeys(keys, 1);
    return true;
  }

  /** See {@link JobRunnerPort.release}. */
  release(keys: readonly string[]): void {
    this.#reserved--;
    this.#countKeys(keys, -1);
    if (this.#backlog) {
      this.#backlog = false;
      this.#onFree?.();
    }
  }

  /** See {@link JobRunnerPort.runReserved}. */
  runReserved(job: ClaimedJob): void {
    this.#reserved--;
    this.#countKeys(job.keys, -1);
    void this.#start(job);
  }

  /** Adds `by` to the in-flight count of each of `keys` (one per `perKey` entry), dropping counts that reach 0. */
  #countKeys(keys: readonly string[], by: number): void {
    keys.forEach((key, i) => {
      const m = this.#perKey[i];
      if (!m) return;
      const n = (m.get(key) ?? 0) + by;
      if (n <= 0) m.delete(key);
      else m.set(key, n);
    });
  }

  #chain: Promise<void> = Promise.resolve();

  #start(job: ClaimedJob): Promise<void> {
    this.#countKeys(job.keys, 1);
    const run = () => this.kind.run(job);
    const started = this.kind.ordered ? this.#chain.then(run) : run();
    // One reaction for both outcomes (not `.catch().finally()`: two more promises per job on the dispatcher's path).
    const ended = () => {
      this.#inFlight.delete(job.id);
      this.#countKeys(job.keys, -1);
      if (this.#backlog) {
        this.#backlog = false;
        this.#onFree?.();
      }
      if (this.#inFlight.size === 0) this.#stopHeartbeat();
    };
    const done = started.then(ended, (err: unknown) => {
      this.deps.log.error({ err, job: this.kind.name, id: job.id }, 'job failed unexpectedly; retried after its lease');
      ended();
    });
    if (this.kind.ordered) this.#chain = done;
    this.#inFlight.set(job.id, { token: job.token, done });
    this.#startHeartbeat();
    return done;
  }

  #startHeartbeat(): void {
    if (this.#heartbeat) return;
    this.#heartbeat = setInterval(() => void this.extendLeases(), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.#heartbeat.unref();
  }

  #stopHeartbeat(): void {
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  /**
   * How much of this kind waits, for metrics: `depth` rows meeting the kind's condition with a due time, `due` of
   * them due at `now`, and the oldest due time among those (how late the queue runs). Same table and condition as
   * the claim, so the measure cannot drift from what is claimed.
   */
  async state(now: Date): Promise<{ kind: string; depth: number; due: number; oldestDue: Date | null }> {
    const k = this.kind;
    const due = Prisma.raw(`j.${ident(k.dueColumn).text}`);
    const [row] = await this.deps.db.$queryRaw<{ depth: number; due: number; oldest: Date | null }[]>`
      SELECT count(*)::int AS depth, count(*) FILTER (WHERE ${due} <= ${now})::int AS due,
             min(${due}) FILTER (WHERE ${due} <= ${now}) AS oldest
        FROM ${ident(k.table)} j WHERE ${due} IS NOT NULL AND (${k.where()})`;
    return {
      kind: k.name,
      depth: Number(row?.depth ?? 0),
      due: Number(row?.due ?? 0),
      oldestDue: row?.oldest ? new Date(row.oldest) : null,
    };
  }

  /** Extends the lease of every job still running here (fenced by its token). @returns rows extended. */
  async extendLeases(): Promise<number> {
    if (this.#inFlight.size === 0) return 0;
    const ids = [...this.#inFlight.keys()];
    const tokens = [...new Set([...this.#inFlight.values()].map((v) => v.token))];
    const until = new Date(this.deps.clock.now().getTime() + this.leaseMs);
    try {
      return await this.deps.db.$executeRaw`
        UPDATE ${ident(this.kind.table)} SET locked_until = ${until}
         WHERE ${ident(this.kind.idColumn ?? 'id')} = ANY(${ids}::text[]) AND locked_by = ANY(${tokens}::text[])`;
    } catch (err) {
      this.deps.log.warn({ err, job: this.kind.name }, 'could not extend job leases');
      return 0;
    }
  }

  /** Resolves when every job started so far (and any started meanwhile) has finished. */
  async settle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight.values()].map((v) => v.done));
  }
}

/** What a {@link JobQueue} needs besides the runner dependencies. */
export interface JobQueueDeps extends JobRunnerDeps {
  database: Pick<Database, 'kind' | 'listen' | 'statement'>;
  workers: WorkerSet;
}

/**
 * The job queue of one app: the registered kinds (each a {@link JobRunner} in the app's WorkerSet) and their
 * wake-ups. Work committed anywhere wakes the workers at once: the enqueueing transaction calls {@link notify}
 * (`pg_notify`, delivered on commit to every instance that LISTENs, this one included; on PGlite to the instance
 * itself), a finished job wakes its runner when more was due, and one poll for every kind each WORKER_POLL_MS wakes
 * the kinds with due work: jobs that became due later (retries, registry decisions) and any lost notification (a
 * reconnect of the LISTEN connection also wakes every worker).
 */
export class JobQueue implements Jobs {
  readonly #runners = new Map<string, JobRunner>();
  #unlisten: (() => Promise<void>) | undefined;
  /** Per kind, whether an {@link announce} notification is in flight (true) and another is owed after it ('again'). */
  readonly #announcing = new Map<string, true | 'again'>();

  constructor(private readonly deps: JobQueueDeps) {}

  /** Registers a kind; its runner joins the app's workers. @throws Error when the name is taken. */
  register(kind: JobKind): JobRunner {
    if (this.#runners.has(kind.name)) throw new Error(`job kind ${kind.name} registered twice`);
    if (this.#runners.size === 0) this.deps.workers.add(this.#poll());
    const runner = new JobRunner(kind, this.deps);
    runner.onFree(() => this.deps.workers.wake(runner.name));
    this.#runners.set(kind.name, runner);
    this.deps.workers.add(runner);
    return runner;
  }

  /**
   * The safety net and the clock of future work, as ONE worker polling every WORKER_POLL_MS: one statement asks every
   * kind whether it has a claimable job (due now, not leased) and wakes those that do. The runners themselves never
   * poll (docs/jobs.md: one query per interval in all, however many kinds, issue 9's idle budget).
   */
  #poll(): Worker {
    return {
      name: 'jobs:due',
      tick: async () => {
        const runners = [...this.#runners.values()];
        if (runners.length === 0) return 0;
        const now = this.deps.clock.now();
        const rows = await this.deps.db.$queryRaw<{ kind: string }[]>`${Prisma.join(
          runners.map((r) => r.dueProbe(now)),
          ' UNION ALL ',
        )}`;
        for (const row of rows) this.deps.workers.wake(`jobs:${row.kind}`);
        return 0;
      },
    };
  }

  /** Every registered runner (for metrics: {@link JobRunner.state}). */
  runners(): JobRunner[] {
    return [...this.#runners.values()];
  }

  /** The runner of kind `name`. @throws Error when no such kind is registered. */
  runner(name: string): JobRunner {
    const r = this.#runners.get(name);
    if (!r) throw new Error(`no job kind ${name}`);
    return r;
  }

  /**
   * Inside the transaction that enqueues work of kind `name`: wakes that kind's workers on every instance once the
   * transaction commits (nothing when it rolls back). Identical notifications of one transaction are sent once.
   */
  async notify(tx: Pick<Tx, '$executeRaw'>, name: string): Promise<void> {
    await tx.$executeRaw`SELECT pg_notify(${JOBS_CHANNEL}, ${name})`;
  }

  /**
   * After a commit that enqueued work of kind `name`, for hot paths (the webhook fan-out of every event): wakes that
   * kind's worker on this instance at once and, on PostgreSQL, every other instance through one `pg_notify` sent as a
   * statement of its own, after the commit. Announcements made while one of `name` is in flight fold into a single
   * one sent after it, so a burst of commits costs at most two notifications, whatever its size.
   *
   * Why not {@link notify} inside the enqueueing transaction: PostgreSQL serialises the commits of all transactions
   * that NOTIFY (PreCommit_Notify in src/backend/commands/async.c takes a cluster-wide lock held until the commit
   * ends, so notifications queue in commit order): each event with a webhook waited for the previous one's commit.
   * Measured with pgbench on this project's machine (PostgreSQL 15, 10 clients, one single-statement INSERT each):
   * 9,100 commits/s without `pg_notify` in the statement, 4,050/s with it (docs/performance.md).
   * What it costs: a crash between the commit and the notification leaves the other instances to find the work at
   * their next poll (WORKER_POLL_MS); this instance, if it lives, was woken directly. Never throws: a failed
   * notification is logged and left to the poll.
   */
  announce(name: string): void {
    this.wake(name);
    if (this.deps.database.kind !== 'postgres') return; // PGlite: one instance per data directory, woken above
    if (this.#announcing.has(name)) {
      this.#announcing.set(name, 'again');
      return;
    }
    this.#announcing.set(name, true);
    void this.#sendAnnouncement(name);
  }

  async #sendAnnouncement(name: string): Promise<void> {
    for (;;) {
      try {
        await this.deps.database.statement(Prisma.sql`SELECT pg_notify(${JOBS_CHANNEL}, ${name})`);
      } catch (err) {
        this.deps.log.warn(
          { err, kind: name },
          'job wake-up notification failed; other instances find the work by polling',
        );
      }
      if (this.#announcing.get(name) !== 'again') break;
      this.#announcing.set(name, true);
    }
    this.#announcing.delete(name);
  }

  /** Wakes kind `name` on this instance (work committed outside a transaction of ours, e.g. a freed slot). */
  wake(name: string): void {
    this.deps.workers.wake(`jobs:${name}`);
  }

  /** Starts listening for wake-ups (with the workers). */
  async start(): Promise<void> {
    if (this.#unlisten) return;
    for (const r of this.#runners.values()) r.accepting = true;
    this.#unlisten = await this.deps.database.listen(
      JOBS_CHANNEL,
      (payload) => this.deps.workers.wake(`jobs:${payload}`),
      () => this.deps.workers.wakeAll(),
    );
  }

  /** Stops listening (the WorkerSet's stop settles the jobs in flight). */
  async stop(): Promise<void> {
    for (const r of this.#runners.values()) r.accepting = false;
    const u = this.#unlisten;
    this.#unlisten = undefined;
    await u?.();
  }

  /** Resolves when every job in flight of every kind has finished. */
  async settle(): Promise<void> {
    await Promise.all([...this.#runners.values()].map((r) => r.settle()));
  }
}
