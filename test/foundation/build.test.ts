import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { ROOT } from '../helpers/process.js';

const run = promisify(execFile);

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('npm run build, then npm start on the built JavaScript', { timeout: 300_000 }, () => {
  it('starts from dist/ (first start from the migrated PGlite template), and SIGTERM to npm stops the server', async () => {
    await run('npm', ['run', 'build'], { cwd: ROOT, timeout: 240_000 });
    expect(existsSync(path.join(ROOT, 'dist', 'main.js'))).toBe(true);
    expect(existsSync(path.join(ROOT, 'dist', 'pglite-template.tgz'))).toBe(true);

    const { dir, cleanup } = await tempDir();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATA_DIR: dir,
      PORT: '0',
      SMTP_PORT: '0',
      SMTP_SUBMISSION_PORT: '0',
      LOG_LEVEL: 'info',
    };
    for (const key of ['DATABASE_URL', 'REDIS_URL', 'ADMIN_TOKEN']) delete env[key];
    const npm = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    npm.stdout.on('data', (d) => {
      out += d;
    });
    npm.stderr.on('data', (d) => {
      out += d;
    });
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    try {
      const address = await new Promise<string>((resolve, reject) => {
        const poll = setInterval(() => {
          const m = /"address":"(http:\/\/[^"]+)"/.exec(out);
          if (m) {
            clearInterval(poll);
            resolve(m[1] as string);
          } else if (npm.exitCode !== null) {
            clearInterval(poll);
            reject(new Error(`npm start exited: ${out}`));
          }
        }, 50);
      });
      expect((await fetch(`${address}/healthz`)).status).toBe(200);
      expect((await (await fetch(`${address}/readyz`)).json()) as object).toEqual({
        status: 'ready',
        database: 'pglite',
        bus: 'in-process',
      });
      // The template already holds every migration, and the service runs the built code, not tsx.
      expect(out).not.toContain('migrations applied');
      expect(out).toContain('First start: created account');
      const port = Number(new URL(address).port);

      npm.kill('SIGTERM'); // what a supervisor sends to the process it started
      expect(await exited).toBe(0);
      expect(await listening(port)).toBe(false);
      expect(existsSync(path.join(dir, 'switchboard.lock'))).toBe(false);
    } finally {
      npm.kill('SIGKILL');
      await cleanup();
    }
  });
});
