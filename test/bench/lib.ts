/**
 * Shared helpers of `npm run bench`: child processes, free ports, /proc readings and percentiles. Everything here
 * runs in the orchestrator process (test/bench/run.ts), never inside a measured server.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (two levels above this file). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Kernel clock ticks per second of /proc/<pid>/stat utime/stime (USER_HZ; 100 on Linux x86-64 and arm64). */
const CLK_TCK = 100;

/** A port free on 127.0.0.1 right now (bind to 0, read, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Server CPU time (user + system, every thread) of `pid` so far, in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Field 2 (comm) may contain spaces; the fields after its closing parenthesis are space-separated.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / CLK_TCK;
}

/**
 * CPU time of every live thread of `pid` so far, in ms with µs resolution: the sum of the first field of
 * /proc/<pid>/task/<tid>/schedstat (the scheduler's own run time, ns). {@link cpuMs} counts in 10 ms ticks, too coarse
 * for one replay of a few ms; this one is exact per window. A thread that has exited is no longer counted (Node's
 * and PostgreSQL's threads live as long as the process); throws for a process that has exited, as {@link cpuMs}.
 */
export function cpuMsExact(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns / 1e6;
}

/** Resident set size of `pid`, in bytes, from /proc/<pid>/status (VmRSS). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * Samples the RSS ({@link rssBytes}) of each of `pids` now and then every `everyMs` until `stop()`, which returns the
 * median of each pid's samples (bytes, in the order of `pids`). The SSE scenario reads both servers this way over
 * the same idle window, so a collection that falls before one reading and not the other moves neither side much.
 */
export function rssSampler(pids: readonly number[], everyMs = 1_000): { stop(): number[] } {
  const samples = pids.map(() => [] as number[]);
  const take = () => {
    for (const [i, pid] of pids.entries()) samples[i]!.push(rssBytes(pid));
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return samples.map((xs) => median(xs));
    },
  };
}

/** Percentile `p` (0–100) of `values` (nearest rank); NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Median of `values`. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Wall-clock time in ms with sub-ms precision, comparable across processes of this machine. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A child process of the bench, with its captured output (the last 20 kB of stdout+stderr, for error reports). */
export interface Child {
  proc: ChildProcess;
  pid: number;
  name: string;
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

const children = new Set<Child>();

/**
 * Starts `node --import tsx <script> ...args` (or another command) as a child with its own `ulimit -n` raised to
 * the hard limit (10,000 SSE sockets need more than the default 1,024 descriptors).
 */
export function startChild(
  name: string,
  argv: string[],
  opts: { env?: Record<string, string | undefined>; ipc?: boolean; cwd?: string } = {},
): Child {
  // `exec` keeps the pid: the shell becomes node, so /proc/<pid> is the server itself.
  const cmd = `ulimit -n $(ulimit -Hn) 2>/dev/null; exec ${argv.map(shellQuote).join(' ')}`;
  const proc = spawn('bash', ['-c', cmd], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, ...opts.env },
    stdio: opts.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString('utf8')).slice(-20_000);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const child: Child = {
    proc,
    pid: proc.pid!,
    name,
    output: () => out,
    exited,
    async stop(graceMs = 5_000) {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      children.delete(child);
    },
  };
  children.add(child);
  void exited.then(() => children.delete(child));
  return child;
}

/** Kills every child still running (on exit or error of the orchestrator). */
export function killAllChildren(): void {
  for (const c of children) {
    try {
      c.proc.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

/** `node --import tsx <file>` argv for a TypeScript entry point. */
export function tsNode(file: string, ...args: string[]): string[] {
  return [process.execPath, '--import', 'tsx', file, ...args];
}

/** Polls `url` until it answers `status` (default 200), at most `timeoutMs`; returns ms waited. */
export async function waitHttp(url: string, timeoutMs: number, child?: Child, status = 200): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (child && child.proc.exitCode !== null) {
      throw new Error(`${child.name} exited (${child.proc.exitCode}) before ${url} answered:\n${child.output()}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === status) return performance.now() - started;
    } catch {
      // not listening yet
    }
    if (performance.now() - started > timeoutMs) {
      throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms${child ? `:\n${child.output()}` : ''}`);
    }
    await sleep(25);
  }
}

/** Reads one JSON line a child prints on stdout (the result of a load or client process). */
export function jsonResult<T>(child: Child, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => {
      void child.stop(500);
      reject(new Error(`${child.name}: no result within ${timeoutMs} ms\n${child.output()}`));
    }, timeoutMs);
    child.proc.stdout!.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      // Only a whole line (a large result arrives in several chunks).
      const line = buf
        .split('\n')
        .slice(0, -1)
        .find((l) => l.startsWith('{"result"'));
      if (line) {
        clearTimeout(timer);
        // A bad line rejects (the caller's finally stops the children); thrown here it would end the bench at once.
        try {
          resolve((JSON.parse(line) as { result: T }).result);
        } catch (err) {
          reject(new Error(`${child.name}: unreadable result line: ${(err as Error).message}`));
        }
      }
    });
    void child.exited.then((code) => {
      clearTimeout(timer);
      if (!buf.includes('{"result"'))
        reject(new Error(`${child.name} exited (${code}) without a result:\n${child.output()}`));
    });
  });
}

/** Prints one result line for the parent (see {@link jsonResult}). */
export function printResult(result: unknown): void {
  process.stdout.write(`${JSON.stringify({ result })}\n`);
}

/**
 * The environment of a built service (`dist/main.js` of a checkout) as the paired benches run it (pair.ts,
 * callgrind.ts): production mode on loopback port `port`, no SMTP listeners, warn-level logs, no bootstrap account,
 * no rate limit, and `npm start`'s allocator settings. `base` carries the database settings.
 */
export function builtServiceEnv(base: NodeJS.ProcessEnv, port: number, secretsKey: string): NodeJS.ProcessEnv {
  return {
    ...base,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    SMTP_PORT: '-1',
    SMTP_SUBMISSION_PORT: '-1',
    LOG_LEVEL: 'warn',
    BOOTSTRAP_ACCOUNT: 'false',
    SECRETS_KEY: secretsKey,
    RATE_LIMIT_MAX: '0',
    MALLOC_ARENA_MAX: '2',
    MALLOC_MMAP_THRESHOLD_: '131072',
  };
}

/**
 * Registers `n` brands through the service's REST API at `url` (`POST /compliance/brands`, key `key`) and returns
 * their ids sorted: the paired benches' read scenarios read one of them. @throws when a registration is not 201.
 */
export async function seedBrands(url: string, key: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await fetch(`${url}/compliance/brands`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: `Bench Brand ${i} LLC`,
        ein: `12-${3_000_000 + i}`,
        vertical: 'RETAIL',
        entityType: 'PRIVATE_PROFIT',
      }),
    });
    if (r.status !== 201) throw new Error(`seed brand: ${r.status} ${await r.text()}`);
    ids.push(((await r.json()) as { id: string }).id);
  }
  return ids.sort();
}

/** One read request of the paired benches: a name (as `npm run bench` names it), method, path and JSON body. */
export interface ReadScenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

/** The paired benches' read scenarios for brand `id`, as `npm run bench` sends them (REST and GraphQL, one and a page). */
export function readScenarios(id: string): ReadScenario[] {
  const FIELDS =
    'id name ein vertical entityType country website email phone stockSymbol stockExchange status identityStatus createdAt updatedAt';
  return [
    { name: 'rest-brand', method: 'GET', path: `/compliance/brands/${id}` },
    { name: 'rest-list', method: 'GET', path: '/compliance/brands?limit=20' },
    {
      name: 'gql-brand',
      method: 'POST',
      path: '/graphql',
      body: JSON.stringify({ query: `query B($id: ID!) { brand(id: $id) { ${FIELDS} } }`, variables: { id } }),
    },
    {
      name: 'gql-list',
      method: 'POST',
      path: '/graphql',
      body: JSON.stringify({
        query: `query L($first: Int) { brands(first: $first) { edges { cursor node { ${FIELDS} } } pageInfo { hasNextPage endCursor } } }`,
        variables: { first: 20 },
      }),
    },
  ];
}

/** One answer of {@link readOnce}: status, the raw header lines (`Name: value`, in the order sent) and body bytes. */
export interface ReadAnswer {
  status: number;
  headers: string[];
  bytes: number;
}

/**
 * One request of read scenario `s` at `url` with API key `key` over `agent` (keep-alive). @throws on an answer that
 * is not 200, a socket error, or 120 s without an answer.
 */
export function readOnce(agent: Agent, url: string, s: ReadScenario, key: string): Promise<ReadAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(s.path, url),
      {
        agent,
        method: s.method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(s.body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s.body) } : {}),
        },
        timeout: 120_000,
      },
      (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          bytes += c.length;
        });
        res.on('end', () => {
          const headers: string[] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2)
            headers.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
          if (res.statusCode === 200) resolve({ status: res.statusCode, headers, bytes });
          else reject(new Error(`${s.name}: answered ${res.statusCode}`));
        });
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end(s.body);
  });
}

/** Runs `count` requests of `s` at `url`, 10 in flight on keep-alive connections; @throws as {@link readOnce}. */
export async function driveReads(url: string, s: ReadScenario, key: string, count: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 10 });
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await readOnce(agent, url, s, key);
    }
  };
  try {
    await Promise.all(Array.from({ length: 10 }, worker));
  } finally {
    agent.destroy();
  }
}
