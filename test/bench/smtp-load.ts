/**
 * SMTP load for `npm run bench` (the smtp-inbound scenario), called by test/bench/load.ts in its own process:
 * `connections` SMTP sessions (nodemailer, pooled, one message after another on each) send small messages to
 * 127.0.0.1:`port` for `seconds`. A message counts as served when the server answered 250 after DATA. With `dkim`
 * (the mail-send scenario's bare nodemailer pool) every message is DKIM-signed (RFC 6376) as the service signs its own.
 */
import nodemailer from 'nodemailer';
import type { LoadResult } from './load.js';

/** What the SMTP load sends. */
export interface SmtpLoadSpec {
  port: number;
  from: string;
  to: string;
  connections: number;
  seconds: number;
  /** DKIM-sign every message with this key (the mail-send scenario's bare side signs like the service does). */
  dkim?: { domainName: string; keySelector: string; privateKey: string };
}

/**
 * Runs the load; latency in ms per message (MAIL FROM to the answer after DATA, on an open session). `cpuMs` is this
 * process's own CPU time (user + system, ms) over the window: with `dkim` the process IS the bare nodemailer pool of
 * the mail-send scenario (compose, sign, SMTP client), so that is the bare side's CPU per message.
 */
export async function smtpLoad(spec: SmtpLoadSpec): Promise<LoadResult> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: spec.port,
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: spec.connections,
    maxMessages: Number.POSITIVE_INFINITY,
    ...(spec.dkim ? { dkim: spec.dkim } : {}),
  });
  const latencies: number[] = [];
  const codes: Record<string, number> = {};
  let errors = 0;
  let n = 0;
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const deadline = started + spec.seconds * 1000;
  await Promise.all(
    Array.from({ length: spec.connections }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          await transport.sendMail({
            from: spec.from,
            to: spec.to,
            subject: `Bench ${n++}`,
            text: 'Hello, when does order 881 ship?',
          });
          latencies.push(performance.now() - t0);
          codes['250'] = (codes['250'] ?? 0) + 1;
        } catch (err) {
          const code = String((err as { responseCode?: number }).responseCode ?? 'error');
          codes[code] = (codes[code] ?? 0) + 1;
          errors++;
        }
      }
    }),
  );
  transport.close();
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  return {
    requests: latencies.length + errors,
    rps: latencies.length / spec.seconds,
    p50: at(50),
    p99: at(99),
    non2xx: errors,
    errors: 0,
    seconds,
    ok: latencies.length,
    codes,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}
