import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/infra/logger.js';
import { startApp, type TestApp } from '../helpers/app.js';
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
