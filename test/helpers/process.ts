import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A child process running one of the project's entry points, with its output collected. */
export interface Spawned {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** Resolves when stdout matches `pattern` (rejects after `timeoutMs`). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

/**
 * Runs `src/<entry>` under tsx exactly as `npm start` / `npm run cli` do, with `env` added to a clean environment
 * (no DATABASE_URL/REDIS_URL from the outer test run unless given). `wrap` runs it under another command, e.g.
 * `['unshare', '--pid', '--fork']` (then `child` is that command, not node).
 */
export function runEntry(
  entry: 'main.ts' | 'cli.ts',
  args: string[],
  env: Record<string, string>,
  wrap: string[] = [],
): Spawned {
  const base = { ...process.env };
  for (const key of [
    'DATABASE_URL',
    'REDIS_URL',
    'PORT',
    'DATA_DIR',
    'SMTP_PORT',
    'SMTP_SUBMISSION_PORT',
    'ADMIN_TOKEN',
    'SWITCHBOARD_URL',
  ])
    delete base[key];
  const argv = [process.execPath, '--import', 'tsx', `src/${entry}`, ...args];
  const [command, ...rest] = [...wrap, ...argv] as [string, ...string[]];
  const child = spawn(command, rest, {
    cwd: ROOT,
    env: { ...base, LOG_LEVEL: 'info', SMTP_PORT: '0', SMTP_SUBMISSION_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, timeoutMs = 240_000) {
      return new Promise((resolve, reject) => {
        const started = Date.now();
        const poll = setInterval(() => {
          const m = out.match(pattern);
          if (m) {
            clearInterval(poll);
            resolve(m);
          } else if (Date.now() - started > timeoutMs || child.exitCode !== null) {
            clearInterval(poll);
            reject(new Error(`pattern ${pattern} not seen; stdout:\n${out}\nstderr:\n${err}`));
          }
        }, 50);
      });
    },
  };
}
