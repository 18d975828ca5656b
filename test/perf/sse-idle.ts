/**
 * 10,000 SSE streams on one instance (issue 9): opens SSE_STREAMS (default 10,000) streams over SSE_ACCOUNTS
 * accounts (default 1,000) from a child process, then measures on the server
 * - memory per connection: (heap + external + array buffers) and RSS after GC, minus before, divided by streams;
 * - idle database transactions/s: pg_stat_database.xact_commit + xact_rollback of the app's database over
 *   SSE_IDLE_S seconds (default 30) with production intervals (heartbeat 15 s, tail check 1 s, workers 1 s);
 * - one publish to an account with SSE_FANOUT streams (default 1,000): publish → last stream received.
 * Needs TEST_DATABASE_URL (PostgreSQL). Run: `node --expose-gc --import tsx test/perf/sse-idle.ts`.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startApp } from '../helpers/app.js';

const streams = Number(process.env.SSE_STREAMS ?? 10_000);
const accountsN = Number(process.env.SSE_ACCOUNTS ?? 1_000);
const idleS = Number(process.env.SSE_IDLE_S ?? 30);
const fanout = Number(process.env.SSE_FANOUT ?? 1_000);

if (process.argv[2] === 'client') {
  // Child: opens the streams it is told to and reports when each has its first bytes, and when a marker arrives.
  const http = await import('node:http');
  const { host, port, keys } = await new Promise<{ host: string; port: string; keys: string[] }>((resolve) =>
    process.once('message', (m) => resolve(m as { host: string; port: string; keys: string[] })),
  );
  let open = 0;
  const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const seen = new Map<string, number>();
  for (const key of keys) {
    await new Promise<void>((resolve) => {
      const req = http.get({ host, port, path: '/api/events', agent, headers: { authorization: `Bearer ${key}` } });
      req.on('response', (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const m = /"marker":"([^"]+)"/.exec(chunk);
          if (m) {
            const n = (seen.get(m[1]!) ?? 0) + 1;
            seen.set(m[1]!, n);
            process.send!({ marker: m[1], n, at: Date.now() });
          }
        });
        open++;
        if (open % 1000 === 0) process.send!({ open });
        resolve();
      });
      req.on('error', () => resolve());
    });
  }
  process.send!({ ready: open });
  process.on('message', (m: { exit?: boolean }) => {
    if (m.exit) process.exit(0);
  });
} else {
  if (!process.env.TEST_DATABASE_URL) throw new Error('set TEST_DATABASE_URL (PostgreSQL)');
  const t = await startApp({ env: { LOG_LEVEL: 'silent', WORKER_POLL_MS: '1000', EVENT_TAIL_CHECK_MS: '1000' } });
  const accounts = [];
  for (let i = 0; i < accountsN; i++) accounts.push(await t.newAccount());
  // The first account gets `fanout` streams, the rest are spread over the other accounts.
  const keys: string[] = [];
  for (let i = 0; i < streams; i++)
    keys.push(i < fanout ? accounts[0]!.apiKey : accounts[1 + (i % (accountsN - 1))]!.apiKey);
  const gc = (globalThis as { gc?: () => void }).gc;
  const mem = () => {
    gc?.();
    const m = process.memoryUsage();
    return { heap: m.heapUsed + m.external + m.arrayBuffers, rss: m.rss };
  };
  const before = mem();
  const url = new URL(t.url);
  const child = fork(fileURLToPath(import.meta.url), ['client'], { execArgv: ['--import', 'tsx'] });
  child.send({ host: url.hostname, port: url.port, keys });
  const markers: { marker: string; n: number; at: number }[] = [];
  await new Promise<void>((resolve) => {
    child.on('message', (m: { ready?: number; open?: number; marker?: string; n: number; at: number }) => {
      if (m.open) process.stdout.write(`${m.open} streams open\n`);
      if (m.ready !== undefined) resolve();
      if (m.marker) markers.push(m as { marker: string; n: number; at: number });
    });
  });
  await new Promise((r) => setTimeout(r, 2000));
  const after = mem();
  const perConn = (x: number, y: number) => ((y - x) / streams / 1024).toFixed(1);
  console.log(
    `${streams} streams over ${accountsN} accounts: heap+external ${perConn(before.heap, after.heap)} KiB/stream, ` +
      `RSS ${perConn(before.rss, after.rss)} KiB/stream`,
  );
  const db = t.app.ctx.db;
  const xacts = async () => {
    const [row] = await db.$queryRawUnsafe<{ n: bigint }[]>(
      'SELECT (xact_commit + xact_rollback) AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    return Number(row!.n);
  };
  const x0 = await xacts();
  await new Promise((r) => setTimeout(r, idleS * 1000));
  const x1 = await xacts();
  console.log(
    `idle with ${streams} streams: ${((x1 - x0 - 1) / idleS).toFixed(2)} database transactions/s over ${idleS} s`,
  );
  // One publish to the account with `fanout` streams.
  const publishedAt = Date.now();
  const res = await accounts[0]!.request('POST', '/api/events', { eventType: 'sms.sent', payload: { marker: 'm1' } });
  const answered = Date.now() - publishedAt;
  const deadline = Date.now() + 30_000;
  while (markers.filter((m) => m.marker === 'm1').length < fanout && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const got = markers.filter((m) => m.marker === 'm1');
  console.log(
    `one publish (${res.status}, answered in ${answered} ms) to ${fanout} streams of one account: ` +
      `${got.length} received, last after ${got.length ? Math.max(...got.map((m) => m.at)) - publishedAt : '-'} ms`,
  );
  child.send({ exit: true });
  await t.close();
  process.exit(0);
}
