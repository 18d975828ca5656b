import { describe, expect, vi } from 'vitest';
import { graphql } from '../generated/gql.js';
import type { TestAccount, TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { payload, typedError } from '../helpers/graphql.js';
import { type SmtpSink, smtpSend, startSmtpSink } from '../helpers/mail-peers.js';

const GqlSend = graphql(`
  mutation MailboxSend($input: SendEmailInput!) {
    sendEmail(input: $input) { __typename ... on SendEmailPayload { messageId threadId } ... on Error { code field details { field code } } }
  }
`);
const GqlForward = graphql(`
  mutation MailboxForward($input: ForwardEmailMessageInput!) {
    forwardEmailMessage(input: $input) { __typename ... on ForwardEmailMessagePayload { messageId thread { subject } } ... on Error { code field } }
  }
`);
const GqlThread = graphql(`
  query MailboxThread($threadId: ID!) {
    emailThread(threadId: $threadId) {
      messages { messageId cc bcc replyTo html extractedText labels size rawPath
        attachments { attachmentId filename contentType size inline contentId downloadPath } }
    }
  }
`);

const GqlLabelThread = graphql(`
  mutation MailboxLabelThread($input: UpdateEmailThreadLabelsInput!) {
    updateEmailThreadLabels(input: $input) { __typename ... on UpdateEmailThreadLabelsPayload { thread { labels } } ... on Error { code field } }
  }
`);
const GqlLabeled = graphql(`
  query MailboxLabeled($id: ID!, $label: String) {
    emailIdentity(id: $id) { threads(first: 10, label: $label) { edges { node { threadId labels } } } }
  }
`);

let sink: SmtpSink;
const it = appTest(async ({ onCleanup }) => {
  sink = await startSmtpSink();
  onCleanup(() => sink.close());
  return { env: { SMTP_RELAY_URL: sink.url } };
});

/** Issue 21 items 1 and 2: sending with cc/bcc/html/attachments, reading, downloading, forward, reply-all. */
describe('mailbox: rich sending, attachments stored once, downloads', () => {
  let port: number;
  let n = 0;
  const unique = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;
  const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(300_000, 7), Buffer.from('\n%%EOF')]);

  /** The file's app, for the helpers below (tests get it as the `t` fixture). */
  let t: TestApp;
  it.beforeAll(async ({ t: app }) => {
    t = app;
    port = t.app.smtpPort()!;
  });

  async function identity(a: TestAccount) {
    const res = await a.request('POST', '/api/email/identities', { localPart: unique('box') });
    expect(res.status).toBe(201);
    return res.body as { id: string; address: string };
  }

  async function waitThread(a: TestAccount, identityId: string, count = 1) {
    return vi.waitFor(
      async () => {
        const list = await a.request('GET', `/api/email/identities/${identityId}/threads`);
        expect(list.body.threads.length).toBeGreaterThanOrEqual(count);
        const detail = await a.request(
          'GET',
          `/api/email/identities/${identityId}/threads/${list.body.threads[0].threadId}`,
        );
        return detail.body;
      },
      { timeout: 20_000, interval: 50 },
    );
  }

  async function download(a: TestAccount, path: string) {
    const res = await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${a.apiKey}` } });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  }

  it('sends to a list with cc, bcc, reply-to, html and an attachment: Cc on the wire, Bcc only in the envelope', async ({
    a,
  }) => {
    const box = await identity(a);
    const to = [`ann.${unique('x')}@example.com`, `bob.${unique('x')}@example.com`];
    const res = await a.request('POST', `/api/email/identities/${box.id}/send`, {
      to,
      cc: ['carol@example.com'],
      bcc: ['secret@example.com'],
      replyTo: 'billing@example.com',
      subject: 'Invoice 42',
      body: 'Please find the invoice attached.',
      html: '<p>Please find the <b>invoice</b> attached.</p><script>alert(1)</script><a href="javascript:alert(2)" onclick="x()">x</a>',
      attachments: [{ filename: 'invoice-42.pdf', contentType: 'application/pdf', content: pdf.toString('base64') }],
      labels: ['invoices', 'q4'],
    });
    expect(res.status).toBe(202);
    const sent = await vi.waitFor(
      () => {
        const m = sink.messages.find((x) => x.rcptTo.includes(to[0]!));
        expect(m).toBeDefined();
        return m!;
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(sent.rcptTo.sort()).toEqual([...to, 'carol@example.com', 'secret@example.com'].sort());
    expect(sent.raw).toMatch(/^Cc: carol@example\.com/m);
    expect(sent.raw).not.toMatch(/secret@example\.com/);
    expect(sent.raw).not.toMatch(/^Bcc:/im);
    expect(sent.parsed.replyTo?.value[0]?.address).toBe('billing@example.com');
    expect(sent.parsed.html).toContain('<b>invoice</b>');
    expect(sent.parsed.attachments).toHaveLength(1);
    expect(sent.parsed.attachments[0]!.filename).toBe('invoice-42.pdf');
    expect(Buffer.compare(sent.parsed.attachments[0]!.content, pdf)).toBe(0);

    const thread = await waitThread(a, box.id);
    const m = thread.messages[0];
    expect(m).toMatchObject({
      to,
      cc: ['carol@example.com'],
      bcc: ['secret@example.com'],
      replyTo: 'billing@example.com',
      labels: ['sent', 'invoices', 'q4'],
      status: 'sent',
    });
    expect(m.html).toContain('<b>invoice</b>');
    expect(m.html).not.toMatch(/script|javascript:|onclick/);
    expect(m.attachments).toEqual([
      expect.objectContaining({
        filename: 'invoice-42.pdf',
        contentType: 'application/pdf',
        size: pdf.length,
        inline: false,
      }),
    ]);
    expect(m.size).toBeGreaterThan(pdf.length);
    const raw = await download(a, `/api/email/identities/${box.id}/messages/${encodeURIComponent(m.messageId)}/raw`);
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('message/rfc822');
    expect(raw.bytes.length).toBe(m.size);
    expect(raw.bytes.toString('latin1')).not.toMatch(/secret@example\.com/);
  });

  it('delivers locally with the attachment: the other identity reads and downloads the same bytes; forward keeps it', async ({
    t,
    a,
  }) => {
    const sales = await identity(a);
    const billing = await identity(a);
    const res = await a.request('POST', `/api/email/identities/${sales.id}/send`, {
      to: billing.address,
      subject: 'Invoice 7',
      body: 'Invoice attached.\n\n-- \nSales',
      attachments: [
        { filename: 'Rechnung 7 (ü).pdf', contentType: 'application/pdf', content: pdf.toString('base64') },
      ],
    });
    expect(res.status).toBe(202);
    const thread = await waitThread(a, billing.id);
    const m = thread.messages[0];
    expect(m.direction).toBe('inbound');
    expect(m.labels).toEqual(['received']);
    expect(m.bcc).toEqual([]);
    expect(m.attachments).toHaveLength(1);
    const att = m.attachments[0];
    const base = `/api/email/identities/${billing.id}/messages/${encodeURIComponent(m.messageId)}`;
    const file = await download(a, `${base}/attachments/${att.attachmentId}`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-disposition')).toContain("filename*=UTF-8''Rechnung%207%20%28%C3%BC%29.pdf");
    expect(Buffer.compare(file.bytes, pdf)).toBe(0);

    // Stored once: the sender's and the recipient's copies share one raw message.
    const rows = await t.app.ctx.db.emailMessage.findMany({ where: { messageId: m.messageId } });
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => r.rawBlobId)).size).toBe(1);

    const unknown = await a.request('GET', `${base}/attachments/nope`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.field).toBe('attachmentId');
    const unknownMsg = await a.request(
      'GET',
      `/api/email/identities/${billing.id}/messages/${encodeURIComponent('<nope@x>')}/raw`,
    );
    expect(unknownMsg.status).toBe(404);
    expect(unknownMsg.body.error.field).toBe('messageId');
    const other = await t.newAccount();
    expect((await other.request('GET', `${base}/attachments/${att.attachmentId}`)).status).toBe(404);

    const fwd = await a.request('POST', `${base}/forward`, { to: `acct.${unique('x')}@example.com`, body: 'FYI' });
    expect(fwd.status).toBe(202);
    const out = await vi.waitFor(
      () => {
        const x = sink.messages.find((s) => s.parsed.messageId === fwd.body.messageId);
        expect(x).toBeDefined();
        return x!;
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(out.parsed.subject).toBe('Fwd: Invoice 7');
    expect(out.parsed.text).toContain('FYI');
    expect(out.parsed.text).toContain('---------- Forwarded message ---------');
    expect(Buffer.compare(out.parsed.attachments[0]!.content, pdf)).toBe(0);
  });

  it('reply-all answers every participant but the identity; extractedText drops quoted history', async ({ a }) => {
    const box = await identity(a);
    await smtpSend(port, {
      from: 'alice@example.com',
      to: [box.address, 'dave@example.com'],
      cc: 'erin@example.com',
      subject: 'Plans',
      text: 'Shall we meet?\n\nOn Mon, Nov 23, 2026 at 10:00 AM Bob <bob@example.com> wrote:\n> earlier\n> text',
    });
    const thread = await waitThread(a, box.id);
    expect(thread.messages[0].extractedText).toBe('Shall we meet?');
    expect(thread.messages[0].cc).toEqual(['erin@example.com']);
    const res = await a.request('POST', `/api/email/identities/${box.id}/reply`, {
      threadId: thread.threadId,
      body: 'Yes',
      replyAll: true,
    });
    expect(res.status).toBe(202);
    const out = await vi.waitFor(
      () => {
        const x = sink.messages.find((s) => s.parsed.messageId === res.body.messageId);
        expect(x).toBeDefined();
        return x!;
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(out.rcptTo.sort()).toEqual(['alice@example.com', 'dave@example.com', 'erin@example.com']);
    expect(out.raw).toMatch(/^Cc: erin@example\.com/m);
  });

  it('refuses bad input with a clear 4xx and stores nothing', async ({ a }) => {
    const box = await identity(a);
    const send = (body: Record<string, unknown>) => a.request('POST', `/api/email/identities/${box.id}/send`, body);
    const many = Array.from({ length: 51 }, (_, i) => `r${i}@example.com`);
    const tooMany = await send({ to: many.slice(0, 30), cc: many.slice(30), subject: 's', body: 'b' });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toContain('at most 50 recipients');
    const badB64 = await send({
      to: 'x@example.com',
      subject: 's',
      body: 'b',
      attachments: [{ filename: 'a.bin', content: 'not base64!' }],
    });
    expect(badB64.status).toBe(400);
    expect(badB64.body.error.details[0]).toMatchObject({ field: 'attachments.0.content', code: 'INVALID_BASE64' });
    const badType = await send({
      to: 'x@example.com',
      subject: 's',
      body: 'b',
      attachments: [{ filename: 'a.bin', contentType: 'nonsense', content: 'AAAA' }],
    });
    expect(badType.status).toBe(400);
    const big = Buffer.alloc(26 * 1024 * 1024, 1).toString('base64');
    const tooBig = await send({
      to: 'x@example.com',
      subject: 's',
      body: 'b',
      attachments: [{ filename: 'a.bin', content: big }],
    });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error).toMatchObject({ code: 'ATTACHMENTS_TOO_LARGE', field: 'attachments' });
    expect(tooBig.body.error.message).toContain('25 MiB');
    const noBody = await send({ to: 'x@example.com', subject: 's' });
    expect(noBody.status).toBe(400);
    const list = await a.request('GET', `/api/email/identities/${box.id}/threads`);
    expect(list.body.threads).toEqual([]);
  });

  it('answers MIME with thousands of parts 554 5.6.0 over SMTP and keeps nothing', async ({ t, a }) => {
    const box = await identity(a);
    const parts = Array.from({ length: 2000 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join(
      '',
    );
    const raw = `From: x@example.com\r\nTo: ${box.address}\r\nSubject: bomb\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${parts}--b--\r\n`;
    const blobsBefore = await t.app.ctx.db.emailBlob.count();
    await expect(smtpSend(port, { envelope: { from: 'x@example.com', to: [box.address] }, raw })).rejects.toMatchObject(
      {
        responseCode: 554,
      },
    );
    const list = await a.request('GET', `/api/email/identities/${box.id}/threads`);
    expect(list.body.threads).toEqual([]);
    expect(await t.app.ctx.db.emailBlob.count()).toBe(blobsBefore);
  });

  it('GraphQL: sends with cc, bcc, html and an attachment, reads the same fields and forwards', async ({ a }) => {
    const box = await identity(a);
    const other = await identity(a);
    const sent = await a.gql(GqlSend, {
      input: {
        identityId: box.id,
        // A single value where a list is expected is coerced to a list of one (GraphQL spec 3.11, input coercion).
        to: other.address as unknown as string[],
        cc: ['carol@example.com'],
        bcc: ['hidden@example.com'],
        subject: 'Contract',
        html: '<p>Signed <img src="x" onerror="steal()"></p>',
        attachments: [
          { filename: 'c.txt', contentType: 'text/plain', content: Buffer.from('hello').toString('base64') },
        ],
        labels: ['legal'],
      },
    });
    const ok = payload(sent.data?.sendEmail, 'SendEmailPayload');
    const read = await a.gql(GqlThread, { threadId: ok.threadId });
    const m = read.data!.emailThread.messages[0]!;
    expect(m).toMatchObject({ cc: ['carol@example.com'], bcc: ['hidden@example.com'], labels: ['sent', 'legal'] });
    expect(m.html).not.toContain('onerror');
    expect(m.attachments).toEqual([expect.objectContaining({ filename: 'c.txt', size: 5, inline: false })]);
    const file = await download(a, m.attachments[0]!.downloadPath);
    expect(file.bytes.toString()).toBe('hello');
    expect((await download(a, m.rawPath)).status).toBe(200);

    const bad = await a.gql(GqlSend, {
      input: {
        identityId: box.id,
        to: ['x@example.com'],
        subject: 's',
        body: 'b',
        attachments: [{ filename: 'a', content: '%%%' }],
      },
    });
    expect(typedError(bad.data?.sendEmail)).toMatchObject({ code: 'VALIDATION_FAILED' });

    const fwd = await a.gql(GqlForward, {
      input: { identityId: box.id, messageId: ok.messageId, to: ['z@example.com'] },
    });
    expect(payload(fwd.data?.forwardEmailMessage, 'ForwardEmailMessagePayload').thread.subject).toBe('Fwd: Contract');
  });

  it('labels threads and messages: system labels set by the service, custom ones by PATCH, ?label= filters', async ({
    a,
  }) => {
    const box = await identity(a);
    const send = (labels: string[]) =>
      a.request('POST', `/api/email/identities/${box.id}/send`, {
        to: 'x@example.com',
        subject: 's',
        body: 'b',
        labels,
      });
    const first = (await send(['invoices'])).body;
    const second = (await send([])).body;
    const list = await a.request('GET', `/api/email/identities/${box.id}/threads?label=invoices`);
    expect(list.body.threads.map((x: { threadId: string }) => x.threadId)).toEqual([first.threadId]);
    expect(list.body.threads[0].labels).toEqual(['sent', 'invoices']);
    const sentOnes = await a.request('GET', `/api/email/identities/${box.id}/threads?label=sent`);
    expect(sentOnes.body.threads).toHaveLength(2);

    const msgPath = `/api/email/identities/${box.id}/messages/${encodeURIComponent(first.messageId)}`;
    const patched = await a.request('PATCH', msgPath, { addLabels: ['paid'], removeLabels: ['invoices'] });
    expect(patched.status).toBe(200);
    expect(patched.body.labels).toEqual(['sent', 'paid']);
    const thread = await a.request('PATCH', `/api/email/identities/${box.id}/threads/${second.threadId}`, {
      addLabels: ['archive'],
    });
    expect(thread.body.labels).toEqual(['sent', 'archive']);
    expect((await a.request('GET', `/api/email/identities/${box.id}/threads?label=paid`)).body.threads).toHaveLength(1);

    const system = await a.request('PATCH', msgPath, { removeLabels: ['sent'] });
    expect(system.status).toBe(400);
    expect(system.body.error.details[0]).toMatchObject({ field: 'removeLabels.0', code: 'SYSTEM_LABEL' });
    expect((await a.request('PATCH', msgPath, { addLabels: ['Upper'] })).status).toBe(400);
    expect((await a.request('PATCH', msgPath, {})).status).toBe(400);
    expect((await a.request('GET', `/api/email/identities/${box.id}/threads?label=A%20B`)).status).toBe(400);
    const missing = await a.request('PATCH', `/api/email/identities/${box.id}/threads/nope`, { addLabels: ['x'] });
    expect(missing.status).toBe(404);
    expect(missing.body.error.field).toBe('threadId');

    const g = await a.gql(GqlLabelThread, {
      input: { identityId: box.id, threadId: first.threadId, addLabels: ['q4'] },
    });
    expect(payload(g.data?.updateEmailThreadLabels, 'UpdateEmailThreadLabelsPayload').thread.labels).toContain('q4');
    const filtered = await a.gql(GqlLabeled, { id: box.id, label: 'q4' });
    expect(filtered.data?.emailIdentity.threads.edges.map((e) => e.node.threadId)).toEqual([first.threadId]);
  });
});
