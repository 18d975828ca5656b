/**
 * Replay latency (issue 9): time from sending `GET /api/events` with a `Last-Event-ID` to the last byte of the
 * 1,000th replayed event, over a fresh connection each time. PGlite in memory by default; PostgreSQL with
 * TEST_DATABASE_URL. Prints p50/p99/max in ms over REPLAY_RUNS runs (default 200, after 20 warm-ups), alternating in
 * rounds of 25 with a bare baseline in the same process: node:http + one query on the same database connection
 * (the same range read, payload as text) writing the same frames, with no auth, routing or stream machinery.
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
const raw = await t.app.ctx.database.raw();
const bare = http.createServer(async (req, res) => {
  try {
    const after = req.headers["last-event-id"] as string;
    const rows = await raw.query<{ id: string; channel: string; event_type: string; payload: string; ts: Date }>(
      `SELECT id::text, channel, event_type, payload::text AS payload, created_at AS ts FROM events
      WHERE account_id = $1 AND id > $2 ORDER BY id DESC LIMIT 1000`,
      [a.accountId, after],
    );
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let out = 'retry: 1000\n\n';
    for (let i = rows.length - 1; i >= 0; i--) {
      const r = rows[i]!;
      out += `event: ${r.event_type}\nid: ${r.id}\ndata: {"channel":"${r.channel}","eventType":"${r.event_type}","payload":${r.payload},"customerId":"${a.accountId}","timestamp":"${new Date(r.ts).toISOString()}"}\n\n`;
    }
    res.end(out);
  } catch (err) {
    console.error(err);
    res.destroy();
  }
});
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
const bareUrl = new URL(`http://127.0.0.1:${(bare.address() as { port: number }).port}/api/events`);

function once(target: URL): Promise<{ ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    let bytes = 0;
    let tail = '';
    const req = http.get(
      {
        host: target.hostname,
        port: target.port,
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

for (let i = 0; i < 20; i++) await once(url);
for (let i = 0; i < 20; i++) await once(bareUrl);
const times: number[] = [];
const bareTimes: number[] = [];
let bytes = 0;
let bareBytes = 0;
for (let round = 0; round < runs / 25; round++) {
  for (let i = 0; i < 25; i++) {
    const r = await once(url);
    times.push(r.ms);
    bytes = r.bytes;
  }
  for (let i = 0; i < 25; i++) {
    const r = await once(bareUrl);
    bareTimes.push(r.ms);
    bareBytes = r.bytes;
  }
}
const pct = (list: number[], p: number) => {
  const sorted = [...list].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!.toFixed(1);
};
const line = (name: string, list: number[], size: number) =>
  `${name} (${t.app.ctx.database.kind}, ${list.length} runs, ${size} bytes): p50 ${pct(list, 50)} ms, ` +
  `p99 ${pct(list, 99)} ms, max ${Math.max(...list).toFixed(1)} ms`;
console.log(line('replay of 1000 events after Last-Event-ID, service', times, bytes));
console.log(line('same bytes from a bare node:http + one query', bareTimes, bareBytes));
bare.close();
await raw.release();
await t.close();
