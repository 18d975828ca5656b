/**
 * Replay latency (issue 9): time from sending `GET /api/events` with a `Last-Event-ID` to the last byte of the
 * 1,000th replayed event, over a fresh connection each time. PGlite in memory by default; PostgreSQL with
 * TEST_DATABASE_URL. Prints p50/p99/max in ms over REPLAY_RUNS runs (default 200, after 20 warm-ups).
 * Run: `npx tsx test/perf/replay-latency.ts`. Figures go in docs/events.md and the bench, never in tests.
 */
import http from 'node:http';
import { startApp } from '../helpers/app.js';

const runs = Number(process.env.REPLAY_RUNS ?? 200);
const t = await startApp({ env: { LOG_LEVEL: 'silent', WORKER_POLL_MS: '1000' } });
const a = await t.newAccount();
const payload = { id: 'm1', from: '+14155550100', to: '+14155550101', status: 'delivered', segments: 1 };
const ids: string[] = [];
for (let i = 0; i < 12; i++) {
  const events = await t.app.ctx.events.append(
    Array.from({ length: 100 }, () => ({ accountId: a.accountId, eventType: 'sms.delivered', payload })),
  );
  ids.push(...events.map((e) => e.id));
}
const cursor = ids[ids.length - 1001]!;
const lastId = ids.at(-1)!;
const url = new URL(`${t.url}/api/events`);

function once(): Promise<{ ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    let bytes = 0;
    let tail = '';
    const req = http.get(
      {
        host: url.hostname,
        port: url.port,
        path: '/api/events',
        agent: false,
        headers: { authorization: `Bearer ${a.apiKey}`, 'last-event-id': cursor },
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          bytes += Buffer.byteLength(chunk);
          tail = (tail + chunk).slice(-4096);
          const at = tail.indexOf(`id: ${lastId}\n`);
          if (at >= 0 && tail.indexOf('\n\n', at) >= 0) {
            const ms = Number(process.hrtime.bigint() - started) / 1e6;
            req.destroy();
            resolve({ ms, bytes });
          }
        });
      },
    );
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
  });
}

for (let i = 0; i < 20; i++) await once();
const times: number[] = [];
let bytes = 0;
for (let i = 0; i < runs; i++) {
  const r = await once();
  times.push(r.ms);
  bytes = r.bytes;
}
times.sort((x, y) => x - y);
const pct = (p: number) => times[Math.min(times.length - 1, Math.ceil((p / 100) * times.length) - 1)]!.toFixed(1);
console.log(
  `replay of 1000 events after Last-Event-ID (${t.app.ctx.database.kind}, ${runs} runs, ${bytes} bytes): ` +
    `p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${times.at(-1)!.toFixed(1)} ms`,
);
await t.close();
