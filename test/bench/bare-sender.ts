/**
 * The bare signed-POST sender of `npm run bench`: `count` webhook-like POSTs of an event envelope to `url`, each
 * signed like the service (lowercase hex HMAC-SHA256 of the raw body, spec 5.3, plus the Standard Webhooks
 * signature), on one undici Pool with keep-alive, at most `inFlight` at a time. Prints `{ "result": { sent, failed, ms, cpuMs } }`.
 * Input: argv[2] JSON `{ url, count, inFlight, secret }`. Bounded by count and a 60 s timeout per request.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { printResult } from './lib.js';

const { url, count, inFlight, secret } = JSON.parse(process.argv[2]!) as {
  url: string;
  count: number;
  inFlight: number;
  secret: string;
};
const target = new URL(url);
const pool = new Pool(target.origin, { connections: inFlight, keepAliveTimeout: 30_000 });
let next = 0;
let failed = 0;
const started = performance.now();
const cpu0 = process.cpuUsage();

async function worker(): Promise<void> {
  while (next < count) {
    const i = next++;
    const id = randomUUID();
    const body = Buffer.from(
      JSON.stringify({
        id: String(i),
        channel: 'sms',
        eventType: 'sms.delivered',
        payload: { i, from: '+14155550100', to: '+14155550101', status: 'delivered' },
        customerId: 'bare',
        timestamp: new Date().toISOString(),
      }),
    );
    const ts = Math.floor(Date.now() / 1000);
    const res = await pool.request({
      method: 'POST',
      path: target.pathname,
      body,
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
      headers: {
        'content-type': 'application/json',
        'x-bench-id': String(i),
        'x-switchboard-signature': createHmac('sha256', secret).update(body).digest('hex'),
        'webhook-id': id,
        'webhook-timestamp': String(ts),
        'webhook-signature': `v1,${createHmac('sha256', secret).update(`${id}.${ts}.`).update(body).digest('base64')}`,
      },
    });
    await res.body.dump();
    if (res.statusCode >= 300) failed++;
  }
}
await Promise.all(Array.from({ length: inFlight }, worker));
const cpu = process.cpuUsage(cpu0);
// cpuMs: this process's user + system CPU while sending (its start-up excluded).
printResult({ sent: count, failed, ms: performance.now() - started, cpuMs: (cpu.user + cpu.system) / 1000 });
await pool.close();
