// Role mail of custom domains (issue 26; RFC 5321 4.5.1, RFC 2142): postmaster@ and abuse@ of an account's verified
// custom domain reach that account (GET /api/email/role-mail), over a real SMTP client, with the domain verified
// through a real DNS server (dns2) on loopback. Never another account's, never the operator mailbox; a pending
// domain is not hosted; an identity the account made at the role address takes it as ordinary mail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestAccount, type TestApp } from '../helpers/app.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { smtpSend } from '../helpers/mail-peers.js';

const ADMIN_TOKEN = 'role-mail-admin-token-0123456789abcdef';
type DnsRecord = { type: string; name: string; value: string; purpose: string };

describe('postmaster@ and abuse@ of a custom domain reach the account that owns the domain', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let port: number;
  let n = 0;
  const unique = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

  beforeAll(async () => {
    dns = await startDnsServer();
    t = await startApp({
      env: {
        DNS_SERVERS: dns.address,
        DNS_CACHE_TTL_S: '0',
        DNS_TIMEOUT_MS: '1000',
        SMTP_PUBLIC_HOST: 'mx.switchboard.test',
        ADMIN_TOKEN,
      },
    });
    port = t.app.smtpPort()!;
  });
  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  /** Adds `domain` to `a`; with `verify`, publishes its records in the test zone and verifies it. */
  async function customDomain(a: TestAccount, verify: boolean): Promise<string> {
    const domain = `${unique('d')}.example.net`;
    const added = await a.request('POST', '/api/email/domains', { domain });
    expect(added.status).toBe(201);
    if (!verify) return domain;
    for (const r of added.body.dnsRecords as DnsRecord[]) {
      dns.zone[r.name] ??= {};
      const z = dns.zone[r.name]!;
      if (r.type === 'MX') {
        const [priority, exchange] = r.value.split(' ');
        z.MX = [{ priority: Number(priority), exchange: exchange! }];
      } else z.TXT = [...(z.TXT ?? []), r.value];
    }
    const verified = await a.request('POST', `/api/email/domains/${domain}/verify`);
    expect(verified.body.status).toBe('verified');
    return domain;
  }

  const send = (to: string | string[], subject: string, messageId?: string) =>
    smtpSend(port, {
      from: 'Reporter <reporter@example.org>',
      to,
      subject,
      text: `Report about ${subject}.`,
      ...(messageId ? { messageId } : {}),
    });
  const refusal = (to: string) =>
    send(to, 'refused').then(
      () => 'accepted',
      (e: { responseCode?: number }) => e.responseCode,
    );
  const operatorMail = async () => {
    const res = await fetch(`${t.url}/admin/mail?limit=200`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    return ((await res.json()) as { messages: { recipient: string }[] }).messages.map((m) => m.recipient);
  };

  it('keeps them for the owning account, readable through the API, once per retried delivery', async () => {
    const a = await t.newAccount();
    const b = await t.newAccount();
    const domain = await customDomain(a, true);
    const info = await send(
      [`postmaster@${domain}`, `ABUSE@${domain.toUpperCase()}`],
      'spam run',
      '<abuse-1@example.org>',
    );
    expect(info.accepted).toHaveLength(2);
    // The reporter's server retries the same message: not stored twice.
    await send(`postmaster@${domain}`, 'spam run', '<abuse-1@example.org>');

    const list = await a.request('GET', '/api/email/role-mail');
    expect(list.status).toBe(200);
    expect(list.body.nextCursor).toBeNull();
    expect(list.body.messages.map((m: { recipient: string }) => m.recipient).sort()).toEqual([
      `abuse@${domain}`,
      `postmaster@${domain}`,
    ]);
    for (const m of list.body.messages) {
      expect(m).toMatchObject({
        messageId: '<abuse-1@example.org>',
        mailFrom: 'reporter@example.org',
        from: 'reporter@example.org',
        subject: 'spam run',
        remoteAddress: '127.0.0.1',
      });
      expect(m.body).toBeUndefined();
    }
    const one = await a.request('GET', `/api/email/role-mail/${list.body.messages[0].id}`);
    expect(one.status).toBe(200);
    expect(one.body.body).toBe('Report about spam run.');

    // Paging: one per page, then the second, then none.
    const first = await a.request('GET', '/api/email/role-mail?limit=1');
    expect(first.body.messages).toHaveLength(1);
    const second = await a.request('GET', `/api/email/role-mail?limit=1&cursor=${first.body.nextCursor}`);
    expect(second.body.messages[0].id).not.toBe(first.body.messages[0].id);
    expect(second.body.nextCursor).toBeNull();

    // Another account sees nothing of it, and its id is a 404 there.
    expect((await b.request('GET', '/api/email/role-mail')).body.messages).toEqual([]);
    const other = await b.request('GET', `/api/email/role-mail/${list.body.messages[0].id}`);
    expect(other.status).toBe(404);
    expect(other.body.error).toMatchObject({ code: 'NOT_FOUND', field: 'id' });
    // Nor does the operator: a customer's domain's mail is the customer's.
    expect((await operatorMail()).filter((r) => r.endsWith(domain))).toEqual([]);
  });

  it('refuses them for a pending domain and other role names; the service domains still go to the operator', async () => {
    const a = await t.newAccount();
    const pending = await customDomain(a, false);
    expect(await refusal(`postmaster@${pending}`)).toBe(550);
    const verified = await customDomain(a, true);
    expect(await refusal(`hostmaster@${verified}`)).toBe(550);
    expect(await refusal(`postmaster@unknown-${unique('x')}.example.net`)).toBe(550);

    await send('postmaster@agents.switchboard.local', unique('operator'));
    expect(await operatorMail()).toContain('postmaster@agents.switchboard.local');
    expect((await a.request('GET', '/api/email/role-mail')).body.messages).toEqual([]);
  });

  it('gives the mail to an identity the account made at the role address, as ordinary inbound mail', async () => {
    const a = await t.newAccount();
    const domain = await customDomain(a, true);
    const box = await a.request('POST', '/api/email/identities', { localPart: 'abuse', domain });
    expect(box.status).toBe(201);
    await send(`abuse@${domain}`, 'to the identity');
    const threads = await a.request('GET', `/api/email/identities/${box.body.id}/threads`);
    expect(threads.body.threads.map((th: { subject: string }) => th.subject)).toEqual(['to the identity']);
    expect((await a.request('GET', '/api/email/role-mail')).body.messages).toEqual([]);
  });

  it('answers 400 for a bad cursor or id and 403 without the email scope', async () => {
    const a = await t.newAccount();
    const bad = await a.request('GET', '/api/email/role-mail?cursor=!!');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_CURSOR', field: 'cursor' });
    expect((await a.request('GET', '/api/email/role-mail/%00')).status).toBe(400);
    const narrow = await t.newAccount(['compliance']);
    expect((await narrow.request('GET', '/api/email/role-mail')).status).toBe(403);
  });
});
