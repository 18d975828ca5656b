/**
 * In-process CPU per request of the read paths, without sockets: builds the app on a fresh PostgreSQL database
 * (workers off), seeds one account and 60 brands, then drives each read through Fastify's `inject` with 10 in
 * flight and prints the process's CPU time (user + system, `process.cpuUsage`) per request, per round and median.
 * The socket writes that dominate a loaded machine's figures are absent, so what is left is the service's own work
 * per request (plus PostgreSQL's client side): a steady figure to compare two builds on a busy box.
 *
 * Usage: `TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx test/bench/inproc.ts [n] [rounds]
 * [scenario,…]` (n requests per round, default 5,000; rounds default 5). Profile with `node --cpu-prof --import tsx`.
 */
import pg from 'pg';
import { createAccount } from '../../src/domain/accounts/account.service.js';
import { startInprocApp } from './inproc-app.js';
import { readScenarios } from './lib.js';

const N = Number(process.argv[2] ?? 5000);
const ROUNDS = Number(process.argv[3] ?? 5);
const ONLY = process.argv[4]?.split(',');
const inproc = await startInprocApp('switchboard_inproc');
const app = inproc.app;
try {
  const { apiKey } = await createAccount(app.ctx.db, { name: 'inproc' });
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const ids: string[] = [];
  for (let i = 0; i < 60; i++) {
    const r = await app.http.inject({
      method: 'POST',
      url: '/compliance/brands',
      headers,
      payload: {
        name: `Bench Brand ${i} LLC`,
        ein: `12-${3_000_000 + i}`,
        vertical: 'RETAIL',
        entityType: 'PRIVATE_PROFIT',
      },
    });
    if (r.statusCode !== 201) throw new Error(`seed: ${r.statusCode} ${r.body}`);
    ids.push(r.json().id);
  }
  ids.sort();
  const id = ids[7]!;
  // The read scenarios exactly as `npm run bench`, pair.ts and callgrind.ts send them (test/bench/lib.ts).
  const scenarios: { name: string; method: 'GET' | 'POST'; url: string; payload?: string }[] = readScenarios(id).map(
    (r) => ({ name: r.name, method: r.method, url: r.path, ...(r.body === undefined ? {} : { payload: r.body }) }),
  );
  // events-10acc: POST /api/events, worker i on account i of 10 (the bench's spread), answered 202.
  const eventHeaders: Record<string, string>[] = [];
  for (let i = 0; i < 10; i++) {
    const { apiKey: key } = await createAccount(app.ctx.db, { name: `inproc-w${i}` });
    eventHeaders.push({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
  }
  scenarios.push({
    name: 'events-10acc',
    method: 'POST',
    url: '/api/events',
    payload: JSON.stringify({
      eventType: 'sms.delivered',
      payload: { id: 'm1', from: '+14155550100', to: '+14155550101', status: 'delivered' },
    }),
  });
  // INPROC_SQL=1: count the statements sent on the pool per request (pg's Client#query), by their first words.
  const sqlCounts = new Map<string, number>();
  if (process.env.INPROC_SQL) {
    const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
    const query = proto.query;
    proto.query = function (this: unknown, ...a: unknown[]) {
      const q = a[0] as string | { text?: string };
      const text = (typeof q === 'string' ? q : (q?.text ?? '')).replace(/\s+/g, ' ').trim().slice(0, 90);
      sqlCounts.set(text, (sqlCounts.get(text) ?? 0) + 1);
      return query.apply(this, a);
    };
  }
  const run = async (s: (typeof scenarios)[number], n: number) => {
    let next = 0;
    let bad = 0;
    const ok = s.name.startsWith('events') ? 202 : 200;
    const worker = async (_: unknown, w: number) => {
      const h = s.name === 'events-10acc' ? eventHeaders[w]! : headers;
      while (next++ < n) {
        const r = await app.http.inject({ method: s.method, url: s.url, headers: h, payload: s.payload });
        if (r.statusCode !== ok) bad++;
      }
    };
    await Promise.all(Array.from({ length: 10 }, worker));
    if (bad > 0) throw new Error(`${s.name}: ${bad} answers were not ${ok}`);
  };
  for (const s of scenarios) {
    if (ONLY && !ONLY.includes(s.name)) continue;
    const sample = await app.http.inject({ method: s.method, url: s.url, headers, payload: s.payload });
    if (process.env.INPROC_SHOW) console.log(sample.headers, sample.body.slice(0, 400));
    await run(s, Math.min(2000, N));
    if (process.env.INPROC_SQL) sqlCounts.clear();
    const perReq: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const before = process.cpuUsage();
      await run(s, N);
      const used = process.cpuUsage(before);
      perReq.push((used.user + used.system) / N);
    }
    const sorted = [...perReq].sort((a, b) => a - b);
    if (process.env.INPROC_SQL) {
      for (const [text, c] of [...sqlCounts].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
        console.log(`  ${(c / (ROUNDS * N)).toFixed(3)} per request: ${text}`);
      }
      sqlCounts.clear();
    }
    console.log(
      `${s.name.padEnd(10)} CPU/req median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} µs, min ${sorted[0]!.toFixed(1)} (${perReq.map((v) => v.toFixed(0)).join(' ')})`,
    );
  }
} finally {
  await inproc.close();
}
