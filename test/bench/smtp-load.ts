/**
 * SMTP load for `npm run bench` (the smtp-inbound scenario), called by test/bench/load.ts in its own process:
 * `connections` SMTP sessions (nodemailer, pooled, one message after another on each) send messages to
 * 127.0.0.1:`port` for `seconds`: a one-line body, or `text` (smtp-inbound sends {@link replyOf4KB}, issue 24's
 * 4 KB messages). A message counts as served when the server answered 250 after DATA. With `dkim`
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
  /** The text body; a one-line question when absent. */
  text?: string;
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
            text: spec.text ?? 'Hello, when does order 881 ship?',
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

const WORDS = (
  'order shipment invoice delivery address warehouse customer account payment refund tracking number package ' +
  'schedule monday tuesday friday morning afternoon please thanks could would should confirm update status ' +
  'carrier label return exchange product quantity price discount total balance receipt contact support team ' +
  'the a an of to in for on with at by from and or but not is are was were be been have has had this that these ' +
  'we you they it our your their my me us them again soon today tomorrow week month march april question answer'
).split(' ');

/**
 * A plain-text reply of issue 24's message size: a few lines of answer, an attribution line and the quoted earlier
 * message ("> " lines), wrapped at 72 characters as mail clients send it, with words drawn from a fixed vocabulary
 * by a fixed-seed generator (the same text every run and on both sides). With nodemailer's headers the message on
 * the wire is about 4,130 bytes.
 */
export function replyOf4KB(): string {
  let seed = 881;
  const word = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return WORDS[seed % WORDS.length] as string;
  };
  const paragraph = (chars: number, prefix: string) => {
    const lines: string[] = [];
    let line = prefix;
    let total = 0;
    while (total < chars) {
      const w = word();
      if (line.length + w.length + 1 > 72) {
        lines.push(line);
        total += line.length + 1;
        line = prefix;
      }
      line += (line === prefix ? '' : ' ') + w;
    }
    lines.push(`${line}.`);
    return lines.join('\n');
  };
  return [
    'Hello,',
    '',
    paragraph(760, ''),
    '',
    'Thanks,',
    'Dana',
    '',
    'On Tue, 24 Nov 2026 at 10:02, Support <support@bench.example> wrote:',
    paragraph(1500, '> '),
    '>',
    paragraph(1360, '> '),
    '',
  ].join('\n');
}
