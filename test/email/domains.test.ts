import { Resolver } from 'node:dns/promises';
import { authenticate } from 'mailauth';
import nodemailer from 'nodemailer';
import { describe, expect, vi } from 'vitest';
import type { StoredEvent } from '../../src/domain/events/event-log.js';
import { graphql } from '../generated/gql.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { appTest } from '../helpers/fixture.js';
import { payload, typedError } from '../helpers/graphql.js';
import { type SmtpSink, smtpSend, startSmtpSink } from '../helpers/mail-peers.js';

const Domains = graphql(`
  query TrustDomains { emailDomains { domain status configured dnsRecords { type name value purpose } } }
`);
const AddDomain = graphql(`
  mutation TrustAddDomain($input: AddEmailDomainInput!) {
    addEmailDomain(input: $input) {
      __typename ... on AddEmailDomainPayload { emailDomain { domain status } } ... on Error { code field }
    }
  }
`);
const VerifyDomain = graphql(`
  mutation TrustVerifyDomain($input: VerifyEmailDomainInput!) {
    verifyEmailDomain(input: $input) {
      __typename
      ... on VerifyEmailDomainPayload { emailDomain { domain status dnsRecords { purpose check { status found detail } } } }
      ... on Error { code field }
    }
  }
`);
const DeleteDomain = graphql(`
  mutation TrustDeleteDomain($input: DeleteEmailDomainInput!) {
    deleteEmailDomain(input: $input) {
      __typename ... on DeleteEmailDomainPayload { deletedDomain } ... on Error { code field }
    }
  }
`);
const CreateCredentials = graphql(`
  mutation TrustCreateSmtpCredentials($input: CreateSmtpCredentialsInput!) {
    createSmtpCredentials(input: $input) {
      __typename ... on CreateSmtpCredentialsPayload { smtpHost smtpPort smtpUser smtpPass } ... on Error { code field }
    }
  }
`);

type Record = {
  type: string;
  name: string;
  value: string;
  purpose: string;
  check?: { status: string; found: string[]; detail: string | null };
};
type Domain = { domain: string; status: string; configured: boolean; dnsRecords: Record[] };

let dns: TestDnsServer;
let sink: SmtpSink;
const it = appTest(async ({ onCleanup }) => {
  dns = await startDnsServer();
  sink = await startSmtpSink();
  onCleanup(() => dns.close());
  onCleanup(() => sink.close());
  return {
    env: {
      DNS_SERVERS: dns.address,
      DNS_CACHE_TTL_S: '0',
      DNS_TIMEOUT_MS: '1000',
      SMTP_RELAY_URL: sink.url,
      SMTP_PUBLIC_HOST: 'mx.switchboard.test',
      SMTP_PUBLIC_PORT: '465',
    },
  };
});

/** Outbound DKIM and mail domains (issue 20 section 4), with a real DNS server (dns2) on loopback. */
describe('mail domains: DNS records, custom-domain lifecycle, DKIM-signed outbound mail', () => {
  const events: StoredEvent[] = [];
  let n = 0;
  const unique = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

  it.beforeAll(async ({ t }) => {
    t.app.ctx.bus.subscribe((e) => events.push(e));
  });

  /** Publishes `records` in the test zone as a DNS provider would. */
  function publish(records: Record[], only?: string[]) {
    for (const r of records) {
      if (only && !only.includes(r.purpose)) continue;
      dns.zone[r.name] ??= {};
      const z = dns.zone[r.name]!;
      if (r.type === 'MX') {
        const [priority, exchange] = r.value.split(' ');
        z.MX = [{ priority: Number(priority), exchange: exchange! }];
      } else {
        if (!z.TXT?.includes(r.value)) z.TXT = [...(z.TXT ?? []), r.value];
      }
    }
  }

  it('lists the configured domain as verified with MX, SPF, DKIM and DMARC records', async ({ t, a }) => {
    const res = await a.request('GET', '/api/email/domains');
    expect(res.status).toBe(200);
    const [d] = res.body.domains as Domain[];
    expect(d).toMatchObject({ domain: 'agents.switchboard.local', status: 'verified', configured: true });
    expect(d!.dnsRecords).toEqual([
      { type: 'MX', name: 'agents.switchboard.local', value: '10 mx.switchboard.test', purpose: 'mx' },
      { type: 'TXT', name: 'agents.switchboard.local', value: 'v=spf1 mx ip4:127.0.0.1 ~all', purpose: 'spf' },
      {
        type: 'TXT',
        name: 'switchboard._domainkey.agents.switchboard.local',
        value: expect.stringMatching(/^v=DKIM1; k=rsa; p=MIIBIjAN[A-Za-z0-9+/=]+$/),
        purpose: 'dkim',
      },
      {
        type: 'TXT',
        name: '_dmarc.agents.switchboard.local',
        value: 'v=DMARC1; p=quarantine; adkim=r; aspf=r',
        purpose: 'dmarc',
      },
    ]);
    // The key is generated once: the same record on every read.
    const again = await a.request('GET', '/api/email/domains');
    expect(again.body.domains[0].dnsRecords[2].value).toBe(d!.dnsRecords[2]!.value);
    const row = await t.app.ctx.db.dkimKey.findUniqueOrThrow({ where: { domain: 'agents.switchboard.local' } });
    expect(row.privateKeyEncrypted).toMatch(/^v1\./);
    expect(row.privateKeyEncrypted).not.toContain('PRIVATE KEY');
  });

  it('mail sent through the API arrives DKIM-signed; mailauth verifies it against the published record', async ({
    a,
  }) => {
    const box = await a.request('POST', '/api/email/identities', { localPart: unique('dkim') });
    const domains = (await a.request('GET', '/api/email/domains')).body.domains as Domain[];
    publish(domains[0]!.dnsRecords, ['dkim']);
    const peer = `${unique('peer')}@example.net`;
    const sent = await a.request('POST', `/api/email/identities/${box.body.id}/send`, {
      to: peer,
      subject: 'Signed',
      body: 'This message carries a DKIM signature.',
    });
    expect(sent.status).toBe(202);
    const relayed = await vi.waitFor(
      () => {
        const m = sink.messages.find((x) => x.rcptTo.includes(peer));
        expect(m).toBeDefined();
        return m!;
      },
      { timeout: 10_000, interval: 20 },
    );
    const resolver = new Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([dns.address]);
    const result = await authenticate(relayed.raw, {
      ip: '127.0.0.1',
      helo: 'relay.test',
      sender: box.body.address,
      mta: 'mx.example.net',
      resolver: (name: string, rr: string) => resolver.resolve(name, rr as 'TXT'),
    });
    const sig = result.dkim.results[0]!;
    expect(sig.status.result).toBe('pass');
    expect(sig.signingDomain).toBe('agents.switchboard.local');
    expect(sig.selector).toBe('switchboard');
    // A tampered signed header no longer verifies.
    const tampered = relayed.raw.replace('Subject: Signed', 'Subject: Signed by someone else');
    expect(tampered).not.toBe(relayed.raw);
    const bad = await authenticate(tampered, {
      ip: '127.0.0.1',
      helo: 'relay.test',
      sender: box.body.address,
      mta: 'mx.example.net',
      resolver: (name: string, rr: string) => resolver.resolve(name, rr as 'TXT'),
    });
    expect(bad.dkim.results[0]!.status.result).toBe('fail');
  });

  it('a mail client submits with the issued credentials over TLS; the relayed mail passes DKIM at mailauth', async ({
    t,
    a,
  }) => {
    const box = await a.request('POST', '/api/email/identities', { localPart: unique('client') });
    publish(((await a.request('GET', '/api/email/domains')).body.domains as Domain[])[0]!.dnsRecords, ['dkim']);
    const creds = (await a.request('POST', `/api/email/identities/${box.body.id}/smtp-credentials`)).body;
    const peer = `${unique('peer')}@example.net`;
    const client = nodemailer.createTransport({
      host: '127.0.0.1',
      port: t.app.smtpSubmissionPort()!,
      secure: true,
      tls: { ca: t.app.smtpCertificate()!.cert, servername: 'localhost' },
      auth: { user: creds.smtpUser, pass: creds.smtpPass },
    });
    try {
      await client.sendMail({
        from: box.body.address,
        to: peer,
        subject: 'From Thunderbird',
        html: '<p>Hi <b>there</b></p>',
      });
    } finally {
      client.close();
    }
    const relayed = await vi.waitFor(
      () => {
        const m = sink.messages.find((x) => x.rcptTo.includes(peer));
        expect(m).toBeDefined();
        return m!;
      },
      { timeout: 10_000, interval: 20 },
    );
    const resolver = new Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([dns.address]);
    const result = await authenticate(relayed.raw, {
      ip: '127.0.0.1',
      helo: 'relay.test',
      sender: box.body.address,
      mta: 'mx.example.net',
      resolver: (name: string, rr: string) => resolver.resolve(name, rr as 'TXT'),
    });
    expect(result.dkim.results[0]!.status.result).toBe('pass');
    expect(relayed.parsed.text?.trim()).toBe('Hi there');
  });

  it('custom domain: pending, verified through DNS, identities and inbound mail only then, removal guarded', async ({
    t,
    a,
  }) => {
    const b = await t.newAccount();
    const domain = `${unique('acme')}.test`;
    const added = await a.request('POST', '/api/email/domains', { domain: domain.toUpperCase() });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ domain, status: 'pending', configured: false });
    const records = added.body.dnsRecords as Record[];
    expect(records.map((r) => r.name)).toEqual([
      domain,
      domain,
      `switchboard._domainkey.${domain}`,
      `_dmarc.${domain}`,
    ]);

    expect((await b.request('POST', '/api/email/domains', { domain })).body.error).toMatchObject({
      code: 'DOMAIN_TAKEN',
      field: 'domain',
    });
    expect((await a.request('POST', '/api/email/domains', { domain: 'agents.switchboard.local' })).status).toBe(409);
    expect((await a.request('POST', '/api/email/domains', { domain: 'not a domain' })).status).toBe(400);
    expect((await b.request('POST', `/api/email/domains/${domain}/verify`)).status).toBe(404);
    const early = await a.request('POST', '/api/email/identities', { localPart: 'sales', domain });
    expect(early.status).toBe(422);
    expect(early.body.error).toMatchObject({ code: 'DOMAIN_NOT_VERIFIED', field: 'domain' });
    const refused = await smtpSend(t.app.smtpPort()!, {
      from: 'x@example.org',
      to: `sales@${domain}`,
      subject: 'early',
      text: 't',
    }).catch((e) => e);
    expect(refused.responseCode).toBe(550);

    // Nothing published: every record missing, still pending.
    const none = await a.request('POST', `/api/email/domains/${domain}/verify`);
    expect(none.status).toBe(200);
    expect(none.body.status).toBe('pending');
    expect((none.body.dnsRecords as Record[]).map((r) => r.check!.status)).toEqual([
      'missing',
      'missing',
      'missing',
      'missing',
    ]);

    // Wrong MX, an oversized foreign DKIM record, a SERVFAIL on DMARC: answered per record, never a 5xx.
    dns.zone[domain] = { MX: [{ priority: 10, exchange: 'mx.elsewhere.test' }] };
    dns.zone[`switchboard._domainkey.${domain}`] = { TXT: [`v=DKIM1; k=rsa; p=${'A'.repeat(3000)}`] };
    dns.zone[`_dmarc.${domain}`] = { servfail: true };
    const wrong = await a.request('POST', `/api/email/domains/${domain}/verify`);
    expect(wrong.status).toBe(200);
    const checks = Object.fromEntries((wrong.body.dnsRecords as Record[]).map((r) => [r.purpose, r.check!]));
    expect(checks.mx).toMatchObject({ status: 'wrong', found: ['10 mx.elsewhere.test'] });
    expect(checks.spf).toMatchObject({ status: 'missing' });
    expect(checks.dkim!.status).toBe('wrong');
    expect(checks.dkim!.found[0]!.length).toBeLessThanOrEqual(513);
    expect(checks.dmarc!.status).toBe('error');
    expect(wrong.body.status).toBe('pending');

    // Published as asked: verified, with the event.
    delete dns.zone[domain];
    delete dns.zone[`switchboard._domainkey.${domain}`];
    delete dns.zone[`_dmarc.${domain}`];
    publish(records);
    const ok = await a.request('POST', `/api/email/domains/${domain}/verify`);
    expect((ok.body.dnsRecords as Record[]).map((r) => r.check!.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(ok.body.status).toBe('verified');
    await vi.waitFor(
      () =>
        expect(events.filter((e) => e.accountId === a.accountId && e.eventType === 'email.domain.verified')).toEqual([
          expect.objectContaining({
            payload: { event: 'email.domain.verified', data: { domain, verifiedAt: expect.any(String) } },
          }),
        ]),
      { timeout: 10_000, interval: 20 },
    );
    const listed = (await a.request('GET', '/api/email/domains')).body.domains as Domain[];
    expect(listed.map((d) => [d.domain, d.status])).toEqual([
      ['agents.switchboard.local', 'verified'],
      [domain, 'verified'],
    ]);
    expect(((await b.request('GET', '/api/email/domains')).body.domains as Domain[]).map((d) => d.domain)).toEqual([
      'agents.switchboard.local',
    ]);

    // Identities and inbound SMTP on it from now on; mail from it is signed with its own key.
    const sales = await a.request('POST', '/api/email/identities', { localPart: 'sales', domain });
    expect(sales.status).toBe(201);
    await smtpSend(t.app.smtpPort()!, { from: 'x@example.org', to: `sales@${domain}`, subject: 'hello', text: 't' });
    await vi.waitFor(
      async () =>
        expect((await a.request('GET', `/api/email/identities/${sales.body.id}/threads`)).body.threads).toHaveLength(1),
      { timeout: 10_000, interval: 50 },
    );
    const peer = `${unique('peer')}@example.net`;
    await a.request('POST', `/api/email/identities/${sales.body.id}/send`, { to: peer, subject: 's', body: 'b' });
    const relayed = await vi.waitFor(
      () => {
        const m = sink.messages.find((x) => x.rcptTo.includes(peer));
        expect(m).toBeDefined();
        return m!;
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(relayed.raw).toMatch(new RegExp(`^DKIM-Signature: [\\s\\S]*?\\bd=${domain.replace(/\./g, '\\.')};`, 'm'));

    // Removal: refused while an active identity uses it, then done.
    const inUse = await a.request('DELETE', `/api/email/domains/${domain}`);
    expect(inUse.status).toBe(422);
    expect(inUse.body.error.code).toBe('DOMAIN_IN_USE');
    expect((await b.request('DELETE', `/api/email/domains/${domain}`)).status).toBe(404);
    await a.request('DELETE', `/api/email/identities/${sales.body.id}`);
    expect((await a.request('DELETE', `/api/email/domains/${domain}`)).status).toBe(204);
    expect((await a.request('GET', `/api/email/domains/${domain}`)).status).toBe(404);
    expect(await t.app.ctx.db.dkimKey.findUnique({ where: { domain } })).toBeNull();
  });

  it('GraphQL parity: emailDomains, addEmailDomain, verifyEmailDomain, deleteEmailDomain, createSmtpCredentials', async ({
    t,
    a,
  }) => {
    const b = await t.newAccount();
    const domain = `${unique('gql')}.test`;
    const added = await a.gql(AddDomain, { input: { domain } });
    expect(payload(added.data!.addEmailDomain, 'AddEmailDomainPayload').emailDomain).toEqual({
      domain,
      status: 'pending',
    });
    expect(typedError((await b.gql(AddDomain, { input: { domain } })).data!.addEmailDomain)).toMatchObject({
      code: 'DOMAIN_TAKEN',
    });
    const listed = await a.gql(Domains);
    expect(listed.data!.emailDomains.map((d) => [d.domain, d.status, d.configured, d.dnsRecords.length])).toEqual([
      ['agents.switchboard.local', 'verified', true, 4],
      [domain, 'pending', false, 4],
    ]);
    const checked = await a.gql(VerifyDomain, { input: { domain } });
    const v = payload(checked.data!.verifyEmailDomain, 'VerifyEmailDomainPayload').emailDomain;
    expect(v.status).toBe('pending');
    expect(v.dnsRecords.map((r) => r.check?.status)).toEqual(['missing', 'missing', 'missing', 'missing']);
    expect(typedError((await b.gql(VerifyDomain, { input: { domain } })).data!.verifyEmailDomain).code).toBe(
      'NOT_FOUND',
    );
    const deleted = await a.gql(DeleteDomain, { input: { domain } });
    expect(payload(deleted.data!.deleteEmailDomain, 'DeleteEmailDomainPayload').deletedDomain).toBe(domain);

    const box = await a.request('POST', '/api/email/identities', { localPart: unique('gqlbox') });
    const creds = await a.gql(CreateCredentials, { input: { identityId: box.body.id } });
    expect(payload(creds.data!.createSmtpCredentials, 'CreateSmtpCredentialsPayload')).toMatchObject({
      smtpHost: 'mx.switchboard.test',
      smtpPort: 465, // SMTP_PUBLIC_PORT, e.g. a port forward to SMTP_SUBMISSION_PORT
      smtpUser: box.body.address,
      smtpPass: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
    });
    expect(
      typedError((await b.gql(CreateCredentials, { input: { identityId: box.body.id } })).data!.createSmtpCredentials)
        .code,
    ).toBe('NOT_FOUND');
  });
});
