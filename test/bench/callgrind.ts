/**
 * Instructions per request, independent of the machine's load: the bare server and the `dist/` build of each given
 * checkout run under `valgrind --tool=callgrind` (instrumentation off at start) on one fresh PostgreSQL database and
 * seed; for each side and read scenario, `warm` requests run uninstrumented (V8 has compiled and optimised the path
 * by then), then the counters are zeroed, `n` requests run with instrumentation on (10 in flight over keep-alive
 * connections, like the bench's load), and the dump's instruction total (Ir, user space only: the kernel's share of
 * socket writes is not counted) is divided by `n`. A shared 2-core box changes the rate by ±30 % between windows;
 * it does not change these counts (repeat runs agree within ~1 %).
 *
 * Usage: `TEST_DATABASE_URL=postgres://… npx tsx test/bench/callgrind.ts <checkout> [<checkout>…]
 * [--only rest-brand,gql-brand] [--warm 3000] [--n 1000] [--node-args <i>=<flags>…]`; each checkout built first
 * (`npm run build`). `--node-args 1=--experimental-async-context-frame` runs the second checkout's node with those
 * flags (space-separated; repeatable, one per checkout index), so a checkout can be compared with itself. Prints one
 * line per side and scenario: instructions per request and the ratio to the bare server's. `--only smtp-inbound`
 * (issue 24) counts instructions per inbound message instead: each service also runs its SMTP listener with a
 * loopback DNS server that lets 127.0.0.1 send for bench.example (SPF pass, no DMARC record, as `npm run bench`), and
 * each of `--repeats` rounds sends `warm` messages uninstrumented, then `n` instrumented (nodemailer, 10 pooled
 * sessions, the bench's message: issue 24's 4 KB reply, or with `--message short` the 32-character body used until
 * round 12); the count falls over the first few thousand messages (V8 still compiling), so
 * compare the last rounds. No bare side for it (the bare SMTP server runs under tsx, not a build). Needs valgrind
 * (`apt-get install valgrind`); loopback only; every wait is bounded.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { startDnsServer } from '../helpers/dns-server.js';
import {
  builtServiceEnv,
  type Child,
  driveReads,
  freePort,
  jsonResult,
  killAllChildren,
  type ReadScenario,
  readScenarios,
  seedBrands,
  startChild,
  tsNode,
  waitHttp,
} from './lib.js';
import { replyOf4KB } from './smtp-load.js';

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: 'string', default: 'rest-brand,gql-brand' },
    warm: { type: 'string', default: '3000' },
    n: { type: 'string', default: '1000' },
    repeats: { type: 'string', default: '1' },
    // smtp-inbound's message: the bench's (issue 24's 4 KB reply, smtp-load.ts) or the 32-character one used until
    // round 12 (`short`), whose counts earlier sections of docs/performance.md give.
    message: { type: 'string', default: '4kb' },
    'node-args': { type: 'string', multiple: true, default: [] },
  },
});
const checkouts = positionals.map((p) => path.resolve(p));
if (checkouts.length === 0) throw new Error('usage: callgrind.ts <checkout> [<checkout>…] [--only …]');
const only = new Set(opts.only!.split(','));
const WARM = Number(opts.warm);
const N = Number(opts.n);
const MESSAGE_TEXT = opts.message === 'short' ? 'Hello, when does order 881 ship?' : replyOf4KB();
const REPEATS = Number(opts.repeats);
const nodeArgs = new Map<number, string[]>();
for (const spec of opts['node-args']!) {
  const at = spec.indexOf('=');
  if (at < 1) throw new Error(`--node-args wants <index>=<flags>, not ${spec}`);
  nodeArgs.set(
    Number(spec.slice(0, at)),
    spec
      .slice(at + 1)
      .split(' ')
      .filter(Boolean),
  );
}
const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const outDir = mkdtempSync(path.join(tmpdir(), 'switchboard-callgrind-'));

const admin = new pg.Client({ connectionString: base });
await admin.connect();
const dbName = `switchboard_cg_${randomBytes(4).toString('hex')}`;
await admin.query(`CREATE DATABASE "${dbName}"`);
const u = new URL(base);
u.pathname = `/${dbName}`;
const dbUrl = u.toString();
const env = { DATABASE_URL: dbUrl, DATA_DIR: path.join(mkdtempSync(path.join(tmpdir(), 'switchboard-cg-')), 'd') };

/** valgrind argv in front of a node command: callgrind, instrumentation off until asked, JIT code re-read. */
const valgrind = (name: string, argv: string[]) => [
  'valgrind',
  '--tool=callgrind',
  '--instr-atstart=no',
  '--smc-check=all-non-file',
  // On Node 22 dist/main.js re-executes itself (src/infra/async-context-frame.ts): follow it into the new image.
  '--trace-children=yes',
  `--callgrind-out-file=${path.join(outDir, `${name}.%p`)}`,
  ...argv,
];

/** Sends `count` messages to `to` over `transport` (10 pooled sessions); throws on any message not answered 250. */
async function sendMessages(
  transport: ReturnType<typeof nodemailer.createTransport>,
  to: string,
  count: number,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await transport.sendMail({
        from: 'customer@bench.example',
        to,
        subject: `Bench ${next}`,
        text: MESSAGE_TEXT,
      });
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
}

/**
 * Total Ir of dump number `n` of `pid` (callgrind names dumps `<file>.<n>`), waiting up to 60 s for it: a process
 * blocked in a system call takes the dump request when it next runs, so `wake` is called while waiting.
 */
async function dumpIr(name: string, pid: number, n: number, wake: () => Promise<void>): Promise<number> {
  const file = path.join(outDir, `${name}.${pid}.${n}`);
  for (let i = 0; i < 600; i++) {
    if (existsSync(file)) {
      const m = /^totals: (\d+)/m.exec(readFileSync(file, 'utf8'));
      if (m) return Number(m[1]);
    }
    await wake().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no dump ${file} after 60 s`);
}

/**
 * callgrind_control on a side. Valgrind names its control pipes after the HOST variable of the process it runs, and
 * the services run with HOST=127.0.0.1 (their listen address), so the control command gets the same HOST.
 */
function control(side: { name: string; child: Child }, ...args: string[]): void {
  const { HOST: _host, ...rest } = process.env;
  const env = side.name === 'bare' ? rest : { ...rest, HOST: '127.0.0.1' };
  execFileSync('callgrind_control', [...args, String(side.child.pid)], { stdio: 'ignore', env, timeout: 60_000 });
}

type Scenario = ReadScenario;
const children: Child[] = [];
const smtpInbound = only.has('smtp-inbound');
const dns = smtpInbound ? await startDnsServer({ 'bench.example': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] } }) : undefined;
try {
  const accounts = await jsonResult<Record<string, { accountId: string; apiKey: string }>>(
    startChild('seed', tsNode('test/bench/seed.ts', JSON.stringify({ names: ['read'] })), { env }),
    120_000,
  );
  const key = accounts.read!.apiKey;
  const secretsKey = randomBytes(32).toString('hex');
  const sides: { name: string; child: Child; url: string; smtp?: number }[] = [];
  const barePort = await freePort();
  const bareChild = startChild('bare', valgrind('bare', tsNode('test/bench/bare-server.ts')), {
    env: {
      PORT: String(barePort),
      DATABASE_URL: dbUrl,
      BARE_KEYS: JSON.stringify({ [key]: accounts.read!.accountId }),
    },
  });
  children.push(bareChild);
  for (const [i, dir] of checkouts.entries()) {
    const name = `svc${i}`;
    const port = await freePort();
    const smtp = dns ? await freePort() : undefined;
    const child = startChild(
      name,
      valgrind(name, [
        process.execPath,
        ...(nodeArgs.get(i) ?? []),
        '--enable-source-maps',
        path.join(dir, 'dist/main.js'),
      ]),
      {
        cwd: dir,
        env: {
          ...builtServiceEnv(env, port, secretsKey),
          // smtp-inbound: the listener, the bench's DNS answer, and no per-address or per-domain message limit.
          ...(dns && smtp
            ? {
                SMTP_PORT: String(smtp),
                DNS_SERVERS: dns.address,
                SMTP_MESSAGES_PER_ADDRESS: '10000000',
                SMTP_MESSAGES_PER_SENDER_DOMAIN: '10000000',
              }
            : {}),
        },
      },
    );
    children.push(child);
    sides.push({ name, child, url: `http://127.0.0.1:${port}`, ...(smtp ? { smtp } : {}) });
  }
  for (const s of sides) await waitHttp(`${s.url}/healthz`, 600_000, s.child);
  await waitHttp(`http://127.0.0.1:${barePort}/compliance/brands`, 600_000, bareChild, 401);
  sides.push({ name: 'bare', child: bareChild, url: `http://127.0.0.1:${barePort}` });
  const id = (await seedBrands(sides[0]!.url, key, 20))[7]!;
  const scenarios: Scenario[] = readScenarios(id).filter((s) => only.has(s.name));
  const bareIr: Record<string, number> = {};
  const dumps = new Map<string, number>();
  for (const s of scenarios) {
    for (const side of [...sides].reverse()) {
      await driveReads(side.url, s, key, WARM);
      control(side, '-z');
      control(side, '-i', 'on');
      await driveReads(side.url, s, key, N);
      control(side, '-d');
      const dumped = (dumps.get(side.name) ?? 0) + 1;
      dumps.set(side.name, dumped);
      const ir =
        (await dumpIr(side.name, side.child.pid, dumped, () => fetch(`${side.url}/healthz`).then(() => undefined))) / N;
      control(side, '-i', 'off');
      if (side.name === 'bare') bareIr[s.name] = ir;
      const index = Number(side.name.slice(3));
      const label =
        side.name === 'bare'
          ? 'bare'
          : `${checkouts[index]}${nodeArgs.has(index) ? ` [${nodeArgs.get(index)!.join(' ')}]` : ''}`;
      const ratio = side.name === 'bare' ? '' : ` (${(ir / bareIr[s.name]!).toFixed(2)}x bare)`;
      process.stdout.write(`${s.name} ${label}: ${Math.round(ir).toLocaleString('en')} instructions/request${ratio}\n`);
    }
  }
  for (const side of smtpInbound ? sides.filter((x) => x.smtp) : []) {
    const box = await fetch(`${side.url}/api/email/identities`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ localPart: `cg-inbound-${side.name}` }),
    });
    if (box.status !== 201) throw new Error(`creating the identity: ${box.status} ${await box.text()}`);
    const to = ((await box.json()) as { address: string }).address;
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: side.smtp,
      secure: false,
      ignoreTLS: true,
      pool: true,
      maxConnections: 10,
      maxMessages: Number.POSITIVE_INFINITY,
    });
    for (let round = 1; round <= REPEATS; round++) {
      await sendMessages(transport, to, WARM);
      control(side, '-z');
      control(side, '-i', 'on');
      await sendMessages(transport, to, N);
      control(side, '-d');
      const dumped = (dumps.get(side.name) ?? 0) + 1;
      dumps.set(side.name, dumped);
      const wake = () => fetch(`${side.url}/healthz`).then(() => undefined);
      const ir = (await dumpIr(side.name, side.child.pid, dumped, wake)) / N;
      control(side, '-i', 'off');
      const label = checkouts[Number(side.name.slice(3))];
      process.stdout.write(
        `smtp-inbound ${label} round ${round}: ${Math.round(ir).toLocaleString('en')} instructions/message\n`,
      );
    }
    transport.close();
  }
  process.stdout.write(`dumps in ${outDir}\n`);
} finally {
  for (const c of children) await c.stop(10_000);
  killAllChildren();
  await dns?.close();
  await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  await admin.end();
}
