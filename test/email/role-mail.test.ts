// Role mail of custom domains (issue 26; RFC 5321 4.5.1, RFC 2142): postmaster@ and abuse@ of an account's verified
// custom domain reach that account (GET /api/email/role-mail), over a real SMTP client, with the domain verified
// through a real DNS server (dns2) on loopback. Never another account's, never the operator mailbox; a pending
// domain is not hosted; an identity the account made at the role address takes it as ordinary mail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../generated/gql.js';
import { startApp, type TestAccount, type TestApp } from '../helpers/app.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { smtpSend } from '../helpers/mail-peers.js';
import { openSse } from '../helpers/sse.js';

const RoleMail = graphql(`
  query RoleMailPage($first: Int, $after: String, $last: Int, $before: String) {
    roleMail(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id recipient messageId mailFrom from subject remoteAddress receivedAt } }
      pageInfo { hasNextPage hasPreviousPage endCursor }
    }
  }
`);
const RoleMailBodies = graphql(`
  query RoleMailBodies { roleMail(first: 10) { edges { node { id body } } } }
`);
const RoleMailNode = graphql(`
  query RoleMailNode($id: ID!) { node(id: $id) { __typename id ... on RoleMessage { recipient subject body } } }
`);

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

  it('announces each new message as email.role_mail.received (SSE), without its body, to the owner only', async () => {
    const a = await t.newAccount();
    const b = await t.newAccount();
    const domain = await customDomain(a, true);
    const types = ['email.role_mail.received'];
    const sseA = openSse(`${t.url}/api/events?token=${a.apiKey}&channels=email`, types);
    const sseB = openSse(`${t.url}/api/events?token=${b.apiKey}&channels=email`, types);
    try {
      await Promise.all([sseA.opened(), sseB.opened()]);
      await send([`postmaster@${domain}`, `abuse@${domain}`], 'announced', '<announce-1@example.org>');
      await send(`postmaster@${domain}`, 'announced', '<announce-1@example.org>'); // a retry: no second event
      await sseA.waitFor((m) => m.length >= 2);
      const stored = (await a.request('GET', '/api/email/role-mail')).body.messages as { id: string }[];
      // A later message proves the retry above announced nothing more: events of an account arrive in order.
      await send(`abuse@${domain}`, 'later', '<announce-2@example.org>');
      await sseA.waitFor((m) => m.some((e) => e.data.payload.data.subject === 'later'));
      const announced = sseA.messages.filter((e) => e.data.payload.data.subject === 'announced');
      expect(announced.map((e) => e.data.payload.data.address).sort()).toEqual([
        `abuse@${domain}`,
        `postmaster@${domain}`,
      ]);
      for (const e of announced) {
        expect(e.type).toBe('email.role_mail.received');
        expect(e.data).toMatchObject({ channel: 'email', customerId: a.accountId });
        expect(e.data.payload).toEqual({
          event: 'email.role_mail.received',
          data: {
            id: expect.any(String),
            address: expect.stringMatching(/^(postmaster|abuse)@/),
            from: 'reporter@example.org',
            subject: 'announced',
            receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          },
        });
      }
      expect(announced.map((e) => e.data.payload.data.id).sort()).toEqual(stored.map((m) => m.id).sort());
      expect(sseB.messages).toEqual([]);
    } finally {
      sseA.close();
      sseB.close();
    }
  });

  it('pages the same mail through GraphQL roleMail (REST cursors), with bodies and node(id), for the owner only', async () => {
    const a = await t.newAccount();
    const b = await t.newAccount();
    const domain = await customDomain(a, true);
    await send(`postmaster@${domain}`, 'first', '<gql-1@example.org>');
    await send(`abuse@${domain}`, 'second', '<gql-2@example.org>');
    await send(`postmaster@${domain}`, 'third', '<gql-3@example.org>');

    const all = await a.gql(RoleMail, { first: 10 });
    expect(all.errors).toBeUndefined();
    const nodes = all.data!.roleMail.edges.map((e) => e.node);
    expect(nodes.map((n) => n.subject)).toEqual(['first', 'second', 'third']);
    const rest = await a.request('GET', '/api/email/role-mail');
    expect(nodes).toEqual(
      rest.body.messages.map((m: Record<string, unknown>) => ({ ...m, receivedAt: expect.any(String) })),
    );

    // Forward by one: the edge cursor is REST's nextCursor, so one cursor moves between the two.
    const p1 = await a.gql(RoleMail, { first: 1 });
    expect(p1.data!.roleMail.pageInfo.hasNextPage).toBe(true);
    const restPage = await a.request('GET', '/api/email/role-mail?limit=1');
    expect(p1.data!.roleMail.pageInfo.endCursor).toBe(restPage.body.nextCursor);
    const p2 = await a.gql(RoleMail, { first: 2, after: p1.data!.roleMail.pageInfo.endCursor });
    expect(p2.data!.roleMail.edges.map((e) => e.node.subject)).toEqual(['second', 'third']);
    expect(p2.data!.roleMail.pageInfo.hasNextPage).toBe(false);
    // Backward: the last one before the third.
    const back = await a.gql(RoleMail, { last: 1, before: p2.data!.roleMail.edges[1]!.cursor });
    expect(back.data!.roleMail.edges.map((e) => e.node.subject)).toEqual(['second']);

    const bodies = await a.gql(RoleMailBodies);
    expect(bodies.data!.roleMail.edges.map((e) => e.node.body)).toEqual([
      'Report about first.',
      'Report about second.',
      'Report about third.',
    ]);
    const id = nodes[1]!.id;
    expect((await a.gql(RoleMailNode, { id })).data!.node).toEqual({
      __typename: 'RoleMessage',
      id,
      recipient: `abuse@${domain}`,
      subject: 'second',
      body: 'Report about second.',
    });

    // Another account: an empty connection, and null for the id.
    expect((await b.gql(RoleMail, { first: 10 })).data!.roleMail.edges).toEqual([]);
    expect((await b.gql(RoleMailNode, { id })).data!.node).toBeNull();
    // A key without the email scope: FORBIDDEN; a cursor we did not issue: INVALID_CURSOR.
    const narrow = await t.newAccount(['compliance']);
    expect((await narrow.gql(RoleMail, { first: 1 })).errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
    expect((await a.gql(RoleMail, { first: 1, after: '!!' })).errors?.[0]?.extensions).toMatchObject({
      code: 'INVALID_CURSOR',
    });
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
