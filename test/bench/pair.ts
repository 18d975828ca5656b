/**
 * Two builds of the service side by side, for before/after pairs on a shared machine: one PostgreSQL database, one
 * seed, the bare server (test/bench/bare-server.ts), and a service started from each checkout's `dist/` (each
 * checkout built first, `npm run build`), all running at once. The read scenarios' windows then alternate
 * before → after → bare (the order rotating each round), so a change in machine load hits every side alike; per
 * side it prints the median req/s and the server's CPU per request (user + system of the process, /proc), and the
 * ratios after ÷ before and side ÷ bare.
 *
 * Usage: `TEST_DATABASE_URL=postgres://… npx tsx test/bench/pair.ts <before checkout> <after checkout>
 * [--only rest-brand,gql-brand] [--window 3] [--rounds 4] [--hold]`. With `PAIR_CPU_PROF_DIR=<dir>` both services and
 * the bare server run with `node --cpu-prof` (profiles `<dir>/before`, `<dir>/after`, `<dir>/bare`, written when
 * they stop); `PAIR_AFTER_NODE_ARGS` adds node flags to the after side only; `--hold` starts everything, prints the
 * key, brand id and each side's URL and pid as one JSON line, and waits for SIGINT/SIGTERM (strace/perf by hand).
 * Loopback only; every loop is bounded but `--hold`'s wait.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import {
  builtServiceEnv,
  type Child,
  cpuMs,
  freePort,
  jsonResult,
  killAllChildren,
  median,
  readScenarios,
  seedBrands,
  startChild,
  tsNode,
  waitHttp,
} from './lib.js';
import type { LoadResult, LoadSpec } from './load.js';

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: 'string', default: 'rest-brand,gql-brand,rest-list,gql-list' },
    window: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '4' },
    // Start everything, print the sides' URLs, pids, the key and the brand id, and wait for SIGINT/SIGTERM (for
    // strace/perf by hand).
    hold: { type: 'boolean', default: false },
  },
});
const [beforeDir, afterDir] = positionals.map((p) => path.resolve(p));
if (!beforeDir || !afterDir) throw new Error('usage: pair.ts <before checkout> <after checkout> [--only …]');
const only = new Set(opts.only!.split(','));
const WINDOW_S = Number(opts.window);
const ROUNDS = Number(opts.rounds);
const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const admin = new pg.Client({ connectionString: base });
await admin.connect();
const dbName = `switchboard_pair_${randomBytes(4).toString('hex')}`;
await admin.query(`CREATE DATABASE "${dbName}"`);
const u = new URL(base);
u.pathname = `/${dbName}`;
const dbUrl = u.toString();
const env = { DATABASE_URL: dbUrl, DATA_DIR: path.join(mkdtempSync(path.join(tmpdir(), 'switchboard-pair-')), 'd') };

const children: Child[] = [];
try {
  const accounts = await jsonResult<Record<string, { accountId: string; apiKey: string }>>(
    startChild('seed', tsNode('test/bench/seed.ts', JSON.stringify({ names: ['read'] })), { env }),
    120_000,
  );
  const key = accounts.read!.apiKey;
  const secretsKey = randomBytes(32).toString('hex');
  const startService = async (name: string, dir: string) => {
    const port = await freePort();
    const prof = process.env.PAIR_CPU_PROF_DIR;
    const child = startChild(
      name,
      [
        process.execPath,
        ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${path.join(prof, name)}`] : []),
        // PAIR_AFTER_NODE_ARGS: node flags for the "after" side only (e.g. to try a runtime flag on one build).
        ...(name === 'after' ? (process.env.PAIR_AFTER_NODE_ARGS ?? '').split(' ').filter(Boolean) : []),
        '--enable-source-maps',
        path.join(dir, 'dist/main.js'),
      ],
      {
        cwd: dir,
        env: builtServiceEnv(env, port, secretsKey),
      },
    );
    children.push(child);
    await waitHttp(`http://127.0.0.1:${port}/healthz`, 60_000, child);
    return { name, child, url: `http://127.0.0.1:${port}` };
  };
  const before = await startService('before', beforeDir);
  const after = await startService('after', afterDir);
  const prof = process.env.PAIR_CPU_PROF_DIR;
  const bareArgv = tsNode('test/bench/bare-server.ts');
  if (prof) bareArgv.splice(1, 0, '--cpu-prof', `--cpu-prof-dir=${path.join(prof, 'bare')}`);
  const bareChild = startChild('bare', bareArgv, {
    env: {
      PORT: String(await freePort()),
      DATABASE_URL: dbUrl,
      BARE_KEYS: JSON.stringify({ [key]: accounts.read!.accountId }),
    },
  });
  children.push(bareChild);
  const barePort = await new Promise<number>((resolve) => {
    const t = setInterval(() => {
      const m = /listening (\d+)/.exec(bareChild.output());
      if (m) {
        clearInterval(t);
        resolve(Number(m[1]));
      }
    }, 50);
  });
  const bare = { name: 'bare', child: bareChild, url: `http://127.0.0.1:${barePort}` };
  const id = (await seedBrands(after.url, key, 60))[7]!;
  const scenarios = readScenarios(id).filter((s) => only.has(s.name));
  const sides = [before, after, bare];
  if (opts.hold) {
    process.stdout.write(
      `${JSON.stringify({ key, id, sides: sides.map((x) => ({ name: x.name, url: x.url, pid: x.child.pid })) })}\n`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    scenarios.length = 0;
  }
  const window = async (side: (typeof sides)[number], s: (typeof scenarios)[number], seconds: number) => {
    const spec: LoadSpec = {
      url: side.url,
      method: s.method,
      path: s.path,
      body: s.body,
      headersPerClient: [{ authorization: `Bearer ${key}` }],
      connections: 10,
      seconds,
    };
    const cpu0 = cpuMs(side.child.pid);
    const r = await jsonResult<LoadResult>(
      startChild('load', tsNode('test/bench/load.ts', JSON.stringify(spec))),
      seconds * 1000 + 60_000,
    );
    const cpu = cpuMs(side.child.pid) - cpu0;
    if (r.ok !== r.requests) throw new Error(`${side.name} ${s.name}: ${r.requests - r.ok} answers not 2xx`);
    return { rps: r.ok / seconds, cpuUs: (cpu * 1000) / r.ok };
  };
  process.stdout.write(
    `pair: pids before ${before.child.pid}, after ${after.child.pid}, bare ${bareChild.pid}; load ${loadavg().map((l) => l.toFixed(2))}\n`,
  );
  for (const s of scenarios) {
    // Same bytes on both builds (headers may differ by date and request id only).
    const texts = await Promise.all(
      [before, after].map(async (side) => {
        const r = await fetch(`${side.url}${s.path}`, {
          method: s.method,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: s.body,
        });
        return r.text();
      }),
    );
    if (texts[0] !== texts[1]) process.stdout.write(`  ${s.name}: the two builds answer different bytes\n`);
    for (const side of sides) await window(side, s, 1);
    const got = new Map<string, { rps: number; cpuUs: number }[]>(sides.map((x) => [x.name, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(k + r) % sides.length]!;
        got.get(side.name)!.push(await window(side, s, WINDOW_S));
      }
    }
    const m = (n: string, f: 'rps' | 'cpuUs') => median(got.get(n)!.map((w) => w[f]));
    const ratio = (a: string, b: string) => median(got.get(a)!.map((w, i) => w.rps / got.get(b)![i]!.rps));
    process.stdout.write(
      `  ${s.name.padEnd(10)} before ${m('before', 'rps').toFixed(0)}/s ${m('before', 'cpuUs').toFixed(0)} µs | ` +
        `after ${m('after', 'rps').toFixed(0)}/s ${m('after', 'cpuUs').toFixed(0)} µs | ` +
        `bare ${m('bare', 'rps').toFixed(0)}/s ${m('bare', 'cpuUs').toFixed(0)} µs | ` +
        `after/before ${ratio('after', 'before').toFixed(2)}x, CPU ${(m('after', 'cpuUs') / m('before', 'cpuUs')).toFixed(2)}; ` +
        `vs bare: before ${ratio('before', 'bare').toFixed(2)}x, after ${ratio('after', 'bare').toFixed(2)}x ` +
        `(per-round after/bare ${got
          .get('after')!
          .map((w, i) => (w.rps / got.get('bare')![i]!.rps).toFixed(2))
          .join(' ')})\n`,
    );
  }
  process.stdout.write(`pair: load after ${loadavg().map((l) => l.toFixed(2))}\n`);
} finally {
  for (const c of children) await c.stop(10_000);
  killAllChildren();
  await admin.query(`DROP DATABASE "${dbName}" WITH (FORCE)`);
  await admin.end();
}
