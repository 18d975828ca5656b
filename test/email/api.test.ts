import { describe, expect, vi } from 'vitest';
import type { StoredEvent } from '../../src/domain/events/event-log.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const it = appTest({ env: { EMAIL_DOMAINS: 'agents.switchboard.local,mail.acme.test' } });

/** REST surface of identities, threads and agents, with no relay and no model configured. */
describe('email REST API (spec 4.4, 4.5)', () => {
  const events: StoredEvent[] = [];
  let n = 0;
  const unique = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;
  it.beforeAll(async ({ t }) => {
    t.app.ctx.bus.subscribe((e) => events.push(e));
  });

  const details = (res: { body: { error: { details: { field: string; code: string }[] } } }) =>
    res.body.error.details.map((d) => `${d.field}:${d.code}`).sort();

  async function newAgent(a: TestAccount, body: Record<string, unknown> = {}) {
    const res = await a.request('POST', '/api/agents', {
      name: 'Helper',
      systemPrompt: 'Be brief.',
      textModel: 'm1',
      contextSources: ['knowledge'],
      ...body,
    });
    expect(res.status).toBe(201);
    return res.body;
  }

  it('creates an identity with the 2.6 shape, lists, gets, patches and deprovisions it', async ({ t, a }) => {
    const local = unique('Sales.Team+');
    const created = await a.request('POST', '/api/email/identities', { localPart: local, displayName: 'Sales' });
    expect(created.status).toBe(201);
    const address = `${local.toLowerCase()}@agents.switchboard.local`;
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      address,
      localPart: local.toLowerCase(),
      domain: 'agents.switchboard.local',
      displayName: 'Sales',
      agentId: null,
      replyMode: 'send',
      status: 'active',
      smtpHost: 'localhost',
      smtpPort: t.app.smtpSubmissionPort(),
      smtpUser: address,
      smtpPass: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const id = created.body.id;
    const other = await a.request('POST', '/api/email/identities', {
      localPart: unique('info'),
      domain: 'mail.acme.test',
    });
    expect(other.body.address).toMatch(/^info.*@mail\.acme\.test$/);

    const list = await a.request('GET', '/api/email/identities');
    expect(list.status).toBe(200);
    expect(list.body.identities.map((i: { id: string }) => i.id)).toEqual([id, other.body.id]);
    expect((await a.request('GET', `/api/email/identities/${id}`)).body).toEqual(created.body);

    const agent = await newAgent(a);
    const patched = await a.request('PATCH', `/api/email/identities/${id}`, { displayName: null, agentId: agent.id });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ displayName: null, agentId: agent.id });
    const unassigned = await a.request('PATCH', `/api/email/identities/${id}`, { agentId: null });
    expect(unassigned.body).toMatchObject({ agentId: null, displayName: null });

    const deleted = await a.request('DELETE', `/api/email/identities/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ status: 'deprovisioning' });
    expect((await a.request('DELETE', `/api/email/identities/${id}`)).body).toEqual({ status: 'deprovisioning' });
    expect((await a.request('GET', `/api/email/identities/${id}`)).body.status).toBe('deprovisioning');
    const patchGone = await a.request('PATCH', `/api/email/identities/${id}`, { displayName: 'x' });
    expect(patchGone.status).toBe(422);
    expect(patchGone.body.error.code).toBe('IDENTITY_DEPROVISIONING');
    const sendGone = await a.request('POST', `/api/email/identities/${id}/send`, {
      to: 'a@example.com',
      subject: 's',
      body: 'b',
    });
    expect(sendGone.status).toBe(422);
    expect((await a.request('GET', `/api/email/identities/${id}/threads`)).status).toBe(200);
    // The address stays taken until the purge.
    expect((await a.request('POST', '/api/email/identities', { localPart: local })).status).toBe(409);
  });

  it('refuses a send from an identity deprovisioned elsewhere while cached here; stores nothing', async ({ t, a }) => {
    const box = (await a.request('POST', '/api/email/identities', { localPart: unique('cached') })).body;
    const mail = { to: 'someone@example.com', subject: 'hello', body: 'b' };
    expect((await a.request('POST', `/api/email/identities/${box.id}/send`, mail)).status).toBe(202);
    // Another instance deprovisions it: this app's send path still has the identity as it read it.
    await t.app.ctx.db.emailIdentity.updateMany({
      where: { id: box.id },
      data: { status: 'deprovisioning', deprovisionedAt: new Date() },
    });
    const refused = await a.request('POST', `/api/email/identities/${box.id}/send`, mail);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('IDENTITY_DEPROVISIONING');
    const threads = await a.request('GET', `/api/email/identities/${box.id}/threads`);
    expect(threads.body.threads).toHaveLength(1);
  });

  it('validates identity input, reporting every problem', async ({ a }) => {
    const bad = async (body: unknown) => {
      const res = await a.request('POST', '/api/email/identities', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      return details(res);
    };
    expect(await bad({})).toEqual(['localPart:REQUIRED']);
    for (const localPart of ['.lead', 'trail.', 'two..dots', 'sp ace', 'a@b', '"quoted"', '', 'x'.repeat(65)]) {
      expect((await bad({ localPart }))[0]).toMatch(/^localPart:(INVALID_FORMAT|TOO_LONG|TOO_SHORT)$/);
    }
    expect(await bad({ localPart: 'ok', domain: 'no_underscore.example', displayName: 7, extra: 1 })).toEqual([
      'displayName:INVALID_TYPE',
      'domain:INVALID_FORMAT',
      'extra:UNKNOWN_FIELD',
    ]);
    expect(
      await a.request('POST', '/api/email/identities', { localPart: `${unique("o'brien")}!#$%&*+/=?^_\`{|}~-` }),
    ).toMatchObject({
      status: 201,
    });
  });

  it('answers 409 ADDRESS_TAKEN for a duplicate address, in any case and from any account', async ({ t, a }) => {
    const b = await t.newAccount();
    const local = unique('dup');
    expect((await a.request('POST', '/api/email/identities', { localPart: local })).status).toBe(201);
    for (const [acct, lp] of [
      [a, local],
      [a, local.toUpperCase()],
      [b, local],
    ] as const) {
      const res = await acct.request('POST', '/api/email/identities', { localPart: lp });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'ADDRESS_TAKEN', field: 'localPart' });
    }
  });

  it('assigning an agent requires it to exist in the account and to have a textModel', async ({ t, a }) => {
    const b = await t.newAccount();
    const modelless = await newAgent(a, { textModel: undefined });
    expect(modelless.textModel).toBeNull();
    const res = await a.request('POST', '/api/email/identities', { localPart: unique('x'), agentId: modelless.id });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'AGENT_TEXT_MODEL_REQUIRED', field: 'agentId' });
    const foreign = await newAgent(b);
    const res2 = await a.request('POST', '/api/email/identities', { localPart: unique('x'), agentId: foreign.id });
    expect(res2.status).toBe(404);
    expect(res2.body.error).toMatchObject({ code: 'NOT_FOUND', field: 'agentId' });
    const box = await a.request('POST', '/api/email/identities', { localPart: unique('x') });
    const res3 = await a.request('PATCH', `/api/email/identities/${box.body.id}`, { agentId: modelless.id });
    expect(res3.status).toBe(422);
    expect((await a.request('GET', `/api/email/identities/${box.body.id}`)).body.agentId).toBeNull();
  });

  it('keeps accounts apart: another account’s identity, thread and agent answer 404', async ({ t, a }) => {
    const b = await t.newAccount();
    const box = (await a.request('POST', '/api/email/identities', { localPart: unique('t') })).body;
    const sent = (
      await a.request('POST', `/api/email/identities/${box.id}/send`, { to: 'p@example.com', subject: 's', body: 'b' })
    ).body;
    const agent = await newAgent(a);
    const paths: [string, string, unknown?][] = [
      ['GET', `/api/email/identities/${box.id}`],
      ['PATCH', `/api/email/identities/${box.id}`, { displayName: 'x' }],
      ['DELETE', `/api/email/identities/${box.id}`],
      ['POST', `/api/email/identities/${box.id}/send`, { to: 'p@example.com', subject: 's', body: 'b' }],
      ['POST', `/api/email/identities/${box.id}/reply`, { threadId: sent.threadId, body: 'b' }],
      ['GET', `/api/email/identities/${box.id}/threads`],
      ['GET', `/api/email/identities/${box.id}/threads/${sent.threadId}`],
      ['GET', `/api/agents/${agent.id}`],
      ['PATCH', `/api/agents/${agent.id}`, { name: 'x' }],
      ['DELETE', `/api/agents/${agent.id}`],
      ['POST', `/api/agents/${agent.id}/knowledge`, { title: 't', content: 'c' }],
      ['GET', `/api/agents/${agent.id}/knowledge`],
    ];
    for (const [method, path, body] of paths) {
      const res = await b.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect((await b.request('GET', '/api/email/identities')).body.identities).toEqual([]);
    expect((await b.request('GET', '/api/agents')).body.agents).toEqual([]);
    // b's own identity cannot reply on a's thread either.
    const bBox = (await b.request('POST', '/api/email/identities', { localPart: unique('t') })).body;
    const cross = await b.request('POST', `/api/email/identities/${bBox.id}/reply`, {
      threadId: sent.threadId,
      body: 'b',
    });
    expect(cross.status).toBe(404);
    expect(cross.body.error.field).toBe('threadId');
    expect((await a.request('GET', `/api/email/identities/${box.id}`)).body.status).toBe('active');
  });

  it('answers 404 for unknown ids and requires the email scope', async ({ t, a }) => {
    const box = (await a.request('POST', '/api/email/identities', { localPart: unique('u') })).body;
    for (const path of [
      '/api/email/identities/nope',
      `/api/email/identities/${box.id}/threads/nope`,
      '/api/agents/nope',
      '/api/agents/nope/knowledge',
    ]) {
      expect((await a.request('GET', path)).status, path).toBe(404);
    }
    const agent = await newAgent(a);
    expect((await a.request('DELETE', `/api/agents/${agent.id}/knowledge/nope`)).status).toBe(404);
    expect(
      (await a.request('POST', `/api/email/identities/${box.id}/reply`, { threadId: 'nope', body: 'b' })).status,
    ).toBe(404);
    const noScope = await t.newAccount(['compliance']);
    const res = await noScope.request('GET', '/api/email/identities');
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  it('validates send and reply bodies', async ({ a }) => {
    const box = (await a.request('POST', '/api/email/identities', { localPart: unique('v') })).body;
    const res = await a.request('POST', `/api/email/identities/${box.id}/send`, { to: 'not-an-address', subject: '' });
    expect(res.status).toBe(400);
    expect(details(res)).toEqual(['body:REQUIRED', 'subject:TOO_SHORT', 'to:INVALID_FORMAT']);
    const inject = await a.request('POST', `/api/email/identities/${box.id}/send`, {
      to: 'a@example.com',
      subject: 'Hi\r\nBcc: victim@example.com',
      body: 'b',
    });
    expect(details(inject)).toEqual(['subject:INVALID_FORMAT']);
    const res2 = await a.request('POST', `/api/email/identities/${box.id}/reply`, {});
    expect(details(res2)).toEqual(['body:REQUIRED', 'threadId:REQUIRED']);
  });

  it('without a relay, outside mail is stored as undelivered and email.delivery_failed is emitted', async ({ a }) => {
    const box = (await a.request('POST', '/api/email/identities', { localPart: unique('w') })).body;
    const sent = await a.request('POST', `/api/email/identities/${box.id}/send`, {
      to: 'Someone@Example.com',
      subject: 'Hi',
      body: 'text',
    });
    expect(sent.status).toBe(202);
    const detail = await a.request('GET', `/api/email/identities/${box.id}/threads/${sent.body.threadId}`);
    expect(detail.body).toMatchObject({
      threadId: sent.body.threadId,
      subject: 'Hi',
      participants: [box.address, 'someone@example.com'],
      messageCount: 1,
    });
    expect(detail.body.messages[0]).toMatchObject({
      messageId: sent.body.messageId,
      threadId: sent.body.threadId,
      from: box.address,
      to: ['someone@example.com'],
      subject: 'Hi',
      body: 'text',
      direction: 'outbound',
      status: 'undelivered',
    });
    expect(detail.body.messages[0].statusDetail).toMatch(/^NO_RELAY/);
    // The bus delivers after the commit, not necessarily before the answer: wait for the event itself.
    const failed = await vi.waitFor(
      () => {
        const got = events.filter((e) => e.accountId === a.accountId && e.eventType === 'email.delivery_failed');
        expect(got).toHaveLength(1);
        return got;
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(failed[0]!.payload).toMatchObject({ data: { messageId: sent.body.messageId, status: 'undelivered' } });
    // A reply on a thread with only our own message goes to its recipient with one Re:.
    const reply = await a.request('POST', `/api/email/identities/${box.id}/reply`, {
      threadId: sent.body.threadId,
      body: 'again',
    });
    const again = await a.request('GET', `/api/email/identities/${box.id}/threads/${sent.body.threadId}`);
    expect(again.body.messages[1]).toMatchObject({
      messageId: reply.body.messageId,
      to: ['someone@example.com'],
      subject: 'Re: Hi',
      inReplyTo: sent.body.messageId,
      references: [sent.body.messageId],
    });
    await a.request('POST', `/api/email/identities/${box.id}/reply`, { threadId: sent.body.threadId, body: 'third' });
    const third = await a.request('GET', `/api/email/identities/${box.id}/threads/${sent.body.threadId}`);
    expect(third.body.messages[2].subject).toBe('Re: Hi');
    expect(third.body.messages[2].references).toEqual([sent.body.messageId, reply.body.messageId]);
  });

  it('mail to a deprovisioned or unknown address on EMAIL_DOMAIN fails with 550 instead of leaving the service', async ({
    a,
  }) => {
    const box = (await a.request('POST', '/api/email/identities', { localPart: unique('f') })).body;
    const gone = (await a.request('POST', '/api/email/identities', { localPart: unique('g') })).body;
    await a.request('DELETE', `/api/email/identities/${gone.id}`);
    for (const to of [gone.address, `${unique('nobody')}@agents.switchboard.local`]) {
      const sent = await a.request('POST', `/api/email/identities/${box.id}/send`, { to, subject: 's', body: 'b' });
      const detail = await a.request('GET', `/api/email/identities/${box.id}/threads/${sent.body.threadId}`);
      expect(detail.body.messages[0]).toMatchObject({ status: 'failed', statusDetail: expect.stringMatching(/^550 /) });
    }
    expect((await a.request('GET', `/api/email/identities/${gone.id}/threads`)).body.threads).toEqual([]);
  });

  it('pages threads newest activity first with an opaque cursor; nextCursor is "" on the last page', async ({ a }) => {
    const box = (await a.request('POST', '/api/email/identities', { localPart: unique('p') })).body;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await a.request('POST', `/api/email/identities/${box.id}/send`, {
        to: 'x@example.com',
        subject: `T${i}`,
        body: 'b',
      });
      ids.push(r.body.threadId);
    }
    // New activity on the oldest thread moves it to the front.
    await a.request('POST', `/api/email/identities/${box.id}/reply`, { threadId: ids[0], body: 'bump' });
    const expected = [ids[0], ids[4], ids[3], ids[2], ids[1]];
    const seen: string[] = [];
    let cursor = '';
    let pages = 0;
    do {
      const res = await a.request(
        'GET',
        `/api/email/identities/${box.id}/threads?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.threads.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.threads.map((th: { threadId: string }) => th.threadId));
      cursor = res.body.nextCursor;
      expect(typeof cursor).toBe('string');
      pages++;
    } while (cursor !== '');
    expect(pages).toBe(3);
    expect(seen).toEqual(expected);
    const all = await a.request('GET', `/api/email/identities/${box.id}/threads`);
    expect(all.body.nextCursor).toBe('');
    expect(all.body.threads[0]).toMatchObject({ threadId: ids[0], subject: 'T0', messageCount: 2 });

    for (const q of ['limit=0', 'limit=101', 'limit=abc']) {
      const res = await a.request('GET', `/api/email/identities/${box.id}/threads?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
    }
    const badCursor = await a.request('GET', `/api/email/identities/${box.id}/threads?cursor=garbage`);
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.error.code).toBe('INVALID_CURSOR');
    expect((await a.request('GET', `/api/email/identities/${box.id}/threads?limit=100`)).body.threads).toHaveLength(5);
  });

  it('agents: create, list, get, update, delete (unassigning identities) and knowledge documents', async ({ a }) => {
    const created = await a.request('POST', '/api/agents', {
      name: 'Desk',
      systemPrompt: 'Help.',
      textModel: 'gpt-x',
      contextSources: ['sms', 'calls', 'knowledge'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Desk',
      systemPrompt: 'Help.',
      textModel: 'gpt-x',
      contextSources: ['sms', 'calls', 'knowledge'],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const id = created.body.id;
    expect((await a.request('GET', '/api/agents')).body.agents).toEqual([created.body]);
    expect((await a.request('GET', `/api/agents/${id}`)).body).toEqual(created.body);
    const updated = await a.request('PATCH', `/api/agents/${id}`, {
      contextSources: ['sms'],
      systemPrompt: 'Be kind.',
    });
    expect(updated.body).toMatchObject({ contextSources: ['sms'], systemPrompt: 'Be kind.', textModel: 'gpt-x' });

    const box = (await a.request('POST', '/api/email/identities', { localPart: unique('ag'), agentId: id })).body;
    const clear = await a.request('PATCH', `/api/agents/${id}`, { textModel: null });
    expect(clear.status).toBe(409);
    expect(clear.body.error).toMatchObject({ code: 'AGENT_ASSIGNED', field: 'textModel' });

    const doc = await a.request('POST', `/api/agents/${id}/knowledge`, { title: 'Hours', content: 'Open 9-5.' });
    expect(doc.status).toBe(201);
    expect(doc.body).toEqual({
      id: expect.any(String),
      agentId: id,
      title: 'Hours',
      content: 'Open 9-5.',
      createdAt: expect.any(String),
    });
    expect((await a.request('GET', `/api/agents/${id}/knowledge`)).body).toEqual({
      documents: [doc.body],
      nextCursor: null,
    });
    expect((await a.request('DELETE', `/api/agents/${id}/knowledge/${doc.body.id}`)).status).toBe(204);
    expect((await a.request('GET', `/api/agents/${id}/knowledge`)).body).toEqual({ documents: [], nextCursor: null });

    expect((await a.request('DELETE', `/api/agents/${id}`)).status).toBe(204);
    expect((await a.request('GET', `/api/agents/${id}`)).status).toBe(404);
    expect((await a.request('GET', `/api/email/identities/${box.id}`)).body.agentId).toBeNull();
  });

  it('validates agent and knowledge input', async ({ a }) => {
    const res = await a.request('POST', '/api/agents', { systemPrompt: 5, contextSources: ['sms', 'email', 'sms'] });
    expect(res.status).toBe(400);
    expect(details(res)).toEqual(['contextSources.1:INVALID_ENUM_VALUE', 'name:REQUIRED', 'systemPrompt:INVALID_TYPE']);
    const dup = await a.request('POST', '/api/agents', { name: 'n', contextSources: ['sms', 'sms'] });
    expect(details(dup)).toEqual(['contextSources:DUPLICATE']);
    const agent = await newAgent(a);
    const patch = await a.request('PATCH', `/api/agents/${agent.id}`, { name: '', bogus: true });
    expect(details(patch)).toEqual(['bogus:UNKNOWN_FIELD', 'name:TOO_SHORT']);
    const doc = await a.request('POST', `/api/agents/${agent.id}/knowledge`, { title: '' });
    expect(details(doc)).toEqual(['content:REQUIRED', 'title:TOO_SHORT']);
  });
});
