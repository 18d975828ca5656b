/**
 * The event poster of `npm run bench`'s webhook scenarios: `count` `POST /api/events` to the service at `base`,
 * spread round-robin over `keys` (one API key per account), on one undici Pool with keep-alive, at most
 * `connections` in flight. It is the load generator of those scenarios, in its own process like autocannon is for
 * the others, so the orchestrator's own work (polling the receiver, `fetch`) is never in the measured path.
 *
 * A run's input: `{ base, keys, count, connections, eventType, offset? }`; `offset` is added to each event's payload
 * index `i` so rounds post distinct payloads. Two modes: argv[2] = that JSON runs once and prints one line
 * `{ "result": … }`; argv[2] = `serve` keeps the process (and its keep-alive pools, per base and size) for many runs,
 * each asked over IPC as `{ post: input }` and answered `{ posted: result }`. The bench serves: a fresh process per
 * run spent 449–495 µs of CPU per event on start-up and JIT, a warm one 142–227 µs (docs/performance.md, round 11).
 * Result: `{ posted, failed, statuses, startedAt, ms, cpuMs, commits }`: `startedAt` is
 * when the first request went out (wall clock, ms since the epoch); `commits` is `[[eventId, ms]]`,
 * the wall-clock time (ms since the epoch, `performance.timeOrigin + performance.now()`, the receiver's clock) at
 * which each 202 came back, i.e. when its event was committed; `ms` is the whole run's duration; `cpuMs` this
 * process's user + system CPU while posting. A non-202 is counted in `failed`/`statuses`, never retried.
 */
import { Pool } from 'undici';
import { printResult } from './lib.js';

/** One run's input (see above). */
type Args = { base: string; keys: string[]; count: number; connections: number; eventType: string; offset?: number };
/** Keep-alive pools by target and size, kept for the process's life (warm connections across runs). */
const pools = new Map<string, Pool>();
/** Posts one run's events; resolves with its result (see above). */
async function post({ base, keys, count, connections, eventType, offset = 0 }: Args) {
  let pool = pools.get(`${base} ${connections}`);
  if (!pool) {
    pool = new Pool(base, { connections, keepAliveTimeout: 30_000, pipelining: 1 });
    pools.set(`${base} ${connections}`, pool);
  }
  const p = pool;
  const commits: [string, number][] = [];
  const statuses: Record<string, number> = {};
  let failed = 0;
  let next = 0;
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  async function worker(): Promise<void> {
    while (next < count) {
      const i = next++;
      const res = await p.request({
        method: 'POST',
        path: '/api/events',
        headersTimeout: 60_000,
        bodyTimeout: 60_000,
        headers: { authorization: `Bearer ${keys[i % keys.length]}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          eventType,
          payload: { i: i + offset, from: '+14155550100', to: '+14155550101', status: 'delivered' },
        }),
      });
      const text = await res.body.text();
      const at = performance.timeOrigin + performance.now();
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      if (res.statusCode !== 202) {
        failed++;
        continue;
      }
      commits.push([(JSON.parse(text) as { id: string }).id, at]);
    }
  }
  await Promise.all(Array.from({ length: Math.min(connections, count) }, worker));
  const cpu = process.cpuUsage(cpu0);
  return {
    posted: count,
    failed,
    statuses,
    startedAt: performance.timeOrigin + started,
    ms: performance.now() - started,
    cpuMs: (cpu.user + cpu.system) / 1000,
    commits,
  };
}
if (process.argv[2] === 'serve') {
  process.on('message', (m: { post?: Args }) => {
    if (m.post) post(m.post).then((r) => process.send!({ posted: r }));
  });
} else {
  printResult(await post(JSON.parse(process.argv[2]!) as Args));
  for (const p of pools.values()) await p.close();
}
