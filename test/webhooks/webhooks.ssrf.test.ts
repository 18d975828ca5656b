import { afterAll, beforeAll, describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { appTest } from '../helpers/fixture.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { logsOf } from './helpers.js';

const it = appTest({ clock: new ManualClock(), env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' } });

describe('webhooks: SSRF guard (WEBHOOK_ALLOW_PRIVATE_NETWORKS=false)', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('refuses at registration, with 422 URL_NOT_PUBLIC on `url`, literal loopback, private, link-local/metadata, CGNAT, NAT64, IPv4-compatible, IPv4-mapped and unspecified addresses', async ({
    t,
  }) => {
    const port = new URL(receiver.url).port;
    const targets: [string, RegExp][] = [
      [`http://127.0.0.1:${port}/a`, /127\.0\.0\.1 is not a public address \(loopback\)/],
      [`http://0x7f.1:${port}/a`, /127\.0\.0\.1 is not a public address \(loopback\)/],
      [`http://[::ffff:127.0.0.1]:${port}/c`, /\(loopback\)/],
      [`http://[::1]:${port}/d`, /::1 is not a public address \(loopback\)/],
      [`http://0.0.0.0:${port}/e`, /\(unspecified\)/],
      ['http://10.1.2.3/hook', /10\.1\.2\.3 is not a public address \(private\)/],
      ['http://192.168.1.10/hook', /\(private\)/],
      ['http://172.16.0.1/hook', /\(private\)/],
      ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a cloud metadata address/],
      ['http://100.64.0.1/hook', /100\.64\.0\.1 is not a public address \(carrierGradeNat\)/],
      ['http://[64:ff9b::a00:1]/hook', /NAT64 address/],
      [`http://[::7f00:1]:${port}/f`, /::7f00:1 is an IPv4-compatible IPv6 address/],
      ['http://[::a00:1]/hook', /::a00:1 is an IPv4-compatible IPv6 address/],
      ['http://[::808:808]/hook', /IPv4-compatible IPv6 address/],
      ['http://[fd00:ec2::254]/hook', /cloud metadata address/],
      ['http://[fe80::1]/hook', /\(linkLocal\)/],
      ['http://[::ffff:10.0.0.1]/hook', /\(private\)/],
    ];
    const a = await t.newAccount();
    for (const [url, reason] of targets) {
      const res = await a.request('POST', '/api/webhooks', { url, events: ['sms.sent'] });
      expect(res.status, url).toBe(422);
      expect(res.body.error, url).toMatchObject({ code: 'URL_NOT_PUBLIC', field: 'url' });
      expect(res.body.error.message, url).toMatch(reason);
      expect(res.headers.get('x-request-id'), url).toBeTruthy();
    }
    // The same through GraphQL (one domain rule).
    const gql = await a.request('POST', '/graphql', {
      query:
        'mutation($i: CreateWebhookInput!) { createWebhook(input: $i) { ... on CreateWebhookPayload { webhook { id } } ... on Error { code field } } }',
      variables: { i: { url: 'http://10.0.0.1/hook', events: ['sms.sent'] } },
    });
    expect(JSON.stringify(gql.body)).toMatch(/URL_NOT_PUBLIC/);
    // Nothing was stored.
    expect((await a.request('GET', '/api/webhooks')).body).toEqual({ webhooks: [], nextCursor: null });
    // A public literal address is accepted.
    expect(
      (await a.request('POST', '/api/webhooks', { url: 'http://93.184.215.14/hook', events: ['sms.sent'] })).status,
    ).toBe(201);
  });

  it('still judges names when connecting: a name resolving to loopback is accepted, then refused on every attempt', async ({
    t,
  }) => {
    const port = new URL(receiver.url).port;
    const a = await t.newAccount();
    const res = await a.request('POST', '/api/webhooks', { url: `http://localhost:${port}/b`, events: ['sms.sent'] });
    expect(res.status).toBe(201);
    await a.request('POST', '/api/events', { eventType: 'sms.sent', payload: {} });
    await t.drain();
    const [entry] = await logsOf(a, res.body.id);
    expect(entry).toMatchObject({ status: 'pending', attempts: 1, responseCode: null });
    expect(entry.lastError).toMatch(/^refused: localhost resolves to .* is not a public address \(loopback\)$/);
    expect(receiver.received).toHaveLength(0);
    // A test delivery is refused the same way.
    const test = await a.request('POST', `/api/webhooks/${res.body.id}/test`, { eventType: 'sms.sent' });
    expect(test.body).toMatchObject({ status: 'failed', responseCode: null });
    expect(test.body.lastError).toMatch(/^refused:/);
    expect(receiver.received).toHaveLength(0);
  });
});
