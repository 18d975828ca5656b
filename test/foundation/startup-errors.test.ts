// Start-up failures an operator can fix answer one line naming the variable (no stack trace, no credentials), the
// database gets a bounded retry at start, and /readyz reports the event bus (Redis) beside the database.
import { existsSync, readFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { runEntry, type Spawned } from '../helpers/process.js';

/**
 * A port nothing listens on, chosen below the kernel's ephemeral range (Linux: ip_local_port_range, 32768–60999 by
 * default), so no server another test file starts on port 0 can be handed it while a test relies on it refusing. A
 * port bound on 0 and released could be (seen once in a full PostgreSQL run: a parallel file's server took it within
 * the second the service retried, and the service saw "Connection terminated" instead of ECONNREFUSED).
 */
async function closedPort(): Promise<number> {
  const range = existsSync('/proc/sys/net/ipv4/ip_local_port_range')
    ? Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    : 32768;
  const high = Math.min(range, 32768); // exclusive
  const low = Math.max(1025, high - 12_000);
  if (high - low < 100) throw new Error(`the ephemeral range starts at ${range}: no room below it for a closed port`);
  for (let i = 0; i < 100; i++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await refuses(port)) return port;
  }
  throw new Error('no closed port below the ephemeral range after 100 tries');
}

/** Whether a TCP connection to 127.0.0.1:`port` is refused (nothing listens there). */
function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** The one line the service printed before exiting 1. */
async function failureLine(p: Spawned): Promise<string> {
  expect(await p.exited, `stdout:\n${p.stdout()}\nstderr:\n${p.stderr()}`).toBe(1);
  const lines = p.stderr().trim().split('\n');
  expect(lines, p.stderr()).toHaveLength(1);
  expect(lines[0]).toMatch(/^Switchboard not started: /);
  expect(lines[0]).not.toMatch(/\n\s+at |\.ts:\d+/); // no stack trace
  return lines[0]!;
}

describe('start-up errors name the variable at fault, in one line', { timeout: 180_000 }, () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let held: Server;
  let heldPort: number;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
    held = createServer();
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    heldPort = (held.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => held.close(resolve));
    await cleanup();
  });

  it('an unreachable DATABASE_URL: retried within DATABASE_CONNECT_TIMEOUT_SECONDS, then one line without the password', async () => {
    const port = await closedPort();
    const p = runEntry('main.ts', [], {
      DATA_DIR: dir,
      PORT: '0',
      DATABASE_URL: `postgres://app:s3cret-pw@127.0.0.1:${port}/switchboard`,
      DATABASE_CONNECT_TIMEOUT_SECONDS: '1',
    });
    const line = await failureLine(p);
    expect(line).toMatch(
      new RegExp(
        `DATABASE_URL: cannot reach the database at 127\\.0\\.0\\.1:${port}/switchboard \\(ECONNREFUSED\\); tried [2-9]\\d* times`,
      ),
    );
    expect(p.stdout()).toMatch(/not reachable yet \(ECONNREFUSED\); retrying/);
    expect(p.stdout() + p.stderr()).not.toContain('s3cret-pw');
  });

  it('a DATABASE_URL that is not a URL, and one of another scheme', async () => {
    const bad = runEntry('main.ts', [], { DATA_DIR: dir, PORT: '0', DATABASE_URL: 'postgres://host:port:x/db' });
    expect(await failureLine(bad)).toMatch(/DATABASE_URL: is not a valid URL/);
    const scheme = runEntry('main.ts', [], { DATA_DIR: dir, PORT: '0', REDIS_URL: 'http://localhost:6379' });
    expect(await failureLine(scheme)).toMatch(/REDIS_URL: must start with redis:\/\//);
  });

  it('a PORT in use', async () => {
    const p = runEntry('main.ts', [], { DATA_DIR: dir, PORT: String(heldPort) });
    expect(await failureLine(p)).toBe(
      `Switchboard not started: PORT: port ${heldPort} on 127.0.0.1 is already in use (EADDRINUSE): stop the process using it or set another PORT`,
    );
  });

  it('an SMTP_PORT in use', async () => {
    const p = runEntry('main.ts', [], { DATA_DIR: dir, PORT: '0', SMTP_PORT: String(heldPort) });
    expect(await failureLine(p)).toMatch(
      new RegExp(`^Switchboard not started: SMTP_PORT: port ${heldPort} on 127\\.0\\.0\\.1 is already in use`),
    );
  });
});

const it = appTest({ env: { REDIS_URL: `redis://127.0.0.1:${await closedPort()}` } });

describe('/readyz reports the event bus', () => {
  it('answers 503 naming REDIS_URL while Redis is unreachable, with the database up', async ({ t }) => {
    const res = await fetch(`${t.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      status: 'unavailable',
      reason: 'event bus (REDIS_URL): not connected',
      database: 'up',
      bus: 'down',
    });
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
  });
});
