import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { logsOf } from './helpers.js';

describe('webhooks: SSRF guard (WEBHOOK_ALLOW_PRIVATE_NETWORKS=false)', () => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await startApp({ clock: new ManualClock(), env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('refuses loopback, private, link-local/metadata, CGNAT, NAT64, IPv4-compatible, IPv4-mapped and unspecified addresses before connecting', async () => {
    const port = new URL(receiver.url).port;
    const targets: [string, RegExp][] = [
      [`http://127.0.0.1:${port}/a`, /^refused: 127\.0\.0\.1 is not a public address \(loopback\)$/],
      [`http://localhost:${port}/b`, /^refused: localhost resolves to .* is not a public address \(loopback\)$/],
      [`http://[::ffff:127.0.0.1]:${port}/c`, /^refused: .* \(loopback\)$/],
      [`http://[::1]:${port}/d`, /^refused: ::1 is not a public address \(loopback\)$/],
      [`http://0.0.0.0:${port}/e`, /\(unspecified\)$/],
      ['http://10.1.2.3/hook', /^refused: 10\.1\.2\.3 is not a public address \(private\)$/],
      ['http://192.168.1.10/hook', /\(private\)$/],
      ['http://172.16.0.1/hook', /\(private\)$/],
      ['http://169.254.169.254/latest/meta-data/', /^refused: 169\.254\.169\.254 is a cloud metadata address$/],
      ['http://100.64.0.1/hook', /^refused: 100\.64\.0\.1 is not a public address \(carrierGradeNat\)$/],
      ['http://[64:ff9b::a00:1]/hook', /NAT64 address$/],
      [`http://[::7f00:1]:${port}/f`, /^refused: ::7f00:1 is an IPv4-compatible IPv6 address$/],
      ['http://[::a00:1]/hook', /^refused: ::a00:1 is an IPv4-compatible IPv6 address$/],
      ['http://[::808:808]/hook', /IPv4-compatible IPv6 address$/],
      ['http://[fd00:ec2::254]/hook', /cloud metadata address$/],
      ['http://[fe80::1]/hook', /\(linkLocal\)$/],
      ['http://[::ffff:10.0.0.1]/hook', /\(private\)$/],
    ];
    const a = await t.newAccount();
    const ids: string[] = [];
    for (const [url] of targets) {
      const res = await a.request('POST', '/api/webhooks', { url, events: ['sms.sent'] });
      expect(res.status, url).toBe(201);
      ids.push(res.body.id);
    }
    await a.request('POST', '/api/events', { eventType: 'sms.sent', payload: {} });
    await t.drain();
    for (const [i, [url, reason]] of targets.entries()) {
      const [entry] = await logsOf(a, ids[i]!);
      expect(entry, url).toMatchObject({ status: 'pending', attempts: 1, responseCode: null });
      expect(entry.lastError, url).toMatch(reason);
    }
    expect(receiver.received).toHaveLength(0);
    // A test delivery is refused the same way.
    const test = await a.request('POST', `/api/webhooks/${ids[0]}/test`, { eventType: 'sms.sent' });
    expect(test.body).toMatchObject({ status: 'failed', responseCode: null });
    expect(test.body.lastError).toMatch(/^refused:/);
    expect(receiver.received).toHaveLength(0);
  });
});
