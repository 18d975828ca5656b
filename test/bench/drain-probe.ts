/**
 * What a webhook delivery costs PostgreSQL in the dispatcher's two statements, load-independently (issue 24,
 * "webhook drain"): on a database the migrations built (`PROBE_DB`, default `e2e_replay`), writes 10 webhooks and
 * `n` pending deliveries (450-byte bodies), then drains them with the service's own statements on one connection:
 * the job queue's claim (JobRunner.claim, batches of 100, the webhook job kind's `where`, join and columns) and the
 * batched outcome (recordAttempts, batches of 40, every attempt `delivered`). Prints per delivery the backend's CPU
 * (its /proc/<pid>/task/<tid>/schedstat, exact: the server must run on this machine) around each kind of
 * statement, their own time, and the WAL bytes written (pg_current_wal_lsn; the cluster's, so other writers add to it). PROBE_EXPLAIN=k prints
 * the plan of the k-th statement (run once more under EXPLAIN (ANALYZE, BUFFERS, WAL) and rolled back).
 *
 * Usage: `npx tsx test/bench/drain-probe.ts [n] [runs]`. Measurement only; nothing in src depends on it.
 */

import { createHash } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import {
  type AttemptRecord,
  deliveryJobSql,
  recordAttempts,
} from '../../src/domain/webhooks/webhook-dispatch.store.js';
import { JobRunner } from '../../src/infra/jobs/job-queue.js';
import { cpuMsExact as cpuMs } from './lib.js';

const N = Number(process.argv[2] ?? 6000);
const RUNS = Number(process.argv[3] ?? 3);
const url = `postgres://postgres@127.0.0.1:5432/${process.env.PROBE_DB ?? 'e2e_replay'}`;
const c = new pg.Client({ connectionString: url });
await c.connect();
const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
/** PROBE_EXPLAIN=k: the k-th statement is first run under EXPLAIN (ANALYZE, BUFFERS, WAL), rolled back, and printed. */
const explainAt = Number(process.env.PROBE_EXPLAIN ?? 0);
let sent = 0;
/** PROBE_EXPLAIN_RECORD=k: the same for the k-th outcome batch (recordAttempts). */
const explainRecordAt = Number(process.env.PROBE_EXPLAIN_RECORD ?? 0);
let recorded = 0;
const database = {
  // As src/infra/db.ts on PostgreSQL: `planner` settings local to the statement (SET LOCAL in its own transaction).
  statement: async <T>(q: { text: string; values: readonly unknown[] }, planner?: readonly string[]) => {
    const set = planner?.length ? `; ${planner.map((s) => `SET LOCAL ${s}`).join('; ')}` : '';
    if (explainAt > 0 && ++sent === explainAt) {
      await c.query(`BEGIN${set}`);
      const plan = await c.query(`EXPLAIN (ANALYZE, BUFFERS, WAL) ${q.text}`, q.values as unknown[]);
      await c.query('ROLLBACK');
      console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
    }
    if (!set) return (await c.query(q.text, q.values as unknown[])).rows as T[];
    await c.query(`BEGIN${set}`);
    const rows = (await c.query(q.text, q.values as unknown[])).rows as T[];
    await c.query('COMMIT');
    return rows;
  },
  // As src/infra/db.ts on PostgreSQL: a named prepared statement per distinct text (PROBE_UNNAMED=1: unnamed).
  preparedWrite: async (text: string, values: unknown[]) => {
    if (explainRecordAt > 0 && ++recorded === explainRecordAt) {
      await c.query('BEGIN');
      const plan = await c.query(`EXPLAIN (ANALYZE, BUFFERS, WAL) ${text}`, values);
      await c.query('ROLLBACK');
      console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
    }
    const name = process.env.PROBE_UNNAMED
      ? undefined
      : `p_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    return (await c.query({ name, text, values })).rows as Record<string, unknown>[];
  },
};
const clock = { now: () => new Date() };
const log = pino({ level: 'warn' });
const KEY = 'probekey00000000';
const sql = deliveryJobSql(KEY);
// The webhook job kind's claim (webhook.dispatcher.ts webhookJobKind), without its attempts.
const runner = new JobRunner(
  {
    name: 'webhook-delivery',
    table: 'webhook_deliveries',
    dueColumn: 'next_attempt_at',
    where: sql.where,
    attemptsColumn: 'attempts',
    leaseMs: 20_000,
    concurrency: 100_000,
    batch: 100,
    perKey: [
      { column: 'account_id', limit: 100_000 },
      { column: 'webhook_id', limit: 100_000 },
    ],
    data: { join: sql.join, columns: sql.columns },
    run: () => Promise.resolve(),
  },
  { db: undefined as never, clock, log, database },
);

const body = JSON.stringify({ id: '1', type: 'sms.received', data: { text: 'x'.repeat(380) } });
async function setup(): Promise<void> {
  await c.query('DELETE FROM webhooks WHERE account_id = $1', ['acct_probe']);
  await c.query(`INSERT INTO accounts (id, name) VALUES ('acct_probe', 'probe') ON CONFLICT DO NOTHING`);
  for (let w = 0; w < 10; w++)
    await c.query(
      `INSERT INTO webhooks (id, account_id, url, events, secret_key_id, secret_ciphertext, created_at)
       VALUES ($1, 'acct_probe', 'http://127.0.0.1:9/hook', ARRAY['sms.*'], $2, 'v1.x.y.z', now())`,
      [`wh_probe_${w}`, KEY],
    );
  await c.query(
    `INSERT INTO webhook_deliveries (id, account_id, webhook_id, event_id, event_type, body, kind, status,
                                     next_attempt_at, created_at, updated_at)
     SELECT lpad(g::text, 12, '0') || md5(g::text), 'acct_probe', 'wh_probe_' || (g % 10), g, 'sms.received', $1,
            'event', 'pending', now() - interval '1 minute', now(), now()
       FROM generate_series(1, $2::int) g`,
    [body, N],
  );
  // PROBE_NO_ANALYZE=1: leave the tables as the bench's drain finds them, written and not yet analyzed (autovacuum
  // analyzes at most once a minute), so the planner estimates the backlog from the table's size alone.
  if (!process.env.PROBE_NO_ANALYZE) await c.query('VACUUM ANALYZE webhook_deliveries, webhook_delivery_attempts');
}

const lsn = async () =>
  BigInt((await c.query<{ b: string }>(`SELECT (pg_current_wal_lsn() - '0/0')::text AS b`)).rows[0]!.b);

for (let run = 0; run < RUNS; run++) {
  await setup();
  let claimCpu = 0;
  let recordCpu = 0;
  let claimMs = 0;
  let recordMs = 0;
  let done = 0;
  const wal0 = await lsn();
  for (;;) {
    let t = performance.now();
    let cpu = cpuMs(pid);
    const jobs = await runner.claim(100);
    claimCpu += cpuMs(pid) - cpu;
    claimMs += performance.now() - t;
    if (jobs.length === 0) break;
    for (let i = 0; i < jobs.length; i += 40) {
      const now = new Date();
      const rs: AttemptRecord[] = jobs.slice(i, i + 40).map((j) => ({
        deliveryId: j.id,
        token: j.token,
        next: 'delivered',
        attempt: j.attempt,
        responseCode: 200,
        error: null,
        nextAttemptAt: null,
        startedAt: now,
        durationMs: 1,
        now,
      }));
      t = performance.now();
      cpu = cpuMs(pid);
      const ok = await recordAttempts(database, rs);
      recordCpu += cpuMs(pid) - cpu;
      recordMs += performance.now() - t;
      done += ok.size;
    }
  }
  const wal = Number((await lsn()) - wal0);
  const us = (ms: number) => Math.round((ms * 1000) / done);
  console.log(
    `run ${run + 1}: ${done} delivered; backend CPU per delivery ${us(claimCpu + recordCpu)} µs (claim ${us(claimCpu)}, record ${us(recordCpu)}); statement time ${us(claimMs + recordMs)} µs (claim ${us(claimMs)}, record ${us(recordMs)}); WAL ${Math.round(wal / done)} B`,
  );
}
await c.end();
