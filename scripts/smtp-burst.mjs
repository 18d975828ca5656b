#!/usr/bin/env node
// The inbound-mail memory burst of issue 26: starts the built service (dist/main.js) as a child process, sends N
// concurrent messages of about M bytes each over SMTP (a plain SMTP client per connection, spread over the loopback
// addresses 127.0.0.1–127.0.0.5 so the per-address connection cap does not refuse them), and samples the service's
// resident memory (VmRSS from /proc) every 200 ms: idle after the warm-up, at its peak during the burst, and 5, 15, 30 and 60
// s after the last reply, and the V8 heap and external memory from the service's /metrics (about once a second during
// the burst). One small message is delivered first (warm-up). Prints one summary line per round and a JSON object.
// Linux only (/proc).
//
// Usage: npm run build && node scripts/smtp-burst.mjs [--messages 50] [--bytes 10000000] [--rounds 1] [--after 60]
// (--rounds: bursts one after another on the same instance, each followed by --after seconds of sampling, at most 300)
// The embedded database (PGlite, in a temporary DATA_DIR) by default; with DATABASE_URL set, that PostgreSQL.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { largeMime } from './large-mime.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const MESSAGES = arg('messages', 50);
const BYTES = arg('bytes', 10_000_000);
const AFTER_S = arg('after', 60);
const ROUNDS = arg('rounds', 1);
const ADMIN_TOKEN = randomBytes(24).toString('hex');
const HTTP_PORT = 20_000 + Math.floor(Math.random() * 20_000);
const SMTP_PORT = HTTP_PORT + 1;

const dataDir = mkdtempSync(path.join(tmpdir(), 'switchboard-burst-'));
const child = spawn(process.execPath, ['--enable-source-maps', 'dist/main.js'], {
  env: {
    ...process.env,
    // glibc malloc as `npm start` and the image set it (docs/operations.md), unless given.
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
    MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '131072',
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(HTTP_PORT),
    SMTP_PORT: String(SMTP_PORT),
    SMTP_SUBMISSION_PORT: '-1',
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    BOOTSTRAP_ACCOUNT: 'false',
    LOG_LEVEL: 'warn',
    // No sender lookups leave the machine: a closed loopback port answers at once (temperror).
    DNS_SERVERS: '127.0.0.1:9',
    SMTP_MESSAGES_PER_ADDRESS: '10000',
    SMTP_MESSAGES_PER_SENDER_DOMAIN: '10000',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const rssMb = () => {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0);
    return Math.round(kb / 1024);
  } catch {
    return 0;
  }
};
const base = `http://127.0.0.1:${HTTP_PORT}`;
/** V8 heap in use and memory outside it (Buffers, WASM), in MB, from the service's own /metrics (prom-client). */
async function heapMb() {
  try {
    const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    const read = (name) =>
      Math.round(Number(new RegExp(`^switchboard_${name} (\\S+)`, 'm').exec(text)?.[1] ?? 0) / 2 ** 20);
    return {
      heapUsed: read('nodejs_heap_size_used_bytes'),
      heapTotal: read('nodejs_heap_size_total_bytes'),
      external: read('nodejs_external_memory_bytes'),
    };
  } catch {
    return null;
  }
}
const cleanup = () => {
  child.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
};
process.on('exit', cleanup);

async function call(method, urlPath, body, token) {
  const res = await fetch(`${base}${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json().catch(() => ({}));
  if (res.status >= 300) throw new Error(`${method} ${urlPath}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

// Ready?
for (let i = 0; ; i++) {
  if (i > 600) throw new Error('the service did not become ready in 60 s');
  const ok = await fetch(`${base}/readyz`).then(
    (r) => r.ok,
    () => false,
  );
  if (ok) break;
  await sleep(100);
}
const account = await call('POST', '/admin/accounts', { name: 'burst' }, ADMIN_TOKEN);
const identity = await call('POST', '/api/email/identities', { localPart: 'burst' }, account.apiKey);

// One message body (shared by every connection): a short text part and a base64 attachment, CRLF lines of 76.
const boundary = 'burst-boundary-0123456789';
const body = largeMime({ bytes: BYTES, boundary });

/** Sends one message over its own connection from `localAddress`. @returns the final reply line. */
function sendOne(n, localAddress, payload = body) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: SMTP_PORT, localAddress });
    let buffered = '';
    const waiting = [];
    socket.on('data', (d) => {
      buffered += d.toString('latin1');
      let i = buffered.indexOf('\r\n');
      while (i >= 0) {
        const reply = buffered.slice(0, i);
        buffered = buffered.slice(i + 2);
        if (/^\d{3} /.test(reply)) waiting.shift()?.(reply);
        i = buffered.indexOf('\r\n');
      }
    });
    socket.on('error', reject);
    const next = () => new Promise((r) => waiting.push(r));
    const command = (text) => {
      const reply = next();
      socket.write(`${text}\r\n`);
      return reply;
    };
    (async () => {
      await next(); // greeting
      await command('EHLO burst.example');
      await command('MAIL FROM:<sender@burst.example>');
      const rcpt = await command(`RCPT TO:<${identity.address}>`);
      if (!rcpt.startsWith('250')) throw new Error(rcpt);
      const data = await command('DATA');
      if (!data.startsWith('354')) throw new Error(data);
      const headers = [
        'From: sender@burst.example',
        `To: ${identity.address}`,
        `Subject: burst ${n}`,
        `Message-ID: <burst-${n}-${Date.now()}@burst.example>`,
        'MIME-Version: 1.0',
        `Content-Type: multipart/mixed; boundary="${boundary}"`,
        '',
      ].join('\r\n');
      const done = next();
      socket.write(headers);
      if (!socket.write(payload)) await new Promise((r) => socket.once('drain', r));
      socket.write('.\r\n');
      const reply = await done;
      socket.end('QUIT\r\n');
      return reply;
    })().then(resolve, reject);
  });
}

// One small message first, so the idle figure is the service that has received mail (the MIME parser and the sender
// authentication are loaded with the first message), not the one that never did.
const warmUp = await sendOne('warm-up', '127.0.0.1', largeMime({ bytes: 0, boundary }));
if (!warmUp.startsWith('250')) throw new Error(`warm-up message: ${warmUp}`);
await sleep(5000);
const idle = rssMb();
const rounds = [];
let allAccepted = 0;
for (let round = 1; round <= ROUNDS; round++) {
  const samples = [];
  const sampler = setInterval(() => samples.push(rssMb()), 200);
  const heaps = [];
  const heapSampler = setInterval(() => heapMb().then((h) => h && heaps.push(h)), 1000);
  const before = rssMb();
  const heapBefore = await heapMb();
  const started = performance.now();
  let answered = 0;
  const progress = setInterval(() => {
    const s = Math.round((performance.now() - started) / 1000);
    console.error(`smtp-burst: round ${round}, ${s} s, ${answered}/${MESSAGES} answered, RSS ${rssMb()} MB`);
  }, 10_000);
  const replies = await Promise.all(
    Array.from({ length: MESSAGES }, (_, n) =>
      sendOne(`${round}-${n}`, `127.0.0.${1 + (n % 5)}`)
        .catch((err) => `error ${err.message}`)
        .finally(() => answered++),
    ),
  );
  clearInterval(progress);
  const burstS = (performance.now() - started) / 1000;
  const peak = Math.max(before, ...samples);
  clearInterval(heapSampler);
  const heapPeak = Object.fromEntries(
    ['heapUsed', 'heapTotal', 'external'].map((k) => [k, Math.max(0, ...heaps.map((h) => h[k]))]),
  );
  const after = {};
  const heapAfter = {};
  let waited = 0;
  for (const s of [5, 15, 30, 60, 120, 180, 300].filter((x) => x <= AFTER_S)) {
    await sleep((s - waited) * 1000);
    waited = s;
    after[`${s}s`] = rssMb();
    heapAfter[`${s}s`] = await heapMb();
  }
  clearInterval(sampler);
  const accepted = replies.filter((r) => r.startsWith('250')).length;
  allAccepted += accepted;
  rounds.push({
    round,
    accepted,
    refused: replies.filter((r) => !r.startsWith('250')).slice(0, 5),
    burstSeconds: Math.round(burstS * 10) / 10,
    rssMb: { before, peak, ...after },
    heapMb: { before: heapBefore, peak: heapPeak, ...heapAfter },
  });
  console.log(
    `smtp-burst: round ${round}: ${accepted}/${MESSAGES} × ${(BYTES / 1e6).toFixed(1)} MB accepted in ${rounds.at(-1).burstSeconds} s; RSS idle ${idle} MB, before ${before} MB, peak ${peak} MB, ${Object.entries(
      after,
    )
      .map(([k, v]) => `+${k} ${v} MB`)
      .join(', ')}`,
  );
}
const summary = {
  database: process.env.DATABASE_URL ? 'postgresql' : 'pglite',
  messages: MESSAGES,
  bodyBytes: body.length,
  idleRssMb: idle,
  rounds,
  load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
};
console.log(JSON.stringify(summary));
process.exit(allAccepted === MESSAGES * ROUNDS ? 0 : 1);
