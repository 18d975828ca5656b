import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASYNC_CONTEXT_FRAME_FLAG, asyncContextFrameArgv } from '../../src/infra/async-context-frame.js';
import { createLogger } from '../../src/infra/logger.js';
import { startApp, type TestApp, tempDir } from '../helpers/app.js';
import { runEntry } from '../helpers/process.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

describe('JSON logs', () => {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    const sink = new Writable({
      write(chunk, _encoding, callback) {
        for (const line of String(chunk).split('\n')) {
          if (!line) continue;
          raw.push(line);
          lines.push(JSON.parse(line));
        }
        callback();
      },
    });
    // Debug: 'webhook delivered' is a debug line since the job queue (one per delivery at volume).
    t = await startApp({ logger: createLogger('debug', sink) });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('puts the request id on lines that domain code writes while serving the request', async () => {
    const a = await t.newAccount();
    const hook = await a.request('POST', '/api/webhooks', { url: `${receiver.url}/logs`, events: ['sms.*'] });
    receiver.setSecrets('/logs', [hook.body.secret]);
    const res = await a.request(
      'POST',
      `/api/webhooks/${hook.body.id}/test`,
      { eventType: 'sms.sent' },
      {
        'x-request-id': 'trace-log-1',
      },
    );
    expect(res.status).toBeLessThan(300);
    const domainLine = lines.find((l) => l.msg === 'webhook delivered');
    expect(domainLine).toMatchObject({ reqId: 'trace-log-1' });
    const secret = hook.body.secret as string;
    expect(lines.some((l) => JSON.stringify(l).includes(secret))).toBe(false);
    expect(lines.some((l) => JSON.stringify(l).includes(a.apiKey))).toBe(false);
  });
});

describe('log lines of a request', () => {
  it('carry the key reqId exactly once, in JSON and in the pretty format', { timeout: 240_000 }, async () => {
    for (const format of ['json', 'pretty'] as const) {
      const raw: string[] = [];
      const sink = new Writable({
        write(chunk, _encoding, callback) {
          raw.push(...String(chunk).split('\n').filter(Boolean));
          callback();
        },
      });
      const t = await startApp({ logger: createLogger('info', sink, format) });
      try {
        const res = await fetch(`${t.url}/healthz`, { headers: { 'x-request-id': `once-${format}` } });
        expect(res.status).toBe(200);
        await new Promise((r) => setTimeout(r, 50));
      } finally {
        await t.close();
      }
      const mine = raw.filter((l) => l.includes(`once-${format}`));
      const completed = mine.find((l) => l.includes('request completed'));
      expect(completed, raw.join('\n')).toBeDefined();
      for (const line of mine) expect(line.match(/reqId/g)).toHaveLength(1);
      if (format === 'json') {
        expect(JSON.parse(completed as string)).toMatchObject({ reqId: 'once-json', res: { statusCode: 200 } });
      } else {
        expect(() => JSON.parse(completed as string)).toThrow();
        expect(completed).toMatch(/INFO/);
      }
    }
  });
});

// The started service runs as `npm start` runs it: on Node 22/23 src/main.ts re-executes itself with
// --experimental-async-context-frame (src/infra/async-context-frame.ts), so the request scope there is
// AsyncContextFrame, not async_hooks; domain lines must carry the request id all the same.
describe('the started service (src/main.ts)', () => {
  it('puts the request id on domain lines, with the async context frame where the Node line takes the flag', {
    timeout: 300_000,
  }, async () => {
    const { dir, cleanup } = await tempDir();
    const receiver = await startReceiver();
    const service = runEntry('main.ts', [], {
      DATA_DIR: dir,
      PORT: '0',
      LOG_LEVEL: 'debug',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    try {
      const [, apiKey] = await service.waitFor(/\n {2}(sb_[0-9a-f]{16}_[A-Za-z0-9_-]{43})\n/);
      const [, address] = await service.waitFor(/"address":"(http:\/\/[^"]+)"/);
      const major = Number(process.versions.node.split('.')[0]);
      if (process.platform === 'linux' && (major === 22 || major === 23)) {
        // Same pid as spawned: the process replaced itself, it did not start a child.
        const argv = readFileSync(`/proc/${service.child.pid}/cmdline`, 'utf8').split('\0');
        expect(argv).toContain(ASYNC_CONTEXT_FRAME_FLAG);
      }
      const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
      const hook = await fetch(`${address}/api/webhooks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ url: `${receiver.url}/started`, events: ['sms.*'] }),
      });
      expect(hook.status).toBe(201);
      const { id, secret } = (await hook.json()) as { id: string; secret: string };
      receiver.setSecrets('/started', [secret]);
      const sent = await fetch(`${address}/api/webhooks/${id}/test`, {
        method: 'POST',
        headers: { ...headers, 'x-request-id': 'started-log-1' },
        body: JSON.stringify({ eventType: 'sms.sent' }),
      });
      expect(sent.status).toBeLessThan(300);
      const [line] = await service.waitFor(/\{[^\n]*"msg":"webhook delivered"[^\n]*\}/);
      expect(JSON.parse(line)).toMatchObject({ reqId: 'started-log-1' });
      for (const l of service
        .stdout()
        .split('\n')
        .filter((x) => x.includes('started-log-1'))) {
        expect(l.match(/reqId/g)).toHaveLength(1);
      }
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
      await receiver.close();
      await cleanup();
    }
  });
});

describe('when the entry point re-executes itself with the async context frame', () => {
  const proc = (node: string, over: Partial<Parameters<typeof asyncContextFrameArgv>[0]> = {}) => ({
    versions: { ...process.versions, node },
    execArgv: ['--enable-source-maps'],
    argv: ['/usr/bin/node', '/app/dist/main.js', 'x'],
    execPath: '/usr/bin/node',
    env: {},
    execve: (() => undefined) as unknown as NodeJS.Process['execve'],
    channel: undefined,
    ...over,
  });
  it('does on Node 22 and 23, keeping the node options and the arguments', () => {
    for (const node of ['22.19.0', '23.11.0']) {
      expect(asyncContextFrameArgv(proc(node))).toEqual([
        '/usr/bin/node',
        ASYNC_CONTEXT_FRAME_FLAG,
        '--enable-source-maps',
        '/app/dist/main.js',
        'x',
      ]);
    }
  });
  it('does not on Node 24 and later, once the option is named, under IPC, or without process.execve', () => {
    expect(asyncContextFrameArgv(proc('24.0.0'))).toBeUndefined();
    expect(asyncContextFrameArgv(proc('25.1.0'))).toBeUndefined();
    expect(asyncContextFrameArgv(proc('22.19.0', { execArgv: [ASYNC_CONTEXT_FRAME_FLAG] }))).toBeUndefined();
    expect(
      asyncContextFrameArgv(proc('22.19.0', { execArgv: ['--no-experimental-async-context-frame'] })),
    ).toBeUndefined();
    expect(
      asyncContextFrameArgv(proc('22.19.0', { env: { NODE_OPTIONS: '--experimental-async-context-frame' } })),
    ).toBeUndefined();
    expect(asyncContextFrameArgv(proc('22.19.0', { channel: {} as NodeJS.Process['channel'] }))).toBeUndefined();
    expect(asyncContextFrameArgv(proc('22.19.0', { execve: undefined }))).toBeUndefined();
  });
});
