import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { ROOT, runEntry } from '../helpers/process.js';

/**
 * Issue 26, item 1: the embedded database's lock (DATA_DIR/switchboard.lock) after unclean stops. A container's
 * process is PID 1 on every start, a killed process lingers until it is reaped, and PIDs are reused.
 */
const env = (dir: string) => ({ DATA_DIR: dir, PORT: '0', BOOTSTRAP_ACCOUNT: 'false' });
const ADDRESS = /"address":"(http:\/\/[^"]+)"/;

function lockOf(dir: string): { pid: number; startTime?: string; hostname: string } {
  return JSON.parse(readFileSync(path.join(dir, 'switchboard.lock'), 'utf8'));
}

/** State letter and start time (fields 3 and 22) of /proc/<pid>/stat, or undefined once the process is gone. */
function proc(pid: number): { state: string; startTime: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] as string, startTime: fields[19] as string };
  } catch {
    return undefined;
  }
}

/** The single child of `pid` (the node process `unshare --fork` started). */
async function childOf(pid: number): Promise<number> {
  for (;;) {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    if (children) return Number(children.split(' ')[0]);
    await sleep(20);
  }
}

/**
 * How to start a process in a new PID namespace here: as root `unshare --pid --fork`; otherwise inside a user
 * namespace (`--map-root-user`) where the kernel allows it; undefined where neither works (that case is skipped).
 */
const UNSHARE = [
  ['unshare', '--pid', '--fork'],
  ['unshare', '--user', '--map-root-user', '--pid', '--fork'],
].find((cmd) => spawnSync(cmd[0] as string, [...cmd.slice(1), 'true']).status === 0);

/**
 * A wrapper that starts the entry as a container would: PID 1 of a new PID namespace, with hostname `name` in a new
 * UTS namespace (Docker names a container's host after its id, so a recreated container has another hostname).
 */
const container = (name: string): string[] => [
  ...(UNSHARE as string[]).slice(0, -2),
  '--uts',
  '--pid',
  '--fork',
  'sh',
  '-c',
  'hostname "$0" && exec "$@"',
  name,
];

async function until(check: () => boolean): Promise<void> {
  while (!check()) await sleep(20);
}

describe('the embedded database lock after unclean stops', { timeout: 600_000 }, () => {
  it.skipIf(!UNSHARE)('a restart in a new PID namespace (a container: PID 1 again) after kill -9 starts', async () => {
    const { dir, cleanup } = await tempDir();
    const unshare = UNSHARE as string[];
    const first = runEntry('main.ts', [], env(dir), unshare);
    try {
      await first.waitFor(ADDRESS, 180_000);
      expect(lockOf(dir).pid).toBe(1);
      process.kill(await childOf(first.child.pid as number), 'SIGKILL');
      await first.exited;
      expect(lockOf(dir).pid).toBe(1); // left behind, naming the PID the next start will have

      const second = runEntry('main.ts', [], env(dir), unshare);
      try {
        const [, address] = await second.waitFor(ADDRESS, 180_000);
        expect((await fetch(`${address}/healthz`)).status).toBe(200);
        expect(lockOf(dir).pid).toBe(1);
      } finally {
        process.kill(await childOf(second.child.pid as number), 'SIGTERM');
        expect(await second.exited).toBe(0);
      }
    } finally {
      first.child.kill('SIGKILL');
      await cleanup();
    }
  });

  it('a restart at once after kill -9, while the killed holder is not yet reaped (a zombie), starts', async () => {
    const { dir, cleanup } = await tempDir();
    // `exec sleep` replaces the shell, so the service's parent is `sleep`, which never reaps it: after kill -9 the
    // service stays a zombie for as long as this wrapper lives.
    const entry = `${JSON.stringify(process.execPath)} --import tsx src/main.ts`;
    const wrapper = spawn('sh', ['-c', `${entry} & exec sleep 600`], {
      cwd: ROOT,
      env: { ...process.env, ...env(dir), DATABASE_URL: '', REDIS_URL: '', SMTP_PORT: '0', LOG_LEVEL: 'warn' },
      stdio: 'ignore',
    });
    try {
      await until(() => {
        try {
          return lockOf(dir).pid > 0;
        } catch {
          return false;
        }
      });
      const holder = lockOf(dir).pid;
      expect(holder).not.toBe(wrapper.pid);
      // Wait for it to be fully up (it holds PGlite open), then kill it and start again at once.
      await until(() => {
        try {
          return readFileSync(path.join(dir, 'admin.json'), 'utf8').length > 0;
        } catch {
          return false;
        }
      });
      process.kill(holder, 'SIGKILL');
      const second = runEntry('main.ts', [], env(dir));
      try {
        await until(() => proc(holder)?.state === 'Z');
        const [, address] = await second.waitFor(ADDRESS, 180_000);
        expect((await fetch(`${address}/healthz`)).status).toBe(200);
        expect(lockOf(dir).pid).toBe(second.child.pid);
        expect(proc(holder)?.state).toBe('Z'); // still not reaped: the lock did not wait for that
      } finally {
        second.child.kill('SIGTERM');
        expect(await second.exited).toBe(0);
      }
    } finally {
      wrapper.kill('SIGKILL');
      await cleanup();
    }
  });

  it.skipIf(!UNSHARE)(
    'containers on one volume: a live holder in another container is refused by name; a recreated container (another hostname) comes up once the dead one stops beating',
    async () => {
      const { dir, cleanup } = await tempDir();
      const first = runEntry('main.ts', [], env(dir), container('box-a'));
      try {
        await first.waitFor(ADDRESS, 180_000);
        expect(lockOf(dir)).toMatchObject({ pid: 1, hostname: 'box-a', heartbeatMs: 5000 });

        // A second container on the same volume, while the first runs: its PID 1 is not ours to judge, the beat is.
        const t0 = Date.now();
        const second = runEntry('main.ts', [], env(dir), container('box-b'));
        expect(await second.exited).toBe(3);
        expect(second.stderr()).toContain('is in use by process 1 on box-a');
        const refusedIn = Date.now() - t0;

        // kill -9 the first (docker kill, an OOM kill), then start a recreated container: new hostname, PID 1.
        process.kill(await childOf(first.child.pid as number), 'SIGKILL');
        await first.exited;
        const killed = Date.now();
        const third = runEntry('main.ts', [], env(dir), container('box-c'));
        try {
          const [, address] = await third.waitFor(ADDRESS, 180_000);
          const upIn = Date.now() - killed;
          expect((await fetch(`${address}/healthz`)).status).toBe(200);
          expect(lockOf(dir)).toMatchObject({ pid: 1, hostname: 'box-c' });
          console.log(
            `data-dir lock across containers: live holder refused in ${refusedIn} ms; recreated container up ${upIn} ms after kill -9 (heartbeat 5 s, 5 missed)`,
          );
        } finally {
          process.kill(await childOf(third.child.pid as number), 'SIGTERM');
          expect(await third.exited).toBe(0);
        }
      } finally {
        first.child.kill('SIGKILL');
        await cleanup();
      }
    },
  );

  it('a lock from another host is held while its heartbeat goes on, stale once it stops, held forever without one', async () => {
    const { dir, cleanup } = await tempDir();
    const file = path.join(dir, 'switchboard.lock');
    const lock = (extra: object) =>
      writeFileSync(
        file,
        JSON.stringify({ pid: 4242, hostname: 'elsewhere-1', since: '2026-01-01T00:00:00.000Z', ...extra }),
      );
    try {
      // A lock file of the version before the heartbeat: nothing says its holder died, so it stays held.
      lock({});
      const old = runEntry('cli.ts', ['db:migrate'], { DATA_DIR: dir });
      expect(await old.exited).toBe(3);
      expect(old.stderr()).toContain('is in use by process 4242 on elsewhere-1');

      // A live holder elsewhere, beating every 200 ms: refused.
      lock({ heartbeatMs: 200 });
      const beat = setInterval(() => utimesSync(file, new Date(), new Date()), 200);
      try {
        const live = runEntry('cli.ts', ['db:migrate'], { DATA_DIR: dir });
        expect(await live.exited).toBe(3);
        expect(live.stderr()).toContain('is in use by process 4242 on elsewhere-1');
      } finally {
        clearInterval(beat);
      }
      // The beat stopped: after 5 missed beats (1 s) the lock is stale and taken over.
      const taken = runEntry('cli.ts', ['db:migrate'], { DATA_DIR: dir });
      expect(await taken.exited).toBe(0);
    } finally {
      await cleanup();
    }
  });

  it('a lock naming a live PID is stale when that PID now runs another process (start time differs)', async () => {
    const { dir, cleanup } = await tempDir();
    const other = spawn('sleep', ['600'], { stdio: 'ignore' });
    try {
      const pid = other.pid as number;
      const startTime = proc(pid)?.startTime as string;
      const lock = (start: string) =>
        writeFileSync(
          path.join(dir, 'switchboard.lock'),
          JSON.stringify({ pid, hostname: hostname(), since: '2026-01-01T00:00:00.000Z', startTime: start }),
        );

      lock(startTime); // the live process that wrote it: refused, naming it
      const refused = runEntry('cli.ts', ['db:migrate'], { DATA_DIR: dir });
      expect(await refused.exited).toBe(3);
      expect(refused.stderr()).toContain(`is in use by process ${pid} on ${hostname()}`);

      lock(String(Number(startTime) + 1)); // written by an earlier process with the same PID
      const taken = runEntry('cli.ts', ['db:migrate'], { DATA_DIR: dir });
      expect(await taken.exited).toBe(0);
    } finally {
      other.kill('SIGKILL');
      await cleanup();
    }
  });
});
