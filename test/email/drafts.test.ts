import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { graphql } from '../generated/gql.js';
import { collect, latestEventId } from '../graphql/typed-subscriptions.scenario.js';
import { accountClient, startApp, type TestAccount, type TestApp, tempDir, usingPostgres } from '../helpers/app.js';
import { payload } from '../helpers/graphql.js';
import { type FakeModel, type SmtpSink, smtpSend, startFakeModel, startSmtpSink } from '../helpers/mail-peers.js';

let n = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

async function identity(a: TestAccount, extra: Record<string, unknown> = {}) {
  const res = await a.request('POST', '/api/email/identities', { localPart: unique('draft'), ...extra });
  expect(res.status).toBe(201);
  return res.body as { id: string; address: string; replyMode: string };
}

async function eventTypes(a: TestAccount, prefix: string) {
  const res = await a.request('GET', '/api/events/history?channels=email&limit=1000');
  return (res.body.events as { eventType: string; payload: { data: Record<string, unknown> } }[]).filter((e) =>
    e.eventType.startsWith(prefix),
  );
}

const GqlCreate = graphql(`
  mutation DraftCreate($input: CreateEmailDraftInput!) {
    createEmailDraft(input: $input) {
      __typename
      ... on CreateEmailDraftPayload { draft { draftId subject to sendAt createdBy attachments { filename size downloadPath } } }
      ... on Error { code field }
    }
  }
`);
const GqlUpdate = graphql(`
  mutation DraftUpdate($input: UpdateEmailDraftInput!) {
    updateEmailDraft(input: $input) {
      __typename
      ... on UpdateEmailDraftPayload { draft { draftId subject body } }
      ... on Error { code field }
    }
  }
`);
const GqlSend = graphql(`
  mutation DraftSend($input: SendEmailDraftInput!) {
    sendEmailDraft(input: $input) {
      __typename
      ... on SendEmailDraftPayload { messageId thread { subject messageCount } }
      ... on Error { code field }
    }
  }
`);
const GqlList = graphql(`
  query DraftList($identityId: ID!) {
    emailDrafts(identityId: $identityId) { drafts { draftId subject createdBy reviewReason } nextCursor }
    emailIdentity(id: $identityId) { replyMode }
  }
`);

/** Issue 21 item 3: drafts on both surfaces, sent on request, agent drafts for review. */
describe('drafts: write, review, send (REST and GraphQL)', () => {
  let t: TestApp;
  let sink: SmtpSink;
  let model: FakeModel;

  beforeAll(async () => {
    sink = await startSmtpSink();
    model = await startFakeModel();
    t = await startApp({ env: { SMTP_RELAY_URL: sink.url, LLM_BASE_URL: model.baseURL, LLM_API_KEY: 'k' } });
  });
  afterAll(async () => {
    await t?.close();
    await sink?.close();
    await model?.close();
  });

  it('creates, lists, changes and sends a draft with an attachment; the draft is then gone', async () => {
    const a = await t.newAccount();
    const box = await identity(a);
    expect(box.replyMode).toBe('send');
    const rcpt = `${unique('client')}@remote.example`;
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(5000, 9)]);
    const created = await a.request('POST', `/api/email/identities/${box.id}/drafts`, {
      subject: 'Invoice 7',
      body: 'first words',
      attachments: [{ filename: 'invoice.pdf', contentType: 'application/pdf', content: pdf.toString('base64') }],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      identityId: box.id,
      threadId: null,
      to: [],
      subject: 'Invoice 7',
      body: 'first words',
      sendAt: null,
      createdBy: 'user',
      attachments: [{ filename: 'invoice.pdf', contentType: 'application/pdf', size: pdf.length }],
    });
    const draftId = created.body.draftId as string;

    // Not complete yet: no recipient.
    const early = await a.request('POST', `/api/email/identities/${box.id}/drafts/${draftId}/send`);
    expect(early.status).toBe(422);
    expect(early.body.error).toMatchObject({ code: 'DRAFT_INCOMPLETE', field: 'to' });

    const patched = await a.request('PATCH', `/api/email/identities/${box.id}/drafts/${draftId}`, {
      to: rcpt,
      cc: ['Copy@Remote.example'],
      body: 'Please find the invoice attached.',
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ to: [rcpt], cc: ['copy@remote.example'], subject: 'Invoice 7' });

    // The reviewer can download the attachment as it will be sent.
    const attachmentId = created.body.attachments[0].attachmentId as string;
    const file = await fetch(`${t.url}/api/email/identities/${box.id}/drafts/${draftId}/attachments/${attachmentId}`, {
      headers: { authorization: `Bearer ${a.apiKey}` },
    });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-disposition')).toContain('filename="invoice.pdf"');
    expect(Buffer.compare(Buffer.from(await file.arrayBuffer()), pdf)).toBe(0);
    const noFile = await a.request('GET', `/api/email/identities/${box.id}/drafts/${draftId}/attachments/nope`);
    expect(noFile.status).toBe(404);
    expect(noFile.body.error.field).toBe('attachmentId');

    const list = await a.request('GET', `/api/email/identities/${box.id}/drafts`);
    expect(list.status).toBe(200);
    expect(list.body.drafts.map((d: { draftId: string }) => d.draftId)).toEqual([draftId]);
    expect((await a.request('GET', `/api/email/identities/${box.id}/drafts/${draftId}`)).body.body).toBe(
      'Please find the invoice attached.',
    );

    const sent = await a.request('POST', `/api/email/identities/${box.id}/drafts/${draftId}/send`);
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ messageId: expect.stringMatching(/^<.+>$/), threadId: expect.any(String) });
    const gone = await a.request('GET', `/api/email/identities/${box.id}/drafts/${draftId}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ code: 'NOT_FOUND', field: 'draftId' });

    const got = await vi.waitFor(
      () => {
        const m = sink.messages.find((x) => x.parsed.messageId === sent.body.messageId);
        expect(m).toBeDefined();
        return m!;
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(got.rcptTo.sort()).toEqual(['copy@remote.example', rcpt].sort());
    expect(got.parsed.subject).toBe('Invoice 7');
    expect(got.parsed.text?.trim()).toBe('Please find the invoice attached.');
    expect(got.parsed.attachments.map((x) => x.filename)).toEqual(['invoice.pdf']);
    expect(Buffer.compare(got.parsed.attachments[0]!.content, pdf)).toBe(0);

    const thread = await a.request('GET', `/api/email/identities/${box.id}/threads/${sent.body.threadId}`);
    expect(thread.body.messages).toHaveLength(1);
    expect(thread.body.messages[0]).toMatchObject({ direction: 'outbound', subject: 'Invoice 7', labels: ['sent'] });

    const events = await eventTypes(a, 'email.draft.');
    expect(events.map((e) => e.eventType)).toEqual(['email.draft.created', 'email.draft.updated', 'email.draft.sent']);
    expect(events[2]!.payload.data).toMatchObject({
      draftId,
      identityId: box.id,
      messageId: sent.body.messageId,
      threadId: sent.body.threadId,
    });
  });

  it('a reply draft answers on its thread with In-Reply-To and a Re: subject', async () => {
    const a = await t.newAccount();
    const box = await identity(a);
    const peer = await identity(a);
    const first = await a.request('POST', `/api/email/identities/${peer.id}/send`, {
      to: box.address,
      subject: 'Question',
      body: 'When is it due?',
    });
    expect(first.status).toBe(202);
    const inbound = await vi.waitFor(
      async () => {
        const list = await a.request('GET', `/api/email/identities/${box.id}/threads`);
        expect(list.body.threads).toHaveLength(1);
        return list.body.threads[0] as { threadId: string };
      },
      { timeout: 20_000, interval: 50 },
    );
    const draft = await a.request('POST', `/api/email/identities/${box.id}/drafts`, {
      threadId: inbound.threadId,
      body: 'Friday.',
    });
    expect(draft.status).toBe(201);
    expect(draft.body).toMatchObject({
      threadId: inbound.threadId,
      to: [peer.address],
      subject: 'Re: Question',
      inReplyTo: first.body.messageId,
    });
    const sent = await a.request('POST', `/api/email/identities/${box.id}/drafts/${draft.body.draftId}/send`);
    expect(sent.status).toBe(202);
    expect(sent.body.threadId).toBe(inbound.threadId);
    const thread = await a.request('GET', `/api/email/identities/${box.id}/threads/${inbound.threadId}`);
    expect(thread.body.messages.map((m: { direction: string }) => m.direction)).toEqual(['inbound', 'outbound']);
    expect(thread.body.messages[1]).toMatchObject({ inReplyTo: first.body.messageId, to: [peer.address] });
  });

  it('reply-draft changes appear in GraphQL threadUpdated', async () => {
    const a = await t.newAccount();
    const box = await identity(a);
    const peer = await identity(a);
    await a.request('POST', `/api/email/identities/${peer.id}/send`, { to: box.address, subject: 'Subs', body: 'x' });
    const threadId = await vi.waitFor(
      async () => {
        const list = await a.request('GET', `/api/email/identities/${box.id}/threads`);
        expect(list.body.threads).toHaveLength(1);
        return list.body.threads[0].threadId as string;
      },
      { timeout: 20_000, interval: 50 },
    );
    const cursor = await latestEventId(a);
    const d = await a.request('POST', `/api/email/identities/${box.id}/drafts`, { threadId, body: 'draft' });
    await a.request('PATCH', `/api/email/identities/${box.id}/drafts/${d.body.draftId}`, { body: 'better' });
    expect((await a.request('POST', `/api/email/identities/${box.id}/drafts/${d.body.draftId}/send`)).status).toBe(202);
    const changes = await collect(
      t.url,
      a.apiKey,
      `subscription ($id: ID!, $lastEventId: String) {
        threadUpdated(identityId: $id, lastEventId: $lastEventId) { eventType thread { threadId messageCount } }
      }`,
      { id: box.id, lastEventId: cursor },
      4,
    );
    expect(changes.map((c) => c.data.threadUpdated.eventType)).toEqual([
      'email.draft.created',
      'email.draft.updated',
      'email.draft.sent',
      'email.sent',
    ]);
    expect(changes.every((c) => c.data.threadUpdated.thread.threadId === threadId)).toBe(true);
  });

  it('answers bad input with 4xx naming the field', async () => {
    const a = await t.newAccount();
    const box = await identity(a);
    const base = `/api/email/identities/${box.id}/drafts`;
    const past = await a.request('POST', base, {
      subject: 's',
      body: 'b',
      to: 'x@remote.example',
      sendAt: '2001-01-01T00:00:00Z',
    });
    expect(past.status).toBe(400);
    expect(past.body.error.details).toEqual([expect.objectContaining({ field: 'sendAt', code: 'IN_THE_PAST' })]);
    const incomplete = await a.request('POST', base, {
      subject: 's',
      sendAt: new Date(Date.now() + 3600_000).toISOString(),
    });
    expect(incomplete.status).toBe(422);
    expect(incomplete.body.error).toMatchObject({ code: 'DRAFT_INCOMPLETE', field: 'to' });
    const badThread = await a.request('POST', base, { threadId: 'nope' });
    expect(badThread.status).toBe(404);
    expect(badThread.body.error.field).toBe('threadId');
    const badField = await a.request('POST', base, { bogus: 1 });
    expect(badField.status).toBe(400);
    const badB64 = await a.request('POST', base, { attachments: [{ filename: 'a', content: '***' }] });
    expect(badB64.status).toBe(400);
    expect((await a.request('PATCH', `${base}/unknown`, { subject: 'x' })).status).toBe(404);
    expect((await a.request('DELETE', `${base}/unknown`)).status).toBe(404);
    const other = await t.newAccount();
    expect((await other.request('GET', base)).status).toBe(404);
    // Suppressed or blocked recipients are refused at send time, and the draft stays.
    const d = await a.request('POST', base, { to: 'blocked@remote.example', subject: 's', body: 'b' });
    expect(
      (await a.request('POST', '/api/email/blocklist', { entry: 'remote.example', direction: 'outbound' })).status,
    ).toBe(201);
    const refused = await a.request('POST', `${base}/${d.body.draftId}/send`);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('RECIPIENT_BLOCKED');
    expect((await a.request('GET', `${base}/${d.body.draftId}`)).status).toBe(200);
    // Deleting it removes it and says so.
    expect((await a.request('DELETE', `${base}/${d.body.draftId}`)).status).toBe(204);
    expect((await a.request('GET', `${base}/${d.body.draftId}`)).status).toBe(404);
    expect((await eventTypes(a, 'email.draft.deleted')).length).toBe(1);
  });

  it('GraphQL: createEmailDraft, updateEmailDraft, emailDrafts, sendEmailDraft', async () => {
    const a = await t.newAccount();
    const box = await identity(a);
    const created = payload(
      (
        await a.gql(GqlCreate, {
          input: {
            identityId: box.id,
            to: [`${unique('g')}@remote.example`],
            subject: 'GraphQL draft',
            attachments: [
              { filename: 'a.txt', contentType: 'text/plain', content: Buffer.from('hi').toString('base64') },
            ],
          },
        })
      ).data?.createEmailDraft,
      'CreateEmailDraftPayload',
    );
    expect(created.draft).toMatchObject({
      subject: 'GraphQL draft',
      createdBy: 'user',
      attachments: [{ filename: 'a.txt', size: 2 }],
    });
    const draftId = created.draft.draftId;
    const file = await fetch(`${t.url}${created.draft.attachments[0]!.downloadPath}`, {
      headers: { authorization: `Bearer ${a.apiKey}` },
    });
    expect(await file.text()).toBe('hi');
    const updated = payload(
      (await a.gql(GqlUpdate, { input: { identityId: box.id, draftId, body: 'Body from GraphQL' } })).data
        ?.updateEmailDraft,
      'UpdateEmailDraftPayload',
    );
    expect(updated.draft).toMatchObject({ subject: 'GraphQL draft', body: 'Body from GraphQL' });
    const list = await a.gql(GqlList, { identityId: box.id });
    expect(list.data?.emailDrafts.drafts.map((d) => d.draftId)).toEqual([draftId]);
    expect(list.data?.emailIdentity?.replyMode).toBe('send');
    const sent = payload(
      (await a.gql(GqlSend, { input: { identityId: box.id, draftId } })).data?.sendEmailDraft,
      'SendEmailDraftPayload',
    );
    expect(sent.thread).toMatchObject({ subject: 'GraphQL draft', messageCount: 1 });
    const again = (await a.gql(GqlSend, { input: { identityId: box.id, draftId } })).data?.sendEmailDraft;
    expect(again).toMatchObject({ __typename: 'NotFoundError', code: 'NOT_FOUND', field: 'draftId' });
  });

  it('replyMode draft: the agent writes a draft a person sends; a stranger gets a draft marked for review', async () => {
    const a = await t.newAccount();
    const agent = await a.request('POST', '/api/agents', { name: 'Desk', textModel: 'm' });
    const box = await identity(a, { agentId: agent.body.id, replyMode: 'draft' });
    expect(box.replyMode).toBe('draft');
    const peer = await identity(a);
    model.respond = () => ({ status: 200, text: 'Your order ships Monday.' });
    await a.request('POST', `/api/email/identities/${peer.id}/send`, {
      to: box.address,
      subject: 'Order',
      body: 'Where is it?',
    });
    const draft = await vi.waitFor(
      async () => {
        const list = await a.request('GET', `/api/email/identities/${box.id}/drafts`);
        expect(list.body.drafts).toHaveLength(1);
        return list.body.drafts[0];
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(draft).toMatchObject({
      createdBy: 'agent',
      reviewReason: null,
      to: [peer.address],
      subject: 'Re: Order',
      body: 'Your order ships Monday.',
      threadId: expect.any(String),
    });
    // Nothing went out by itself: the thread holds only the inbound mail, whose agent answer is DRAFTED.
    const thread = await a.request('GET', `/api/email/identities/${box.id}/threads/${draft.threadId}`);
    expect(thread.body.messages).toHaveLength(1);
    expect(thread.body.messages[0].agent).toMatchObject({
      status: 'answered',
      reason: 'DRAFTED',
      replyMessageId: null,
    });
    expect((await eventTypes(a, 'email.agent.response')).length).toBe(0);
    expect((await eventTypes(a, 'email.draft.created'))[0]!.payload.data).toMatchObject({ createdBy: 'agent' });

    // A person edits and sends it; it lands on the thread and at the peer.
    await a.request('PATCH', `/api/email/identities/${box.id}/drafts/${draft.draftId}`, {
      body: 'Your order ships Monday. Regards, Ann',
    });
    const sent = await a.request('POST', `/api/email/identities/${box.id}/drafts/${draft.draftId}/send`);
    expect(sent.status).toBe(202);
    expect(sent.body.threadId).toBe(draft.threadId);
    await vi.waitFor(
      async () => {
        const peerThreads = await a.request('GET', `/api/email/identities/${peer.id}/threads`);
        const detail = await a.request(
          'GET',
          `/api/email/identities/${peer.id}/threads/${peerThreads.body.threads[0].threadId}`,
        );
        expect(detail.body.messages.at(-1)).toMatchObject({
          direction: 'inbound',
          body: 'Your order ships Monday. Regards, Ann',
        });
      },
      { timeout: 20_000, interval: 50 },
    );

    // A sender that is not authenticated (no DNS here: SPF temperror) gets a draft for review, not nothing.
    await smtpSend(t.app.smtpPort()!, {
      from: 'stranger@nowhere.example',
      to: box.address,
      subject: 'Hi',
      text: 'Refund me',
    });
    const review = await vi.waitFor(
      async () => {
        const list = await a.request('GET', `/api/email/identities/${box.id}/drafts`);
        const d = list.body.drafts.find((x: { to: string[] }) => x.to[0] === 'stranger@nowhere.example');
        expect(d).toBeDefined();
        return d;
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(review).toMatchObject({ createdBy: 'agent', reviewReason: 'SENDER_NOT_AUTHENTICATED', subject: 'Re: Hi' });
    const g = await a.gql(GqlList, { identityId: box.id });
    expect(g.data?.emailDrafts.drafts.find((d) => d.draftId === review.draftId)?.reviewReason).toBe(
      'SENDER_NOT_AUTHENTICATED',
    );
  });

  it('replyMode send: a stranger still gets nothing; a blocked or suppressed sender gets no agent mail', async () => {
    const a = await t.newAccount();
    const agent = await a.request('POST', '/api/agents', { name: 'Desk', textModel: 'm' });
    const box = await identity(a, { agentId: agent.body.id });
    await smtpSend(t.app.smtpPort()!, { from: 'stranger2@nowhere.example', to: box.address, subject: 'Hi', text: 'x' });
    const peer = await identity(a);
    expect(
      (
        await a.request('POST', '/api/email/blocklist', {
          entry: peer.address,
          direction: 'outbound',
          identityId: box.id,
        })
      ).status,
    ).toBe(201);
    await a.request('POST', `/api/email/identities/${peer.id}/send`, { to: box.address, subject: 'Ping', body: 'x' });
    const reasons = await vi.waitFor(
      async () => {
        const skipped = await eventTypes(a, 'email.agent.skipped');
        expect(skipped).toHaveLength(2);
        return skipped.map((e) => e.payload.data.reason).sort();
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(reasons).toEqual(['RECIPIENT_BLOCKED', 'SENDER_NOT_AUTHENTICATED']);
    expect((await a.request('GET', `/api/email/identities/${box.id}/drafts`)).body.drafts).toEqual([]);
    expect((await eventTypes(a, 'email.agent.response')).length).toBe(0);
  });

  it('an address that bounced permanently gets no agent answer (RECIPIENT_SUPPRESSED)', async () => {
    const a = await t.newAccount();
    const agent = await a.request('POST', '/api/agents', { name: 'Desk', textModel: 'm' });
    const box = await identity(a, { agentId: agent.body.id, replyMode: 'draft' });
    const gone = `${unique('gone')}@remote.example`;
    sink.rejectWith(550, '5.1.1 no such user');
    try {
      await a.request('POST', `/api/email/identities/${box.id}/send`, { to: gone, subject: 'Hello', body: 'x' });
      await vi.waitFor(
        async () => {
          const s = await a.request('GET', '/api/email/suppressions');
          expect(s.body.suppressions.map((x: { address: string }) => x.address)).toContain(gone);
        },
        { timeout: 20_000, interval: 50 },
      );
    } finally {
      sink.rejectWith(undefined);
    }
    await smtpSend(t.app.smtpPort()!, { from: gone, to: box.address, subject: 'Me again', text: 'x' });
    const skipped = await vi.waitFor(
      async () => {
        const e = await eventTypes(a, 'email.agent.skipped');
        expect(e).toHaveLength(1);
        return e[0]!.payload.data;
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(skipped.reason).toBe('RECIPIENT_SUPPRESSED');
    expect((await a.request('GET', `/api/email/identities/${box.id}/drafts`)).body.drafts).toEqual([]);
  });
});

/** Issue 21 item 3: `sendAt` goes out once by itself through the job queue, survives a restart, can be cancelled. */
describe('drafts: scheduled send', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let dir: { dir: string; cleanup: () => Promise<void> } | undefined;

  beforeAll(async () => {
    dir = usingPostgres ? undefined : await tempDir('switchboard-drafts-');
    t = await startApp({ clock, dataDir: dir?.dir });
  });
  afterAll(async () => {
    await t?.close();
    await dir?.cleanup();
  });

  it('sends at sendAt exactly once, not before; a cleared sendAt cancels; it survives a restart', async () => {
    const a = await t.newAccount();
    const box = await identity(a);
    const peer = await identity(a);
    const at = new Date(clock.now().getTime() + 3600_000).toISOString();
    const make = (subject: string) =>
      a.request('POST', `/api/email/identities/${box.id}/drafts`, {
        to: peer.address,
        subject,
        body: 'later',
        sendAt: at,
      });
    const scheduled = await make('Scheduled');
    expect(scheduled.status).toBe(201);
    expect(scheduled.body.sendAt).toBe(at);
    const cancelled = await make('Cancelled');
    const cancel = await a.request('PATCH', `/api/email/identities/${box.id}/drafts/${cancelled.body.draftId}`, {
      sendAt: null,
    });
    expect(cancel.body.sendAt).toBeNull();

    await t.drain();
    expect((await a.request('GET', `/api/email/identities/${box.id}/threads`)).body.threads).toEqual([]);

    // Restart before it is due: the schedule is in the database, not in memory.
    await t.close();
    t = await startApp({ clock, dataDir: dir?.dir });
    const b = accountClient(t.url, a.accountId, a.apiKey);
    clock.advance(3600_000 + 1000);
    await t.drain();
    await t.drain();
    const threads = (await b.request('GET', `/api/email/identities/${box.id}/threads`)).body.threads;
    expect(threads.map((x: { subject: string }) => x.subject)).toEqual(['Scheduled']);
    const drafts = (await b.request('GET', `/api/email/identities/${box.id}/drafts`)).body.drafts;
    expect(drafts.map((d: { subject: string }) => d.subject)).toEqual(['Cancelled']);
    const peerThreads = (await b.request('GET', `/api/email/identities/${peer.id}/threads`)).body.threads;
    expect(peerThreads.map((x: { subject: string }) => x.subject)).toEqual(['Scheduled']);
    // Once only: more ticks send nothing again.
    clock.advance(3600_000);
    await t.drain();
    expect((await b.request('GET', `/api/email/identities/${box.id}/threads`)).body.threads).toHaveLength(1);
    const sent = await b.request('GET', '/api/events/history?channels=email&limit=1000');
    expect(sent.body.events.filter((e: { eventType: string }) => e.eventType === 'email.draft.sent')).toHaveLength(1);
  });

  it('a scheduled draft whose recipient became blocked stays, with lastError and sendAt cleared', async () => {
    const a = await t.newAccount();
    const box = await identity(a);
    const at = new Date(clock.now().getTime() + 60_000).toISOString();
    const d = await a.request('POST', `/api/email/identities/${box.id}/drafts`, {
      to: 'x@blocked.example',
      subject: 'Blocked later',
      body: 'b',
      sendAt: at,
    });
    expect(d.status).toBe(201);
    await a.request('POST', '/api/email/blocklist', { entry: 'blocked.example', direction: 'outbound' });
    clock.advance(120_000);
    await t.drain();
    const after = await a.request('GET', `/api/email/identities/${box.id}/drafts/${d.body.draftId}`);
    expect(after.body).toMatchObject({ sendAt: null, lastError: expect.stringMatching(/^RECIPIENT_BLOCKED: /) });
    const failed = await a.request('GET', '/api/events/history?channels=email&limit=1000');
    expect(failed.body.events.filter((e: { eventType: string }) => e.eventType === 'email.draft.failed')).toHaveLength(
      1,
    );
  });
});
