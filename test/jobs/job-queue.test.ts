import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Prisma } from '../../src/generated/prisma/client.js';
import { ManualClock } from '../../src/infra/clock.js';
import { type Database, openDatabase } from '../../src/infra/db.js';
import {
  type ClaimedJob,
  type JobKind,
  JobQueue,
  JobRunner,
  nextAttemptAt,
  SPEC8_SCHEDULE,
} from '../../src/infra/jobs/job-queue.js';
import { WorkerSet } from '../../src/infra/workers.js';
import { testDatabaseUrl } from '../helpers/app.js';

const log = pino({ level: 'silent' });

/** A promise with its resolver, to hold a job "in flight" until the test lets it finish. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

async function until(cond: () => boolean, what: string, ms = 20_000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('job queue (src/infra/jobs): claim, lease, fence, limits, wake-ups', () => {
  let database: Database;
  let clock: ManualClock;
  const LEASE = 20_000;

  beforeAll(async () => {
    const url = await testDatabaseUrl();
    database = await openDatabase({ databaseUrl: url, dataDir: 'memory://' });
    await database.prisma.$executeRawUnsafe(`
      CREATE TABLE IF NOT EXISTS test_jobs (
        id text PRIMARY KEY, due_at timestamptz(3) NOT NULL, status text NOT NULL DEFAULT 'pending',
        attempts int NOT NULL DEFAULT 0, account text, locked_by text, locked_until timestamptz(3))`);
  });
  afterAll(async () => {
    await database?.close();
  });
  beforeEach(async () => {
    clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
    await database.prisma.$executeRawUnsafe('DELETE FROM test_jobs');
  });

  async function insert(id: string, dueInMs = 0, account = 'a') {
    await database.prisma.$executeRaw`
      INSERT INTO test_jobs (id, due_at, account) VALUES (${id}, ${new Date(clock.now().getTime() + dueInMs)}, ${account})`;
  }

  function kind(over: Partial<JobKind> = {}): JobKind {
    return {
      name: 'test',
      table: 'test_jobs',
      dueColumn: 'due_at',
      where: () => Prisma.sql`j.status = 'pending'`,
      attemptsColumn: 'attempts',
      leaseMs: LEASE,
      concurrency: 100,
      run: async () => {},
      ...over,
    };
  }

  const runner = (k: JobKind) => new JobRunner(k, { db: database.prisma, clock, log });

  it('claims only due, unclaimed rows, each once across two instances, in due order', async () => {
    for (let i = 0; i < 10; i++) await insert(`j${i}`, -1000 * (10 - i));
    await insert('later', 5_000);
    const a = runner(kind());
    const b = runner(kind());
    const first = await a.claim(6);
    const second = await b.claim(10);
    expect(first.map((j) => j.id)).toEqual(['j0', 'j1', 'j2', 'j3', 'j4', 'j5']);
    expect(second.map((j) => j.id)).toEqual(['j6', 'j7', 'j8', 'j9']);
    expect(new Set(first.map((j) => j.token)).size).toBe(1);
    expect(first[0]!.token).not.toBe(second[0]!.token);
    expect(await a.claim(10)).toEqual([]);
    clock.advance(5_000);
    expect((await a.claim(10)).map((j) => j.id)).toEqual(['later']);
  });

  it('claims below Prisma as through it: in due order, each job once; the planner settings hold for the claim only', async () => {
    for (let i = 0; i < 6; i++) await insert(`j${i}`, -1000 * (6 - i));
    const below = (k: JobKind) => new JobRunner(k, { db: database.prisma, clock, log, database });
    const a = below(kind());
    const b = below(kind());
    expect((await a.claim(4)).map((j) => j.id)).toEqual(['j0', 'j1', 'j2', 'j3']);
    expect((await b.claim(10)).map((j) => j.id)).toEqual(['j4', 'j5']);
    expect(await a.claim(10)).toEqual([]);
    const rows = await database.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM test_jobs WHERE locked_by IS NOT NULL AND attempts = 1`;
    expect(rows[0]!.n).toBe(6);
    // Database.statement's settings: local to the statement on PostgreSQL (the pool's connection is back to its
    // default after), not applied on PGlite's shared connection.
    const show = async (planner?: string[]) =>
      (await database.statement<{ enable_sort: string }>({ text: 'SHOW enable_sort', values: [] }, planner))[0]!
        .enable_sort;
    expect(await show(['enable_sort = off'])).toBe(database.kind === 'postgres' ? 'off' : 'on');
    expect(await show()).toBe('on');
    // A statement that fails under settings leaves nothing written, and the pool keeps working.
    const failing = database.statement(
      {
        text: `WITH i AS (INSERT INTO test_jobs (id, due_at) VALUES ('boom', now()) RETURNING 1) SELECT 1 / 0 FROM i`,
        values: [],
      },
      ['enable_sort = off'],
    );
    await expect(failing).rejects.toThrow(/division by zero/);
    const boom = await database.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM test_jobs WHERE id = 'boom'`;
    expect(boom[0]!.n).toBe(0);
  });

  it('counts an attempt per claim; a claim whose lease ran out is taken again as recovered, and the old claim is fenced', async () => {
    await insert('x');
    const a = runner(kind());
    const [first] = await a.claim(1);
    expect(first).toMatchObject({ id: 'x', attempt: 1, recovered: false, previousLeaseUntil: null });
    clock.advance(LEASE - 1);
    expect(await a.claim(1)).toEqual([]);
    clock.advance(1);
    const [second] = await runner(kind()).claim(1);
    expect(second).toMatchObject({ id: 'x', attempt: 2, recovered: true });
    expect(second!.previousLeaseUntil!.getTime()).toBe(clock.now().getTime());
    // The first claimer's late result matches nothing: the fence is the token.
    const late = await database.prisma.$executeRaw`
      UPDATE test_jobs SET status = 'done' WHERE id = 'x' AND locked_by = ${first!.token}`;
    expect(late).toBe(0);
    const mine = await database.prisma.$executeRaw`
      UPDATE test_jobs SET status = 'done' WHERE id = 'x' AND locked_by = ${second!.token}`;
    expect(mine).toBe(1);
  });

  it('keeps each key within its limit inside the global one, and claims more of a key as its jobs finish', async () => {
    for (let i = 0; i < 10; i++) await insert(`a${i}`, -1000 + i, 'a');
    for (let i = 0; i < 10; i++) await insert(`b${i}`, -500 + i, 'b');
    const holds = new Map<string, ReturnType<typeof deferred>>();
    const r = runner(
      kind({
        concurrency: 8,
        perKey: [{ column: 'account', limit: 3 }],
        run: async (job: ClaimedJob) => {
          const d = deferred();
          holds.set(job.id, d);
          await d.promise;
        },
      }),
    );
    expect(await r.tick()).toBe(6);
    expect([...holds.keys()].sort()).toEqual(['a0', 'a1', 'a2', 'b0', 'b1', 'b2']);
    expect(await r.tick()).toBe(0); // both keys at their limit; nothing else is claimed
    holds.get('a0')!.resolve();
    await until(() => r.inFlight === 5, 'a0 to finish');
    expect(await r.tick()).toBe(1);
    expect(holds.has('a3')).toBe(true);
    for (const d of holds.values()) d.resolve();
    await r.settle();
    expect(r.inFlight).toBe(0);
  });

  it('extends the lease of a job still running, so no other instance takes it', async () => {
    await insert('slow');
    const hold = deferred();
    const r = runner(kind({ run: () => hold.promise }));
    expect(await r.tick()).toBe(1);
    clock.advance(LEASE - 1000);
    expect(await r.extendLeases()).toBe(1);
    clock.advance(LEASE - 1000);
    expect(await runner(kind()).claim(1)).toEqual([]);
    hold.resolve();
    await r.settle();
  });

  it('a job that throws keeps its claim until the lease ends, then is retried', async () => {
    await insert('boom');
    let runs = 0;
    const r = runner(
      kind({
        run: async () => {
          runs++;
          throw new Error('boom');
        },
      }),
    );
    expect(await r.tick()).toBe(1);
    await r.settle();
    expect(await r.tick()).toBe(0);
    clock.advance(LEASE);
    expect(await r.tick()).toBe(1);
    await r.settle();
    expect(runs).toBe(2);
  });

  it('runs the jobs of an ordered kind one after another in due order; runNow claims one job and waits for it', async () => {
    for (const [id, due] of [
      ['c', -1],
      ['a', -3],
      ['b', -2],
    ] as const)
      await insert(id, due);
    const order: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const r = runner(
      kind({
        ordered: true,
        run: async (job) => {
          running++;
          maxRunning = Math.max(maxRunning, running);
          await new Promise((res) => setTimeout(res, 5));
          order.push(job.id);
          running--;
        },
      }),
    );
    expect(await r.tick()).toBe(3);
    await r.settle();
    expect(order).toEqual(['a', 'b', 'c']);
    expect(maxRunning).toBe(1);
    await insert('now');
    await insert('not-due', 60_000);
    expect(await r.runNow('now')).toBe(true);
    expect(order.at(-1)).toBe('now');
    expect(await r.runNow('not-due')).toBe(false);
    // Its run recorded no outcome (nor cleared its claim): it is not claimable again until the lease ends.
    expect(await r.runNow('now')).toBe(false);
  });

  it('lets waiting I/O run between jobs: a batch doing only database work never holds the event loop to its end', async () => {
    // On PGlite a query resolves through microtasks alone; a batch of such jobs, in turn or at once, once ran as one
    // unbroken microtask chain, so HTTP requests waited for the whole batch (brand registrations during a burst of
    // registry decisions). openDatabase now takes PGlite's operations in turn, each from a macrotask. A timer set
    // when the batch starts must fire before its last job (on PostgreSQL every query is I/O anyway).
    for (let i = 0; i < 50; i++) await insert(`io${String(i).padStart(2, '0')}`, -1);
    for (const ordered of [true, false]) {
      await database.prisma.$executeRawUnsafe(`UPDATE test_jobs SET locked_by = NULL, locked_until = NULL`);
      let ran = 0;
      const r = runner(
        kind({
          ordered,
          run: async () => {
            await database.statement({ text: 'SELECT 1', values: [] });
            ran++;
          },
        }),
      );
      expect(await r.tick()).toBe(50);
      const ranWhenTimerFired = await new Promise<number>((res) => setTimeout(() => res(ran), 0));
      await r.settle();
      expect(ran).toBe(50);
      expect(ranWhenTimerFired).toBeLessThan(50);
    }
  });

  it('wakes the worker when work is committed (NOTIFY on commit), without waiting for the poll', async () => {
    const workers = new WorkerSet(log, 60_000); // the poll would take a minute
    const queue = new JobQueue({ db: database.prisma, clock, log, database, workers });
    const ran: string[] = [];
    queue.register(
      kind({
        name: 'woken',
        run: async (job) => {
          ran.push(job.id);
          await database.prisma.$executeRaw`UPDATE test_jobs SET status = 'done' WHERE id = ${job.id}`;
        },
      }),
    );
    await queue.start();
    workers.start();
    try {
      await database.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO test_jobs (id, due_at) VALUES ('w1', ${clock.now()})`;
        await queue.notify(tx, 'woken');
      });
      await until(() => ran.includes('w1'), 'the committed job to run');
      expect(ran).toEqual(['w1']);
    } finally {
      await queue.stop();
      await workers.stop();
    }
  });

  it('finds unnotified work with ONE poll for every kind, which wakes only the kinds that have due work', async () => {
    const workers = new WorkerSet(log, 20); // the poll every 20 ms; no notification is ever sent here
    const queue = new JobQueue({ db: database.prisma, clock, log, database, workers });
    const ran: string[] = [];
    const done = (id: string) => database.prisma.$executeRaw`UPDATE test_jobs SET status = 'done' WHERE id = ${id}`;
    queue.register(
      kind({
        name: 'busy',
        where: () => Prisma.sql`j.status = 'pending' AND j.account = 'busy'`,
        run: async (job) => {
          ran.push(job.id);
          await done(job.id);
        },
      }),
    );
    const idle = queue.register(
      kind({ name: 'idle', where: () => Prisma.sql`j.status = 'pending' AND j.account = 'idle'` }),
    );
    let idleTicks = 0;
    const tick = idle.tick.bind(idle);
    idle.tick = () => {
      idleTicks++;
      return tick();
    };
    workers.start();
    try {
      await insert('now', 0, 'busy');
      await insert('later', 5_000, 'busy');
      await until(() => ran.includes('now'), 'the unnotified due job to run');
      expect(ran).toEqual(['now']);
      // The job due later is found once it is due (the clock moves; still no notification).
      clock.advance(5_000);
      await until(() => ran.includes('later'), 'the job that became due to run');
      expect(ran).toEqual(['now', 'later']);
      // The kind without work was never ticked: runners do not poll, the one probe did not wake it.
      expect(idleTicks).toBe(0);
    } finally {
      await workers.stop();
    }
  });

  it('follows the spec 8 schedule exactly: 30 s, 2 min, 10 min, 1 h, then no attempt; Retry-After only lengthens', () => {
    const t0 = new Date('2026-01-01T00:00:00Z');
    const gaps = [1, 2, 3, 4, 5].map((n) => nextAttemptAt(SPEC8_SCHEDULE, n, t0)?.getTime() ?? null);
    expect(gaps.map((g) => (g === null ? null : g - t0.getTime()))).toEqual([
      30_000,
      120_000,
      600_000,
      3_600_000,
      null,
    ]);
    expect(nextAttemptAt(SPEC8_SCHEDULE, 1, t0, 90_000)!.getTime() - t0.getTime()).toBe(90_000);
    expect(nextAttemptAt(SPEC8_SCHEDULE, 2, t0, 1_000)!.getTime() - t0.getTime()).toBe(120_000);
    expect(nextAttemptAt(SPEC8_SCHEDULE, 1, t0, 0, 1)).toBeUndefined();
  });
});
