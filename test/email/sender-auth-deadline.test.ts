import { describe, expect } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { appTest } from '../helpers/fixture.js';
import { smtpSend } from '../helpers/mail-peers.js';

let dns: TestDnsServer;
const it = appTest(async ({ onCleanup }) => {
  dns = await startDnsServer({ 'mute.example': { hang: true }, '_dmarc.mute.example': { hang: true } });
  onCleanup(() => dns.close());
  return {
    env: { DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: '30000', SMTP_AUTH_TIMEOUT_MS: '700' },
  };
});

/**
 * SMTP_AUTH_TIMEOUT_MS bounds the whole sender authentication, whatever the per-lookup DNS timeout: with a resolver
 * that never answers and a 30 s lookup timeout, the message is still answered 250 and stored within a few seconds,
 * every verdict `temperror`.
 */
describe('sender authentication deadline (SMTP_AUTH_TIMEOUT_MS)', () => {
  it('a resolver that never answers cannot hold the session: 250, stored, verdicts temperror', async ({ t, a }) => {
    const box = await a.request('POST', '/api/email/identities', { localPart: `mute${Date.now().toString(36)}` });
    const started = Date.now();
    const info = await smtpSend(t.app.smtpPort()!, {
      from: 'someone@mute.example',
      to: box.body.address,
      subject: 'Anyone there?',
      text: 'x',
    });
    expect(info.accepted).toEqual([box.body.address]);
    // Well below the 30 s a single lookup may take (a generous bound: the machine is shared).
    expect(Date.now() - started).toBeLessThan(25_000);
    expect(dns.queries.some((q) => q.endsWith('mute.example'))).toBe(true);
    const [th] = (await a.request('GET', `/api/email/identities/${box.body.id}/threads`)).body.threads;
    const detail = await a.request('GET', `/api/email/identities/${box.body.id}/threads/${th.threadId}`);
    expect(detail.body.messages[0]).toMatchObject({
      subject: 'Anyone there?',
      authentication: { spf: 'temperror', dkim: 'temperror', dmarc: 'temperror', authenticated: false },
      labels: ['received', 'unauthenticated'],
    });
  });
});
