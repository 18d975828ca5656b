/**
 * Load generator of `npm run bench`, run as its own process (never inside a measured server): one autocannon run
 * described by the JSON in argv[2], printed back as one `{"result": …}` line. Client i uses headers
 * `headersPerClient[i % n]`, so 10 connections can spread over 10 accounts. Bounded by `seconds`.
 */
import autocannon from 'autocannon';
import { printResult } from './lib.js';

/** What one load window sends. */
export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  headersPerClient: Record<string, string>[];
  connections: number;
  seconds: number;
  /** SMTP instead of HTTP (the smtp-inbound scenario; test/bench/smtp-load.ts): port, sender, recipient, body. */
  smtp?: {
    port: number;
    from: string;
    to: string;
    text?: string;
    dkim?: { domainName: string; keySelector: string; privateKey: string };
  };
}

/** What one load window measured (latency in ms). */
export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  seconds: number;
  /** 2xx answers only: the rate counts these, so fast errors never pass for throughput. */
  ok: number;
  /** Answers per HTTP status code. */
  codes: Record<string, number>;
  /**
   * CPU time of the load process itself (ms, user + system) over the window, where the load process is the bare
   * side (the SMTP load with DKIM: the mail-send scenario's bare nodemailer pool). Absent for HTTP loads.
   */
  cpuMs?: number;
}

const spec = JSON.parse(process.argv[2]!) as LoadSpec;
if (spec.smtp) {
  const { smtpLoad } = await import('./smtp-load.js');
  printResult(await smtpLoad({ ...spec.smtp, connections: spec.connections, seconds: spec.seconds }));
  process.exit(0);
}
let next = 0;
const started = performance.now();
const result = await autocannon({
  url: `${spec.url}${spec.path}`,
  connections: spec.connections,
  pipelining: 1,
  duration: spec.seconds,
  method: spec.method,
  body: spec.body,
  setupClient: (client) => {
    const headers = spec.headersPerClient[next++ % spec.headersPerClient.length]!;
    client.setHeaders({ ...headers, ...(spec.body ? { 'content-type': 'application/json' } : {}) });
  },
});
const seconds = (performance.now() - started) / 1000;
const out: LoadResult = {
  requests: result.requests.total,
  rps: result.requests.total / spec.seconds,
  p50: result.latency.p50,
  p99: result.latency.p99,
  non2xx: result.non2xx,
  errors: result.errors + result.timeouts,
  seconds,
  ok: result['2xx'],
  codes: Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, v]) => [code, (v as { count: number }).count]),
  ),
};
printResult(out);
