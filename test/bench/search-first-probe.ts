/**
 * Issue 24 round 13 probe: what the first search costs when the account has `N` messages not indexed yet (the
 * search vector is computed after delivery; a search with `q` indexes its account's pending messages first,
 * src/domain/email/search-index.ts). On a fresh PostgreSQL database (TEST_DATABASE_URL's server, default local): an
 * app without workers stores N bench 4 KB replies through the inbound delivery path (`deliverInbound`, no SMTP), then
 * `GET /api/email/threads?q=…` is timed twice: first with the N pending, then again with none. Prints wall ms and
 * the database backends' CPU ms of each search (from /proc; the server must run on this machine).
 *
 * Usage: `npx tsx test/bench/search-first-probe.ts [N=2000]`.
 */
import pg from 'pg';
import { createAccount } from '../../src/domain/accounts/account.service.js';
import { deliverInbound } from '../../src/domain/email/inbound.service.js';
import { backendCpuMs, startInprocApp } from './inproc-app.js';
import { replyOf4KB } from './smtp-load.js';

const n = Number(process.argv[2] ?? 2000);
const probe = await startInprocApp('search_first_probe');
const { app, dbName } = probe;
try {
  const url = await app.listen();
  const { apiKey } = await createAccount(app.ctx.db, { name: 'probe' });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as Record<string, unknown>;
  };
  const box = (await call('POST', '/api/email/identities', { localPart: 'probe' })) as { address: string };
  const text = replyOf4KB();
  for (let i = 0; i < n; i++) {
    const raw = Buffer.from(
      `From: customer@bench.example\r\nTo: ${box.address}\r\nSubject: Order ${i}\r\n` +
        `Message-ID: <probe-${i}@bench.example>\r\n\r\n${text.replace(/\n/g, '\r\n')}\r\n`,
    );
    const parsed = await app.ctx.mail.parse(raw);
    await deliverInbound(app.ctx, parsed, { mailFrom: 'customer@bench.example', rcptTo: [box.address] });
  }
  const c = new pg.Client({ connectionString: probe.url });
  await c.connect();
  const pending = async () =>
    Number((await c.query<{ n: number }>('SELECT count(*)::int AS n FROM email_search_pending')).rows[0]!.n);
  const search = async (label: string) => {
    const before = await pending();
    const cpu0 = await backendCpuMs(c, dbName);
    const t0 = performance.now();
    const res = await call('GET', '/api/email/threads?q=order&limit=10');
    const ms = performance.now() - t0;
    const cpu1 = await backendCpuMs(c, dbName);
    const threads = (res.threads as unknown[] | undefined)?.length ?? 0;
    process.stdout.write(
      `${label}: ${before} pending → ${await pending()}; ${ms.toFixed(0)} ms wall, ` +
        `PostgreSQL CPU ${(cpu1 - cpu0).toFixed(0)} ms` +
        (before ? ` (${(((cpu1 - cpu0) * 1000) / before).toFixed(0)} µs per pending message)` : '') +
        `; ${threads} threads answered\n`,
    );
  };
  await search(`first search after ${n} messages`);
  await search('second search');
  await c.end();
} finally {
  await probe.close();
}
