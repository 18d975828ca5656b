/**
 * What a read costs on the wire and in the kernel, independent of the machine's load: the bare server and the
 * `dist/` build of each given checkout on one fresh PostgreSQL database; for each read scenario, prints the status
 * line, headers and body size of each side's answer, then (after `warm` requests) attaches `strace -c -f` to each
 * server for `n` requests (10 in flight over keep-alive connections, as the bench's load) and prints the system
 * calls per request by name.
 *
 * Usage: `TEST_DATABASE_URL=postgres://… npx tsx test/bench/wire.ts <checkout> [<checkout>…]
 * [--only rest-brand,gql-brand] [--warm 3000] [--n 2000]`; each checkout built first. Needs strace; loopback only.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import * as lib from './lib.js';

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: 'string', default: 'rest-brand,gql-brand' },
    warm: { type: 'string', default: '3000' },
    n: { type: 'string', default: '2000' },
    count: { type: 'boolean', default: false },
  },
});
const checkouts = positionals.map((p) => path.resolve(p));
if (checkouts.length === 0) throw new Error('usage: wire.ts <checkout> [<checkout>…] [--only …]');
const only = new Set(opts.only!.split(','));
const WARM = Number(opts.warm);
const N = Number(opts.n);
const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const outDir = mkdtempSync(path.join(tmpdir(), 'switchboard-wire-'));
/** With --count: every server preloads wire-count.mjs (promises and async resources by type, instead of strace). */
const countEnv = opts.count
  ? { NODE_OPTIONS: `--import ${path.join(import.meta.dirname, 'wire-count.mjs')}`, WIRE_COUNT_DIR: outDir }
  : {};

/** The counts of wire-count.mjs in `pid` so far, with the kernel's minor and major page faults of the process. */
async function counted(pid: number): Promise<Record<string, number>> {
  // /proc/<pid>/stat: after the command's closing parenthesis, field 10 is minflt and 12 majflt (proc(5)).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const faults = { 'page-faults-minor': Number(fields[7]), 'page-faults-major': Number(fields[9]) };
  const file = path.join(outDir, `${pid}.json`);
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 100 && !existsSync(file); i++) await lib.sleep(50);
  return { ...JSON.parse(readFileSync(file, 'utf8')), ...faults };
}

/** strace -c -f attached to `pid` while `during` runs; returns calls per syscall name. */
async function straced(pid: number, file: string, during: () => Promise<void>): Promise<Map<string, number>> {
  const st = spawn('strace', ['-c', '-f', '-o', file, '-p', String(pid)], { stdio: 'ignore' });
  await lib.sleep(1500);
  await during();
  st.kill('SIGINT');
  await new Promise((r) => st.once('exit', r));
  const calls = new Map<string, number>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line);
    if (m && m[2] !== 'total') calls.set(m[2]!, Number(m[1]));
  }
  return calls;
}

const admin = new pg.Client({ connectionString: base });
await admin.connect();
const dbName = `switchboard_wire_${randomBytes(4).toString('hex')}`;
await admin.query(`CREATE DATABASE "${dbName}"`);
const u = new URL(base);
u.pathname = `/${dbName}`;
const env = {
  DATABASE_URL: u.toString(),
  DATA_DIR: path.join(mkdtempSync(path.join(tmpdir(), 'switchboard-wire-')), 'd'),
};
const children: lib.Child[] = [];
try {
  const accounts = await lib.jsonResult<Record<string, { accountId: string; apiKey: string }>>(
    lib.startChild('seed', lib.tsNode('test/bench/seed.ts', JSON.stringify({ names: ['read'] })), { env }),
    120_000,
  );
  const key = accounts.read!.apiKey;
  const secretsKey = randomBytes(32).toString('hex');
  const sides: { name: string; child: lib.Child; url: string }[] = [];
  for (const [i, dir] of checkouts.entries()) {
    const port = await lib.freePort();
    const child = lib.startChild(`svc${i}`, [process.execPath, path.join(dir, 'dist/main.js')], {
      cwd: dir,
      env: { ...lib.builtServiceEnv(env, port, secretsKey), ...countEnv },
    });
    children.push(child);
    sides.push({ name: dir, child, url: `http://127.0.0.1:${port}` });
  }
  const barePort = await lib.freePort();
  const bare = lib.startChild('bare', lib.tsNode('test/bench/bare-server.ts'), {
    env: {
      PORT: String(barePort),
      DATABASE_URL: env.DATABASE_URL,
      BARE_KEYS: JSON.stringify({ [key]: accounts.read!.accountId }),
      ...countEnv,
    },
  });
  children.push(bare);
  for (const s of sides) await lib.waitHttp(`${s.url}/healthz`, 120_000, s.child);
  await lib.waitHttp(`http://127.0.0.1:${barePort}/compliance/brands`, 120_000, bare, 401);
  sides.push({ name: 'bare', child: bare, url: `http://127.0.0.1:${barePort}` });
  const id = (await lib.seedBrands(sides[0]!.url, key, 20))[7]!;
  for (const s of lib.readScenarios(id).filter((x) => only.has(x.name))) {
    for (const side of sides) {
      const agent = new Agent({ keepAlive: true });
      const r = await lib.readOnce(agent, side.url, s, key);
      agent.destroy();
      process.stdout.write(`\n== ${s.name} ${side.name}: ${r.bytes} body bytes\n  ${r.headers.join('\n  ')}\n`);
      await lib.driveReads(side.url, s, key, WARM);
      if (opts.count) {
        const before = await counted(side.child.pid);
        await lib.driveReads(side.url, s, key, N);
        const after = await counted(side.child.pid);
        const per = Object.keys(after)
          .map((k) => [k, (after[k]! - (before[k] ?? 0)) / N] as const)
          .filter(([, v]) => v > 0)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k} ${k.startsWith('gc') ? (v * 1000).toFixed(3) : v.toFixed(2)}`);
        process.stdout.write(`  created per request (gc: per 1,000 requests): ${per.join(', ')}\n`);
        continue;
      }
      const calls = await straced(side.child.pid, path.join(outDir, `${s.name}-${path.basename(side.name)}`), () =>
        lib.driveReads(side.url, s, key, N),
      );
      const per = [...calls].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${(v / N).toFixed(2)}`);
      process.stdout.write(`  syscalls/request: ${per.join(', ')}\n`);
    }
  }
} finally {
  for (const c of children) await c.stop(10_000);
  lib.killAllChildren();
  await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  await admin.end();
}
