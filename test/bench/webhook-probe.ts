/**
 * What one event with its delivery costs, end to end, load-independently (issue 24, "webhooks end to end"): builds
 * the app in process on a fresh PostgreSQL database with its workers ON, gives 2 accounts one `sms.*` webhook each to
 * the bench's receiver (test/bench/receiver.ts, its own process), drives POST /api/events through Fastify's `inject`
 * with 10 in flight over the 2 accounts, and counts per event+delivery, until the receiver has every delivery:
 * statements sent on the pool (by their first words), the service's CPU (`process.cpuUsage`, user and system) and
 * the CPU of the database's backends (/proc/<pid>/stat: the PostgreSQL server must run on this machine), and the
 * process's heap allocation and garbage collection (`v8.GCProfiler`: bytes allocated = heap used at the end − at the
 * start + what every collection in the window freed; collections counted by kind with their pause). `inject`
 * leaves out the ingest's socket (the bench's poster side); the deliveries go over real sockets.
 *
 * Usage: `TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx test/bench/webhook-probe.ts [n]
 * [windows]` (n events per window, default 3,000, after 600 of warm-up; windows default 3). With
 * `PROBE_ALLOC_PROFILE=<file>` the windows (not the warm-up) also run V8's sampling heap profiler with collected
 * objects kept (what was allocated, not what survived; `--heap-prof` keeps only survivors) and write its profile there
 * (`.heapprofile` JSON, opens in Chrome DevTools).
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import v8 from 'node:v8';
import pg from 'pg';
import { backendCpuMs, countStatements, hookAccounts, postEvents, startInprocApp } from './inproc-app.js';

const N = Number(process.argv[2] ?? 3000);
const WINDOWS = Number(process.argv[3] ?? 3);
const inproc = await startInprocApp(
  'switchboard_whprobe',
  { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
  { workers: true },
);
const { app, dbName } = inproc;
const receiver = spawn(process.execPath, ['--import', 'tsx', 'test/bench/receiver.ts'], {
  stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
});
const port = await new Promise<number>((resolve) =>
  receiver.stdout!.on('data', (b: Buffer) => {
    const m = /listening (\d+)/.exec(b.toString());
    if (m) resolve(Number(m[1]));
  }),
);
/** How many deliveries the receiver has seen under /fast/probe. */
const arrived = () =>
  new Promise<number>((resolve) => {
    receiver.once('message', (m: { arrivals: unknown[] }) => resolve(m.arrivals.length));
    receiver.send({ stats: 'probe' });
  });

const probe = new pg.Client({ connectionString: inproc.url });
await probe.connect();
try {
  const headers = await hookAccounts(app, 'whprobe', () => `http://127.0.0.1:${port}/fast/probe`);
  const counts = countStatements(probe, 60);
  let total = 0;
  const run = async (n: number) => {
    await postEvents(app, headers, n);
    total += n;
    const t = performance.now();
    while ((await arrived()) < total) {
      if (performance.now() - t > 60_000) {
        const s = await probe.query('SELECT status, last_error, count(*) FROM webhook_deliveries GROUP BY 1, 2');
        throw new Error(`deliveries missing after 60 s: ${await arrived()} of ${total}; ${JSON.stringify(s.rows)}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await run(600);
  const allocProfile = process.env.PROBE_ALLOC_PROFILE;
  const inspector = allocProfile ? new Session() : undefined;
  if (inspector) {
    inspector.connect();
    await inspector.post('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }
  for (let w = 0; w < WINDOWS; w++) {
    counts.reset();
    const gc = new v8.GCProfiler();
    const used0 = v8.getHeapStatistics().used_heap_size;
    gc.start();
    const cpu0 = process.cpuUsage();
    const rows0 = await tableWrites(probe);
    const pg0 = await backendCpuMs(probe, dbName);
    const run0 = await backendRunNs(probe, dbName);
    const t0 = performance.now();
    await run(N);
    const ms = performance.now() - t0;
    const pg1 = await backendCpuMs(probe, dbName);
    const run1 = await backendRunNs(probe, dbName);
    const rows1 = await tableWrites(probe);
    const cpu = process.cpuUsage(cpu0);
    const gcs = gc.stop()?.statistics ?? [];
    const alloc = heapAllocated(used0, v8.getHeapStatistics().used_heap_size, gcs);
    console.log(
      `window ${w + 1}: ${N} events+deliveries in ${ms.toFixed(0)} ms; ${(counts.statements / N).toFixed(3)} statements per event; ` +
        `service CPU ${((cpu.user + cpu.system) / N).toFixed(0)} µs (user ${(cpu.user / N).toFixed(0)}, system ${(cpu.system / N).toFixed(0)}), ` +
        `PostgreSQL backends ${(((pg1 - pg0) * 1000) / N).toFixed(0)} µs per event+delivery ` +
        `(schedstat ${(sumDelta(run0, run1) / 1000 / N).toFixed(1)} µs); ` +
        `heap allocated ${(alloc.bytes / N).toFixed(0)} B (window: ${alloc.minor} scavenges + ${alloc.major} mark-compacts), ` +
        `GC ${(alloc.gcMicros / N).toFixed(0)} µs per event+delivery`,
    );
    for (const [head, c] of [...counts.kinds].sort((x, y) => y[1] - x[1]))
      console.log(`  ${(c / N).toFixed(3)}: ${head}`);
    for (const [table, [ins, upd, hot]] of rows1) {
      const [i0, u0, h0] = rows0.get(table) ?? [0, 0, 0];
      if (ins - i0 + upd - u0 === 0) continue;
      console.log(
        `  rows per event+delivery in ${table}: ${((ins - i0) / N).toFixed(3)} inserted, ${((upd - u0) / N).toFixed(3)} updated (${((hot - h0) / N).toFixed(3)} HOT)`,
      );
    }
  }
  if (inspector && allocProfile) {
    const { profile } = await inspector.post('HeapProfiler.stopSampling');
    writeFileSync(allocProfile, JSON.stringify(profile));
    inspector.disconnect();
  }
} finally {
  await probe.end();
  receiver.kill();
  await inproc.close();
}

/**
 * Time on CPU so far of each backend of database `dbName` but `c`'s, in ns, from /proc/<pid>/schedstat (its first
 * field: nanoseconds, where /proc/<pid>/stat counts 10 ms ticks).
 */
async function backendRunNs(c: pg.Client, dbName: string): Promise<Map<number, number>> {
  const { rows } = await c.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
    [dbName],
  );
  const ns = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      ns.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // A backend that ended meanwhile.
    }
  }
  return ns;
}

/** What the backends in `end` ran since `start`, in ns (a backend not in `start` counts from 0: it started since). */
function sumDelta(start: Map<number, number>, end: Map<number, number>): number {
  let ns = 0;
  for (const [pid, v] of end) ns += v - (start.get(pid) ?? 0);
  return ns;
}

/**
 * Rows inserted, updated and HOT-updated so far per table of the probe's database (`pg_stat_user_tables`), after a
 * 1.1 s wait: PostgreSQL 15's backends flush their table counts at most once a second when idle.
 */
async function tableWrites(c: pg.Client): Promise<Map<string, [number, number, number]>> {
  await new Promise((r) => setTimeout(r, 1100));
  const { rows } = await c.query<{ relname: string; ins: string; upd: string; hot: string }>(
    'SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables',
  );
  return new Map(rows.map((r) => [r.relname, [Number(r.ins), Number(r.upd), Number(r.hot)]]));
}

/**
 * Bytes allocated on the V8 heap over a window and its collections, from `v8.GCProfiler`'s statistics: `end − start
 * + Σ (before − after)` of every collection (what was freed was allocated in the window or before it; an object
 * allocated before the window and freed in it counts, one allocated in it and alive at the end counts too), `minor` =
 * scavenges, `major` = mark-compacts (gcType names as V8 reports them), `gcMicros` = the collections' summed cost.
 */
function heapAllocated(
  start: number,
  end: number,
  gcs: {
    gcType: string;
    cost: number;
    beforeGC: { heapStatistics: { usedHeapSize: number } };
    afterGC: { heapStatistics: { usedHeapSize: number } };
  }[],
): { bytes: number; minor: number; major: number; gcMicros: number } {
  let bytes = end - start;
  let minor = 0;
  let major = 0;
  let gcMicros = 0;
  for (const g of gcs) {
    bytes += g.beforeGC.heapStatistics.usedHeapSize - g.afterGC.heapStatistics.usedHeapSize;
    if (/Scavenge/i.test(g.gcType)) minor++;
    else if (/MarkSweep|MarkCompact/i.test(g.gcType)) major++;
    gcMicros += g.cost;
  }
  return { bytes, minor, major, gcMicros };
}
