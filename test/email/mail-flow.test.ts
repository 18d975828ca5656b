import { beforeEach, describe, expect, vi } from 'vitest';
import type { StoredEvent } from '../../src/domain/events/event-log.js';
import { ManualClock } from '../../src/infra/clock.js';
import type { TestAccount } from '../helpers/app.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { appTest } from '../helpers/fixture.js';
import { SPF_LOOPBACK } from '../helpers/mail-auth.js';
import { type FakeModel, type SmtpSink, smtpSend, startFakeModel, startSmtpSink } from '../helpers/mail-peers.js';

let sink: SmtpSink;
let model: FakeModel;
let dns: TestDnsServer;
const clock = new ManualClock();
const it = appTest(async ({ onCleanup }) => {
  sink = await startSmtpSink();
  model = await startFakeModel();
  dns = await startDnsServer({ 'example.com': { TXT: [SPF_LOOPBACK] }, 'example.org': { TXT: [SPF_LOOPBACK] } });
  onCleanup(() => sink.close());
  onCleanup(() => model.close());
  onCleanup(() => dns.close());
  return {
    clock,
    env: {
      DNS_SERVERS: dns.address,
      SMTP_RELAY_URL: sink.url,
      LLM_BASE_URL: model.baseURL,
      LLM_API_KEY: 'test-llm-key',
      SMTP_MAX_RECIPIENTS: '2',
      SMTP_MAX_MESSAGE_BYTES: '65536',
      AGENT_REPLIES_PER_SENDER: '2',
      EMAIL_DOMAINS: 'agents.switchboard.local, Mail.Acme.test',
    },
  };
});

describe('email over real SMTP: inbound listener, relay, local delivery, agents', () => {
  let port: number;
  const events: StoredEvent[] = [];
  let n = 0;
  const unique = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

  it.beforeAll(async ({ t }) => {
    port = t.app.smtpPort()!;
    t.app.ctx.bus.subscribe((e) => events.push(e));
  });
  beforeEach(() => {
    model.respond = () => ({ status: 200, text: 'Thanks for your mail.' });
    sink.rejectWith(undefined);
  });

  // The mail events of an account (identity lifecycle events, email.identity.*, are not what these tests follow).
  const eventsOf = (a: TestAccount, type?: string) =>
    events.filter(
      (e) =>
        e.accountId === a.accountId && !e.eventType.startsWith('email.identity.') && (!type || e.eventType === type),
    );

  async function identity(a: TestAccount, body: Record<string, unknown> = {}) {
    const res = await a.request('POST', '/api/email/identities', { localPart: unique('box'), ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string; address: string };
  }

  async function agent(a: TestAccount, body: Record<string, unknown> = {}) {
    const res = await a.request('POST', '/api/agents', {
      name: 'Support',
      systemPrompt: 'You are the support desk of Acme.',
      textModel: 'acme-small',
      contextSources: ['sms', 'calls', 'knowledge'],
      ...body,
    });
    expect(res.status).toBe(201);
    return res.body as { id: string };
  }

  async function threads(a: TestAccount, identityId: string) {
    const res = await a.request('GET', `/api/email/identities/${identityId}/threads`);
    expect(res.status).toBe(200);
    return res.body.threads as { threadId: string; subject: string; messageCount: number; participants: string[] }[];
  }

  async function thread(a: TestAccount, identityId: string, threadId: string) {
    const res = await a.request('GET', `/api/email/identities/${identityId}/threads/${threadId}`);
    expect(res.status).toBe(200);
    return res.body;
  }

  it('a real SMTP client delivers to an identity: stored, threaded by In-Reply-To, email.received as in 6.1', async ({
    a,
  }) => {
    const box = await identity(a);
    const first = await smtpSend(port, {
      from: 'Alice <alice@example.com>',
      to: box.address,
      subject: 'Hello',
      text: 'Hi there',
    });
    expect(first.accepted).toEqual([box.address]);
    const [summary] = await threads(a, box.id);
    expect(summary).toMatchObject({
      subject: 'Hello',
      messageCount: 1,
      participants: ['alice@example.com', box.address],
    });
    // The bus delivers after the commit, not necessarily before the answer: wait for the event itself.
    const received = await vi.waitFor(
      () => {
        const got = eventsOf(a, 'email.received');
        expect(got).toHaveLength(1);
        return got;
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(received[0]!.payload).toEqual({
      event: 'email.received',
      data: {
        identityId: box.id,
        from: 'alice@example.com',
        to: box.address,
        subject: 'Hello',
        threadId: summary!.threadId,
        messageId: first.messageId,
        authentication: {
          spf: 'pass',
          dkim: 'none',
          dmarc: 'none',
          arc: 'none',
          authenticated: true,
          authenticatedBy: 'spf',
        },
        labels: ['received'],
      },
    });

    await smtpSend(port, {
      from: 'alice@example.com',
      to: box.address,
      subject: 'Re: Hello',
      text: 'One more thing',
      inReplyTo: first.messageId,
      references: [first.messageId],
    });
    await smtpSend(port, { from: 'alice@example.com', to: box.address, subject: 'Hello', text: 'unrelated' });
    const list = await threads(a, box.id);
    expect(list).toHaveLength(2);
    expect(list[0]!.messageCount).toBe(1); // the newest thread first
    const detail = await thread(a, box.id, summary!.threadId);
    expect(detail.messageCount).toBe(2);
    expect(detail.messages.map((m: { body: string }) => m.body)).toEqual(['Hi there', 'One more thing']);
    expect(detail.messages[1]).toMatchObject({
      from: 'alice@example.com',
      to: [box.address],
      direction: 'inbound',
      status: 'received',
      inReplyTo: first.messageId,
      agent: null,
    });
    expect(detail.messages[1].sentAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('a re-delivery of a stored Message-ID is accepted and stores nothing; a reply joins a thread with labels set meanwhile', async ({
    a,
  }) => {
    const box = await identity(a);
    const mail = {
      from: 'bob@example.com',
      to: box.address,
      subject: 'Twice',
      text: 'sent twice',
      messageId: `<${unique('twice')}@example.com>`,
    };
    expect((await smtpSend(port, mail)).accepted).toEqual([box.address]);
    // The sender did not see the first 250 and retries: accepted again, one copy, one email.received.
    expect((await smtpSend(port, mail)).accepted).toEqual([box.address]);
    const [summary] = await threads(a, box.id);
    expect(summary).toMatchObject({ subject: 'Twice', messageCount: 1 });
    const label = await a.request('PATCH', `/api/email/identities/${box.id}/threads/${summary!.threadId}`, {
      addLabels: ['customer'],
    });
    expect(label.status).toBe(200);
    await smtpSend(port, { ...mail, subject: 'Re: Twice', messageId: undefined, inReplyTo: mail.messageId });
    const detail = await thread(a, box.id, summary!.threadId);
    expect(detail.messageCount).toBe(2);
    expect(detail.labels).toEqual(expect.arrayContaining(['customer', 'received']));
    const received = await vi.waitFor(
      () => {
        const got = eventsOf(a, 'email.received').filter((e) => (e.payload.data as { to: string }).to === box.address);
        expect(got).toHaveLength(2);
        return got;
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(received.map((e) => (e.payload.data as { threadId: string }).threadId)).toEqual([
      summary!.threadId,
      summary!.threadId,
    ]);
  });

  it('stores mail with NUL bytes (which PostgreSQL text cannot hold) without them instead of answering 451 forever', async ({
    a,
  }) => {
    const box = await identity(a);
    const info = await smtpSend(port, {
      from: 'nul@example.com',
      to: box.address,
      subject: 'Null\u0000 inside',
      text: 'before\u0000after',
      headers: { 'Auto-Submitted': 'no' },
    });
    expect(info.accepted).toEqual([box.address]);
    const [summary] = await threads(a, box.id);
    expect(summary).toMatchObject({ subject: 'Null inside' });
    const detail = await thread(a, box.id, summary!.threadId);
    expect(detail.messages[0]).toMatchObject({ from: 'nul@example.com', subject: 'Null inside', body: 'beforeafter' });
  });

  it('refuses unknown and deprovisioned recipients with 550 at RCPT, too many recipients with 452, big mail with 552', async ({
    a,
  }) => {
    const box = await identity(a);
    const gone = await identity(a);
    expect((await a.request('DELETE', `/api/email/identities/${gone.id}`)).body).toEqual({ status: 'deprovisioning' });

    await expect(
      smtpSend(port, { from: 'x@example.com', to: `nobody-${unique('')}@example.com`, subject: 's', text: 'b' }),
    ).rejects.toMatchObject({ responseCode: 550 });
    await expect(
      smtpSend(port, { from: 'x@example.com', to: gone.address, subject: 's', text: 'b' }),
    ).rejects.toMatchObject({ responseCode: 550 });
    // A message with one good and one refused recipient is stored for the good one only.
    const mixed = await smtpSend(port, {
      from: 'x@example.com',
      to: [box.address, gone.address],
      subject: 'mixed',
      text: 'b',
    });
    expect(mixed.rejected).toEqual([gone.address]);
    expect(await threads(a, box.id)).toHaveLength(1);
    expect(await threads(a, gone.id)).toHaveLength(0); // still readable, nothing new

    const b1 = await identity(a);
    const b2 = await identity(a);
    const many = await smtpSend(port, {
      from: 'x@example.com',
      to: [box.address, b1.address, b2.address],
      subject: 'm',
      text: 'b',
    });
    expect(many.accepted).toHaveLength(2);
    expect(many.rejectedErrors?.[0]).toMatchObject({ responseCode: 452 });

    await expect(
      smtpSend(port, { from: 'x@example.com', to: box.address, subject: 'big', text: 'x'.repeat(70_000) }),
    ).rejects.toMatchObject({ responseCode: 552 });
    expect(await threads(a, box.id)).toHaveLength(2);
  });

  it('sends through the relay with our Message-ID; a reply carries In-Reply-To, References and one Re:', async ({
    a,
  }) => {
    const box = await identity(a, { displayName: 'Acme Sales' });
    const peer = `${unique('bob')}@example.net`;
    const sent = await a.request('POST', `/api/email/identities/${box.id}/send`, {
      to: peer,
      subject: 'Quote',
      body: 'Our offer.',
    });
    expect(sent.status).toBe(202);
    expect(sent.body.messageId).toMatch(/^<[^@<>]+@agents\.switchboard\.local>$/);
    const out = sink.messages.find((m) => m.rcptTo.includes(peer))!;
    expect(out.mailFrom).toBe(box.address);
    expect(out.parsed.messageId).toBe(sent.body.messageId);
    expect(out.parsed.subject).toBe('Quote');
    expect(out.parsed.from?.value[0]).toMatchObject({ name: 'Acme Sales', address: box.address });
    expect(out.parsed.text?.trim()).toBe('Our offer.');
    await vi.waitFor(
      () =>
        expect(eventsOf(a, 'email.sent')[0]?.payload).toMatchObject({
          event: 'email.sent',
          data: { identityId: box.id, to: peer, messageId: sent.body.messageId, status: 'sent' },
        }),
      { timeout: 10_000, interval: 20 },
    );

    const answer = await smtpSend(port, {
      from: peer,
      to: box.address,
      subject: 'Re: Quote',
      text: 'Looks good',
      inReplyTo: sent.body.messageId,
      references: [sent.body.messageId],
    });
    const reply = await a.request('POST', `/api/email/identities/${box.id}/reply`, {
      threadId: sent.body.threadId,
      body: 'Great, sending the contract.',
    });
    expect(reply.status).toBe(202);
    expect(reply.body.threadId).toBe(sent.body.threadId);
    const second = sink.messages.filter((m) => m.rcptTo.includes(peer))[1]!;
    expect(second.parsed.subject).toBe('Re: Quote');
    expect(second.parsed.inReplyTo).toBe(answer.messageId);
    expect(second.parsed.references).toEqual([sent.body.messageId, answer.messageId]);
    expect(second.parsed.messageId).toBe(reply.body.messageId);
    const detail = await thread(a, box.id, sent.body.threadId);
    expect(detail.messages.map((m: { direction: string; status: string }) => `${m.direction}:${m.status}`)).toEqual([
      'outbound:sent',
      'inbound:received',
      'outbound:sent',
    ]);
    expect(detail.participants).toEqual([box.address, peer]);
  });

  it('a relay 5xx fails the message visibly; a 4xx is retried after 30 s and then sent', async ({ t, a }) => {
    const box = await identity(a);
    sink.rejectWith(550, 'no such user');
    const bad = await a.request('POST', `/api/email/identities/${box.id}/send`, {
      to: 'ghost@example.net',
      subject: 's',
      body: 'b',
    });
    let detail = await thread(a, box.id, bad.body.threadId);
    expect(detail.messages[0]).toMatchObject({ status: 'failed' });
    expect(detail.messages[0].statusDetail).toContain('550');
    await vi.waitFor(
      () =>
        expect(eventsOf(a, 'email.delivery_failed')[0]?.payload).toMatchObject({
          data: { messageId: bad.body.messageId, status: 'failed' },
        }),
      { timeout: 10_000, interval: 20 },
    );

    sink.rejectWith(451, 'try later');
    const later = await a.request('POST', `/api/email/identities/${box.id}/send`, {
      to: 'slow@example.net',
      subject: 's',
      body: 'b',
    });
    detail = await thread(a, box.id, later.body.threadId);
    expect(detail.messages[0]).toMatchObject({ status: 'queued' });
    sink.rejectWith(undefined);
    clock.advance(30_000);
    await t.drain();
    detail = await thread(a, box.id, later.body.threadId);
    expect(detail.messages[0]).toMatchObject({ status: 'sent' });
  });

  it('mail to another identity of the service is delivered locally through the inbound path', async ({ t, a }) => {
    const b = await t.newAccount();
    const from = await identity(a);
    const to = await identity(b);
    const before = sink.messages.length;
    const sent = await a.request('POST', `/api/email/identities/${from.id}/send`, {
      to: to.address,
      subject: 'Local',
      body: 'Hi B',
    });
    expect(sink.messages.length).toBe(before);
    const [summary] = await threads(b, to.id);
    const detail = await thread(b, to.id, summary!.threadId);
    expect(detail.messages[0]).toMatchObject({ messageId: sent.body.messageId, from: from.address, body: 'Hi B' });
    expect((await thread(a, from.id, sent.body.threadId)).messages[0]).toMatchObject({ status: 'delivered' });
    await vi.waitFor(
      () => {
        expect(eventsOf(b, 'email.received')).toHaveLength(1);
        expect(eventsOf(a, 'email.sent')).toHaveLength(1);
      },
      { timeout: 10_000, interval: 20 },
    );
  });

  it('identities exist only on hosted domains, so no account can capture mail another sends outside the service', async ({
    t,
    a,
  }) => {
    const b = await t.newAccount();
    const ceo = `${unique('ceo')}@bigcustomer.com`;
    const [localPart] = ceo.split('@');
    const grab = await b.request('POST', '/api/email/identities', { localPart, domain: 'BigCustomer.com' });
    expect(grab.status).toBe(422);
    expect(grab.body.error).toMatchObject({ code: 'DOMAIN_NOT_HOSTED', field: 'domain' });
    expect((await b.request('GET', '/api/email/identities')).body.identities).toEqual([]);

    const from = await identity(a);
    const sent = await a.request('POST', `/api/email/identities/${from.id}/send`, {
      to: ceo,
      subject: 'Deal',
      body: 'x',
    });
    expect(sent.status).toBe(202);
    expect(sink.messages.filter((m) => m.rcptTo.includes(ceo))).toHaveLength(1);
    expect((await thread(a, from.id, sent.body.threadId)).messages[0]).toMatchObject({ status: 'sent' });
    expect(eventsOf(b, 'email.received')).toEqual([]);
    // Inbound SMTP answers only for hosted domains.
    await expect(smtpSend(port, { from: 'x@example.com', to: ceo, subject: 's', text: 'b' })).rejects.toMatchObject({
      responseCode: 550,
    });

    // Any hosted domain works, in any case, and mail to it stays local.
    const second = await identity(b, { domain: 'mail.acme.TEST' });
    expect(second.address).toMatch(/@mail\.acme\.test$/);
    const before = sink.messages.length;
    await a.request('POST', `/api/email/identities/${from.id}/send`, { to: second.address, subject: 'Hi', body: 'y' });
    expect(sink.messages.length).toBe(before);
    expect(await threads(b, second.id)).toHaveLength(1);
  });

  it('an agent answers on the same thread with SMS and knowledge context in the prompt', async ({ t, a }) => {
    const support = await agent(a, { contextSources: ['sms', 'knowledge'] });
    const box = await identity(a, { agentId: support.id });
    await a.request('POST', `/api/agents/${support.id}/knowledge`, {
      title: 'Refund policy',
      content: 'Late orders are refunded in full within 5 business days.',
    });
    await a.request('POST', `/api/agents/${support.id}/knowledge`, {
      title: 'Parking',
      content: 'Visitors park in lot C.',
    });
    await a.request('POST', '/api/events', {
      eventType: 'sms.received',
      payload: {
        id: 'sms-1',
        from: '+14155550123',
        to: '+14155550100',
        status: 'received',
        body: 'my order 881 is late',
      },
    });
    await a.request('POST', '/api/events', {
      eventType: 'sms.received',
      payload: {
        id: 'sms-2',
        from: '+14155559999',
        to: '+14155550100',
        status: 'received',
        body: 'someone else entirely',
      },
    });
    model.respond = () => ({ status: 200, text: 'Sorry about the delay, your refund is on its way.' });
    const before = model.requests.length;
    const customer = `${unique('carol')}@example.com`;
    // The customer is a contact owning that number: their SMS history is theirs to see.
    await a.request('POST', '/api/contacts', { name: 'Carol', emails: [customer], phones: ['+14155550123'] });
    const inbound = await smtpSend(port, {
      from: customer,
      to: box.address,
      subject: 'Refund for late order',
      text: 'My order is late, can I get a refund? Call me at (415) 555-0123.',
    });
    expect(eventsOf(a, 'email.agent.response')).toHaveLength(0); // stored first, answered by the worker
    await t.drain();

    expect(model.requests.length).toBe(before + 1);
    const req = model.requests.at(-1)!;
    expect(req.authorization).toBe('Bearer test-llm-key');
    expect(req.body.model).toBe('acme-small');
    const system = req.body.messages.find((m) => m.role === 'system')!.content;
    const user = req.body.messages.find((m) => m.role === 'user')!.content;
    expect(system).toContain('You are the support desk of Acme.');
    expect(user).toContain('my order 881 is late');
    expect(user).not.toContain('someone else entirely');
    expect(user).toContain('Late orders are refunded in full');
    expect(user).not.toContain('lot C');
    expect(user).toContain('can I get a refund?');

    const out = sink.messages.find((m) => m.rcptTo.includes(customer))!;
    expect(out.parsed.subject).toBe('Re: Refund for late order');
    expect(out.parsed.inReplyTo).toBe(inbound.messageId);
    expect(out.parsed.references).toEqual(inbound.messageId);
    expect(out.parsed.headers.get('auto-submitted')).toBe('auto-replied');
    expect(out.parsed.text?.trim()).toBe('Sorry about the delay, your refund is on its way.');

    const [summary] = await threads(a, box.id);
    const detail = await thread(a, box.id, summary!.threadId);
    expect(detail.messages).toHaveLength(2);
    expect(detail.messages[0].agent).toMatchObject({
      status: 'answered',
      attempts: 1,
      replyMessageId: out.parsed.messageId,
    });
    expect(detail.messages[1]).toMatchObject({
      direction: 'outbound',
      status: 'sent',
      subject: 'Re: Refund for late order',
    });
    expect(eventsOf(a).map((e) => e.eventType)).toEqual([
      'sms.received',
      'sms.received',
      'email.received',
      'email.agent.response',
      'email.sent',
    ]);
    expect(eventsOf(a, 'email.agent.response')[0]!.payload).toEqual({
      event: 'email.agent.response',
      data: {
        identityId: box.id,
        agentId: support.id,
        threadId: summary!.threadId,
        inReplyTo: inbound.messageId,
        messageId: out.parsed.messageId,
        from: box.address,
        to: customer,
        subject: 'Re: Refund for late order',
        textModel: 'acme-small',
      },
    });
  });

  it('never answers auto-submitted, bulk, list, null-sender, bounce or own-identity mail', async ({ t, a }) => {
    const support = await agent(a);
    const box = await identity(a, { agentId: support.id });
    const colleague = await identity(a, { agentId: support.id });
    const before = model.requests.length;
    const send = (extra: Record<string, unknown>) =>
      smtpSend(port, { from: 'robot@example.com', to: box.address, subject: 'auto', text: 'x', ...extra });
    await send({ headers: { 'Auto-Submitted': 'auto-replied' } });
    await send({ headers: { Precedence: 'bulk' } });
    await send({ headers: { 'List-Id': '<news.example.com>' } });
    await send({ envelope: { from: '', to: box.address } });
    await send({ from: 'MAILER-DAEMON@example.com' });
    await a.request('POST', `/api/email/identities/${colleague.id}/send`, {
      to: box.address,
      subject: 'internal',
      body: 'hi',
    });
    await t.drain();
    const list = await threads(a, box.id);
    expect(model.requests.length).toBe(before);
    expect(list).toHaveLength(6);
    const reasons: string[] = [];
    for (const s of list) reasons.push((await thread(a, box.id, s.threadId)).messages[0].agent.reason);
    expect(reasons.sort()).toEqual(
      ['AUTO_SUBMITTED', 'BOUNCE', 'EMPTY_RETURN_PATH', 'MAILING_LIST', 'MAILING_LIST', 'OWN_IDENTITY'].sort(),
    );
    expect(eventsOf(a, 'email.received')).toHaveLength(6);
    expect(eventsOf(a, 'email.agent.response')).toHaveLength(0);
  });

  it('answers mail from another identity of the account that the agent does not serve, delivering the answer locally', async ({
    t,
    a,
  }) => {
    const support = await agent(a, { contextSources: ['calls'] });
    const desk = await identity(a, { agentId: support.id });
    const sales = await identity(a);
    // Sales is a contact (by its address); its mail is delivered locally, so it counts as authenticated.
    await a.request('POST', '/api/contacts', { name: 'Sales', emails: [sales.address] });
    // Events name the sender by address here; only `calls` (voice.*) is a source of this agent.
    await a.request('POST', '/api/events', {
      eventType: 'voice.completed',
      payload: {
        id: 'call-1',
        from: '+14155550111',
        to: '+14155550100',
        email: sales.address,
        transcript: 'asked about order 881',
      },
    });
    await a.request('POST', '/api/events', {
      eventType: 'sms.received',
      payload: {
        id: 'sms-9',
        from: '+14155550111',
        to: '+14155550100',
        email: sales.address,
        body: 'sms not a source',
      },
    });
    model.respond = () => ({ status: 200, text: 'It ships tomorrow.' });
    const sent = await a.request('POST', `/api/email/identities/${sales.id}/send`, {
      to: desk.address,
      subject: 'Order 881',
      body: 'When does it ship?',
    });
    await t.drain();
    const user = model.requests.at(-1)!.body.messages.find((m) => m.role === 'user')!.content;
    expect(user).toContain('asked about order 881');
    expect(user).not.toContain('sms not a source');
    const salesThread = await thread(a, sales.id, sent.body.threadId);
    expect(
      salesThread.messages.map((m: { direction: string; subject: string }) => `${m.direction}:${m.subject}`),
    ).toEqual(['outbound:Order 881', 'inbound:Re: Order 881']);
    expect(salesThread.messages[1]).toMatchObject({
      from: desk.address,
      body: 'It ships tomorrow.',
      inReplyTo: sent.body.messageId,
    });
    expect(salesThread.messages[1].agent).toBeNull(); // sales has no agent
    const [deskSummary] = await threads(a, desk.id);
    const deskThread = await thread(a, desk.id, deskSummary!.threadId);
    expect(deskThread.messages[0].agent).toMatchObject({ status: 'answered' });
    expect(deskThread.messages[1]).toMatchObject({ direction: 'outbound', status: 'delivered' });

    // Sales answers on its "Re: Order 881" thread: one Re:, and the mail joins desk's original thread by References.
    const [salesSummary] = await threads(a, sales.id);
    const back = await a.request('POST', `/api/email/identities/${sales.id}/reply`, {
      threadId: salesSummary!.threadId,
      body: 'Thanks!',
    });
    const deskAfter = await thread(a, desk.id, deskSummary!.threadId);
    expect(deskAfter.messages).toHaveLength(3);
    expect(deskAfter.messages[2]).toMatchObject({
      messageId: back.body.messageId,
      subject: 'Re: Order 881',
      body: 'Thanks!',
    });
    expect(deskAfter.messages[2].references).toEqual([sent.body.messageId, deskThread.messages[1].messageId]);
    await t.drain();
    // Live delivery on the bus follows the commit asynchronously: wait for the last event itself.
    await vi.waitFor(() => expect(eventsOf(a)).toHaveLength(12), { timeout: 30_000, interval: 50 });
    expect(eventsOf(a).map((e) => e.eventType)).toEqual([
      'voice.completed',
      'sms.received',
      'email.received',
      'email.sent',
      'email.agent.response',
      'email.received',
      'email.sent',
      'email.received',
      'email.sent',
      'email.agent.response',
      'email.received',
      'email.sent',
    ]);
  });

  it('loop protection: two agents mailing each other stop after one answer; a header-stripping peer hits the budget', async ({
    t,
  }) => {
    const x = await t.newAccount();
    const y = await t.newAccount();
    const ax = await identity(x, { agentId: (await agent(x)).id });
    const ay = await identity(y, { agentId: (await agent(y)).id });
    await x.request('POST', `/api/email/identities/${ax.id}/send`, { to: ay.address, subject: 'Ping', body: 'hello' });
    await t.drain();
    expect(eventsOf(y, 'email.agent.response')).toHaveLength(1);
    expect(eventsOf(x, 'email.agent.response')).toHaveLength(0);
    const [tx] = await threads(x, ax.id);
    const detail = await thread(x, ax.id, tx!.threadId);
    expect(detail.messages.map((m: { subject: string }) => m.subject)).toEqual(['Ping', 'Re: Ping']);
    expect(detail.messages[1].agent).toMatchObject({ status: 'skipped', reason: 'AUTO_SUBMITTED' });

    // A peer that keeps writing without Auto-Submitted gets at most AGENT_REPLIES_PER_SENDER (2) answers.
    const peer = `${unique('bot')}@example.org`;
    let last: string | undefined;
    for (let i = 0; i < 4; i++) {
      const info = await smtpSend(port, {
        from: peer,
        to: ax.address,
        subject: i === 0 ? 'Loop' : 'Re: Loop',
        text: `round ${i}`,
        ...(last ? { inReplyTo: last, references: [last] } : {}),
      });
      last = info.messageId;
      await t.drain();
    }
    expect(eventsOf(x, 'email.agent.response')).toHaveLength(2);
    expect(sink.messages.filter((m) => m.rcptTo.includes(peer))).toHaveLength(2);
    const loop = (await threads(x, ax.id)).find((s) => s.subject === 'Loop')!;
    const loopDetail = await thread(x, ax.id, loop.threadId);
    const inbound = loopDetail.messages.filter((m: { direction: string }) => m.direction === 'inbound');
    expect(inbound.map((m: { agent: { status: string } }) => m.agent.status)).toEqual([
      'answered',
      'answered',
      'skipped',
      'skipped',
    ]);
    expect(inbound[3].agent.reason).toBe('REPLY_BUDGET_EXHAUSTED');
    expect(loopDetail.messages.every((m: { subject: string }) => !m.subject.startsWith('Re: Re:'))).toBe(true);
  });

  it('a model error is retried after 30 s and 2 min, then recorded as failed; the inbound mail stays', async ({
    t,
    a,
  }) => {
    const support = await agent(a);
    const box = await identity(a, { agentId: support.id });
    model.respond = () => ({ status: 503 });
    const before = model.requests.length;
    const inbound = await smtpSend(port, {
      from: 'dave@example.com',
      to: box.address,
      subject: 'Help',
      text: 'please',
    });
    await t.drain();
    const [summary] = await threads(a, box.id);
    let detail = await thread(a, box.id, summary!.threadId);
    expect(detail.messages[0].agent).toMatchObject({ status: 'pending', attempts: 1 });
    expect(detail.messages[0].agent.lastError).toBeTruthy();
    clock.advance(30_000);
    await t.drain();
    detail = await thread(a, box.id, summary!.threadId);
    expect(detail.messages[0].agent).toMatchObject({ status: 'pending', attempts: 2 });
    clock.advance(120_000);
    await t.drain();
    detail = await thread(a, box.id, summary!.threadId);
    expect(model.requests.length).toBe(before + 3);
    expect(detail.messages).toHaveLength(1);
    expect(detail.messages[0]).toMatchObject({ body: 'please', status: 'received' });
    expect(detail.messages[0].agent).toMatchObject({ status: 'failed', reason: 'MODEL_ERROR', attempts: 3 });
    expect(eventsOf(a, 'email.agent.failed')[0]!.payload).toMatchObject({
      event: 'email.agent.failed',
      data: { identityId: box.id, agentId: support.id, messageId: inbound.messageId, attempts: 3 },
    });
    clock.advance(3_600_000);
    await t.drain();
    expect(model.requests.length).toBe(before + 3);
  });

  it('purges a deprovisioned identity and its threads after 30 days, freeing the address', async ({ t, a }) => {
    const box = await identity(a);
    await smtpSend(port, { from: 'e@example.com', to: box.address, subject: 'keep', text: 'x' });
    await a.request('DELETE', `/api/email/identities/${box.id}`);
    clock.advance(29 * 86_400_000);
    await t.drain();
    expect(await threads(a, box.id)).toHaveLength(1);
    clock.advance(2 * 86_400_000);
    await t.drain();
    expect((await a.request('GET', `/api/email/identities/${box.id}`)).status).toBe(404);
    const again = await a.request('POST', '/api/email/identities', { localPart: box.address.split('@')[0] });
    expect(again.status).toBe(201);
  });
});
