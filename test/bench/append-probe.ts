/**
 * What one event append costs PostgreSQL, load-independently (issue 24, "webhooks end to end"): builds the app on a
 * fresh PostgreSQL database (workers off), gives 2 accounts one `sms.*` webhook each (the end-to-end bench's
 * shape), drives `n` POST /api/events through Fastify's `inject` with 10 in flight over the 2 accounts, and prints
 * per event: statements sent (by their first words), the service's CPU (`process.cpuUsage`) and the CPU of the
 * database's backends (their /proc/<pid>/stat: the PostgreSQL server must run on this machine). Then it runs the
 * last append statement seen `k` times more under `EXPLAIN (ANALYZE, BUFFERS, WAL)`, each in a transaction of its
 * own (committed; the deliveries' ids drawn afresh), and prints the mean execution time, each foreign-key trigger's
 * time and calls, and the WAL records and bytes of the plan and of the whole transaction (pg_walinspect, by xid:
 * the triggers' records included, the commit record left out).
 *
 * Usage: `TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx test/bench/append-probe.ts [n] [k]`;
 * PROBE_DDL='stmt; stmt' runs statements before the replay (to weigh a schema change), PROBE_PLAN=1 prints the plan.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { backendCpuMs, countStatements, hookAccounts, postEvents, startInprocApp } from './inproc-app.js';

const N = Number(process.argv[2] ?? 4000);
const K = Number(process.argv[3] ?? 200);
const inproc = await startInprocApp('switchboard_probe', { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
const { app, dbName } = inproc;

const probe = new pg.Client({ connectionString: inproc.url });
await probe.connect();
try {
  const headers = await hookAccounts(app, 'probe', (i) => `http://127.0.0.1:9/hook${i}`);
  let appends = 0;
  let last: { text: string; values: unknown[] } | undefined;
  const counts = countStatements(probe, 80, (text, values) => {
    if (/^\s*WITH reads AS/.test(text) && /INSERT INTO events/.test(text)) {
      appends++;
      last = { text, values: values ?? [] };
    }
  });
  const run = (n: number) => postEvents(app, headers, n);
  await run(500);
  counts.reset();
  appends = 0;
  const cpu0 = process.cpuUsage();
  const pg0 = await backendCpuMs(probe, dbName);
  await run(N);
  const pg1 = await backendCpuMs(probe, dbName);
  const cpu = process.cpuUsage(cpu0);
  console.log(
    `${N} events: ${(counts.statements / N).toFixed(3)} statements per event, ${(N / appends).toFixed(2)} events per append statement; ` +
      `service CPU ${((cpu.user + cpu.system) / N).toFixed(0)} µs/event, PostgreSQL backends ${(((pg1 - pg0) * 1000) / N).toFixed(0)} µs/event`,
  );
  for (const [head, c] of counts.kinds) console.log(`  ${(c / N).toFixed(3)} per event: ${head}`);
  if (!last) throw new Error('no append statement seen');
  // The delivery ids and claim tokens (uuidv7) are drawn afresh; account and webhook ids stay.
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  const keep = new Set(
    ((await probe.query('SELECT id FROM webhooks UNION ALL SELECT id FROM accounts')).rows as { id: string }[]).map(
      (r) => r.id,
    ),
  );
  const fresh = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(fresh) : typeof v === 'string' && uuid.test(v) && !keep.has(v) ? randomUUID() : v;
  // PROBE_DDL: statements run before the replay, to weigh a schema change (e.g. a constraint dropped).
  for (const ddl of (process.env.PROBE_DDL ?? '').split(';').filter((x) => x.trim())) {
    await probe.query(ddl);
    console.log(`  ran: ${ddl.trim()}`);
  }
  await probe.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
  let xactRecords = 0;
  let xactBytes = 0;
  let exec = 0;
  let walRecords = 0;
  let walBytes = 0;
  const triggers = new Map<string, { time: number; calls: number }>();
  for (let i = 0; i < K; i++) {
    const start = (await probe.query('SELECT pg_current_wal_insert_lsn() AS l')).rows[0].l as string;
    await probe.query('BEGIN');
    const xid = (await probe.query('SELECT txid_current()::text AS x')).rows[0].x as string;
    const { rows } = await probe.query(
      `EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) ${last.text}`,
      fresh(last.values) as unknown[],
    );
    await probe.query('COMMIT');
    // Every WAL record of the transaction, the foreign-key triggers' included (EXPLAIN's count leaves them out).
    const w = (
      await probe.query(
        `SELECT count(*)::int AS n, coalesce(sum(record_length), 0)::int AS b, string_agg(resource_manager || ':' || record_type, ' ') AS kinds
           FROM pg_get_wal_records_info($1, pg_current_wal_flush_lsn()) WHERE xid::text = $2 AND record_type <> 'COMMIT'`,
        [start, xid],
      )
    ).rows[0] as { n: number; b: number; kinds: string };
    xactRecords += w.n;
    xactBytes += w.b;
    if (i === 0 && process.env.PROBE_PLAN) console.log(w.kinds);
    const plan = (rows[0] as { 'QUERY PLAN': Record<string, unknown>[] })['QUERY PLAN'][0]!;
    exec += plan['Execution Time'] as number;
    const top = plan.Plan as Record<string, number>;
    walRecords += top['WAL Records'] ?? 0;
    walBytes += top['WAL Bytes'] ?? 0;
    for (const t of (plan.Triggers ?? []) as {
      'Trigger Name': string;
      Relation: string;
      Time: number;
      Calls: number;
    }[]) {
      const key = `${t.Relation}.${t['Trigger Name']}`;
      const e = triggers.get(key) ?? { time: 0, calls: 0 };
      e.time += t.Time;
      e.calls += t.Calls;
      triggers.set(key, e);
    }
  }
  if (process.env.PROBE_PLAN) {
    await probe.query('BEGIN');
    const { rows } = await probe.query(`EXPLAIN (ANALYZE, BUFFERS, WAL) ${last.text}`, fresh(last.values) as unknown[]);
    await probe.query('ROLLBACK');
    console.log(last.text);
    for (const r of rows as { 'QUERY PLAN': string }[]) console.log(r['QUERY PLAN']);
  }
  const evs = (last.values.find(
    (v) => Array.isArray(v) && v.length > 0 && typeof v[0] === 'string' && /\./.test(v[0]),
  ) ?? []) as unknown[];
  console.log(
    `last append statement (${evs.length} events) under EXPLAIN ANALYZE, ${K} runs: execution ${(exec / K).toFixed(3)} ms; ` +
      `WAL ${(walRecords / K).toFixed(1)} records, ${(walBytes / K).toFixed(0)} bytes in the plan; the transaction's ${(xactRecords / K).toFixed(1)} records, ${(xactBytes / K).toFixed(0)} bytes (commit record left out)`,
  );
  for (const [key, t] of triggers)
    console.log(`  trigger ${key}: ${(t.time / K).toFixed(3)} ms, ${(t.calls / K).toFixed(1)} calls`);
} finally {
  await probe.end();
  await inproc.close();
}
