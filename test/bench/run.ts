/**
 * `npm run bench`: throughput and latency of the main paths, measured with autocannon against a real app on
 * loopback (PGlite in memory by default; PostgreSQL with TEST_DATABASE_URL). Each scenario runs BENCH_SECONDS
 * (default 5 s) with BENCH_CONNECTIONS (default 10) connections and prints requests/s and latency percentiles in
 * ms. Bounded in time and to 127.0.0.1. Figures go in issue notes and the README, never in test assertions.
 */
import autocannon from 'autocannon';
import { startApp } from '../helpers/app.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  auth?: boolean;
}

// Production polling (the test default is 50 ms), so background workers cost what they cost in service.
// No rate limit: the bench measures the service's own throughput, far past any per-key budget.
const t = await startApp({ env: { LOG_LEVEL: 'silent', WORKER_POLL_MS: '1000', RATE_LIMIT_MAX: '0' } });
const a = await t.newAccount();
const scenarios: Scenario[] = [
  { name: 'GET /healthz (no auth, baseline)', method: 'GET', path: '/healthz' },
  {
    name: 'POST /graphql { viewer } (auth + Yoga)',
    method: 'POST',
    path: '/graphql',
    body: { query: '{ viewer { accountId } }' },
    auth: true,
  },
  {
    name: 'GET /compliance/brands (list, 50 per page)',
    method: 'GET',
    path: '/compliance/brands',
    auth: true,
  },
  {
    name: 'GET /api/events/history?limit=100',
    method: 'GET',
    path: '/api/events/history?limit=100',
    auth: true,
  },
  {
    name: 'POST /api/events (ingest: validate, write event log)',
    method: 'POST',
    path: '/api/events',
    body: {
      eventType: 'sms.delivered',
      payload: { id: 'm1', from: '+14155550100', to: '+14155550101', status: 'delivered' },
    },
    auth: true,
  },
];

// Data for the read scenarios: 60 brands and 200 events.
for (let i = 0; i < 60; i++) {
  await a.request('POST', '/compliance/brands', {
    name: `Bench Brand ${i} LLC`,
    ein: `12-${String(3_000_000 + i)}`,
    vertical: 'RETAIL',
    entityType: 'PRIVATE_PROFIT',
  });
}
for (let i = 0; i < 200; i++) await a.request('POST', '/api/events', { eventType: 'sms.sent', payload: { i } });

const rows: string[] = [];
for (const s of scenarios) {
  const result = await autocannon({
    url: `${t.url}${s.path}`,
    method: s.method,
    connections,
    duration: seconds,
    headers: {
      ...(s.auth ? { authorization: `Bearer ${a.apiKey}` } : {}),
      ...(s.body ? { 'content-type': 'application/json' } : {}),
    },
    body: s.body ? JSON.stringify(s.body) : undefined,
  });
  const non2xx = result.non2xx + result.errors;
  rows.push(
    `| ${s.name} | ${Math.round(result.requests.average)} | ${result.latency.p50} | ${result.latency.p99} | ${non2xx} |`,
  );
}

// Publish-to-SSE latency: one subscriber, sequential publishes, time from POST sent to the SSE message read.
const latencies: number[] = [];
const stream = await fetch(`${t.url}/api/events?token=${a.apiKey}&channels=billing`);
const reader = stream.body!.getReader();
const decoder = new TextDecoder();
let buffered = '';
async function nextMessage(): Promise<void> {
  for (;;) {
    const end = buffered.indexOf('\n\n');
    if (end >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (block.includes('event: billing.usage')) return;
      continue;
    }
    const { value, done } = await reader.read();
    if (done) throw new Error('stream ended');
    buffered += decoder.decode(value, { stream: true });
  }
}
for (let i = 0; i < 200; i++) {
  const started = performance.now();
  const sent = a.request('POST', '/api/events', { eventType: 'billing.usage', payload: { i } });
  await nextMessage();
  latencies.push(performance.now() - started);
  await sent;
}
await reader.cancel();
latencies.sort((x, y) => x - y);
const pct = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1);
rows.push(`| publish → SSE message (200 sequential events, 1 subscriber) | — | ${pct(50)} | ${pct(99)} | 0 |`);

await t.close();

process.stdout.write(
  `\nSwitchboard bench: ${seconds} s per scenario, ${connections} connections, database ${
    process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite (memory)'
  }\n\n| scenario | req/s | p50 ms | p99 ms | non-2xx/errors |\n|---|---|---|---|---|\n${rows.join('\n')}\n`,
);
