import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { runEntry, type Spawned } from '../helpers/process.js';

/**
 * Pieces of the fault tests (issue 13, `npm run test:faults`): service instances as child processes running the
 * service entry (src/main.ts) that a test kills with SIGKILL, a Redis server of the test's own on a free port, a
 * TCP front that spreads connections over the live instances (as a load balancer would), and the bounded
 * publishing load. Waits are on events (a log line, a port answering) with generous bounds, never on speed.
 */

/** A free TCP port on 127.0.0.1 (bound to 0, read, released). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves when something accepts TCP connections on `port` (rejects after `timeoutMs`). */
export async function portOpen(port: number, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listens on ${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A Redis server the test owns: `redis-server --port N --save '' --appendonly no`. */
export interface OwnRedis {
  port: number;
  url: string;
  /** SIGKILL, then wait for the exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: it keeps nothing). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await portOpen(port);
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  return { port, url: `redis://127.0.0.1:${port}`, kill, restart: start, stop: kill };
}

/** One service instance: `src/main.ts` as a child process. */
export interface Instance {
  name: string;
  proc: Spawned;
  port: number;
  url: string;
}

/** Starts `src/main.ts` with `env` and waits for its "Switchboard listening" line. */
export async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
  const proc = runEntry('main.ts', [], { PORT: '0', LOG_LEVEL: 'info', ...env });
  const m = await proc.waitFor(/"address":"http:\/\/127\.0\.0\.1:(\d+)"[^\n]*Switchboard listening/, 180_000);
  const port = Number(m[1]);
  return { name, proc, port, url: `http://127.0.0.1:${port}` };
}

/** SIGKILL an instance and wait for it to be gone. */
export async function killInstance(i: Instance): Promise<void> {
  if (i.proc.child.exitCode !== null || i.proc.child.signalCode !== null) return;
  i.proc.child.kill('SIGKILL');
  await i.proc.exited;
}

/** A TCP front (a load balancer): each connection goes to the next live backend, round robin. */
export interface Front {
  url: string;
  setBackends(ports: number[]): void;
  close(): Promise<void>;
}

export async function startFront(): Promise<Front> {
  let backends: number[] = [];
  let next = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (backends.length === 0) return client.destroy();
    const port = backends[next++ % backends.length]!;
    const up = net.connect(port, '127.0.0.1');
    sockets.add(up);
    up.on('close', () => {
      sockets.delete(up);
      client.destroy();
    });
    client.on('close', () => up.destroy());
    up.on('error', () => client.destroy());
    client.on('error', () => up.destroy());
    client.pipe(up).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setBackends: (ports) => {
      backends = [...ports];
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What a publishing run accepted (2xx with an id) and how the rest failed. */
export interface LoadResult {
  accepted: { id: string; n: number }[];
  refused: number;
  failed: number;
}

/**
 * Publishes `total` events (`sms.sent`, payload `{n, run}`) through `url` with `concurrency` requests in flight,
 * calling `at(k)` after the k-th answer so the test can inject faults at fixed points of the run.
 */
export async function publishLoad(
  url: string,
  apiKey: string,
  opts: { total: number; concurrency: number; run: string; at?: (k: number) => Promise<void> | void },
): Promise<LoadResult> {
  const result: LoadResult = { accepted: [], refused: 0, failed: 0 };
  let issued = 0;
  let answered = 0;
  const worker = async () => {
    while (issued < opts.total) {
      const n = issued++;
      try {
        const res = await fetch(`${url}/api/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', connection: 'close' },
          body: JSON.stringify({ eventType: 'sms.sent', payload: { n, run: opts.run } }),
          signal: AbortSignal.timeout(60_000),
        });
        const body = (await res.json().catch(() => ({}))) as { id?: string };
        if (res.status >= 200 && res.status < 300 && body.id) result.accepted.push({ id: body.id, n });
        else result.refused++;
      } catch {
        result.failed++; // connection cut by a kill: not accepted, so nothing is promised about it
      }
      answered++;
      await opts.at?.(answered);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  return result;
}

/** Every event id in the account's history (GET /api/events/history, paged). */
export async function historyIds(url: string, apiKey: string): Promise<string[]> {
  const ids: string[] = [];
  let after: string | undefined;
  for (;;) {
    const res = await fetch(`${url}/api/events/history?limit=1000${after ? `&after=${after}` : ''}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const page = (await res.json()) as { events: { id: string }[]; hasMore: boolean; nextCursor: string | null };
    ids.push(...page.events.map((e) => e.id));
    if (!page.hasMore || !page.nextCursor) return ids;
    after = page.nextCursor;
  }
}

/** Polls `check` until it returns true (every 250 ms, up to `timeoutMs`); returns whether it did. */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Appends one run's figures to `FAULTS_REPORT` (a JSON-lines file) when set, for docs/reliability.md. */
export function report(figures: Record<string, unknown>): void {
  console.log(`FAULTS ${JSON.stringify(figures)}`);
  if (process.env.FAULTS_REPORT)
    writeFileSync(process.env.FAULTS_REPORT, `${JSON.stringify(figures)}\n`, { flag: 'a' });
}
