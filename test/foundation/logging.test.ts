import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/infra/logger.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

describe('JSON logs', () => {
  const lines: Record<string, unknown>[] = [];
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    const sink = new Writable({
      write(chunk, _encoding, callback) {
        for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
        callback();
      },
    });
    // Debug: per-delivery lines are debug since webhooks run at volume.
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
