import net from 'node:net';
import { describe, expect, vi } from 'vitest';
import type { StoredEvent } from '../../src/domain/events/event-log.js';
import { graphql } from '../generated/gql.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { payload } from '../helpers/graphql.js';
import { type SmtpSink, smtpSend, startSmtpSink } from '../helpers/mail-peers.js';

const GqlSuppressions = graphql(`
  query MailboxSuppressions($limit: Int) { emailSuppressions(limit: $limit) { suppressions { address reason status } nextCursor } }
`);
const GqlUnsuppress = graphql(`
  mutation MailboxUnsuppress($input: DeleteEmailSuppressionInput!) {
    deleteEmailSuppression(input: $input) { __typename ... on DeleteEmailSuppressionPayload { deletedAddress } ... on Error { code field } }
  }
`);

const GqlBlock = graphql(`
  mutation MailboxBlock($input: CreateBlockListEntryInput!) {
    createBlockListEntry(input: $input) { __typename ... on CreateBlockListEntryPayload { entry { id entry direction } } ... on Error { code field } }
  }
`);
const GqlBlockList = graphql(`
  query MailboxBlockList { emailBlockList(limit: 5) { entries { entry direction identityId } nextCursor } }
`);

let sink: SmtpSink;
const it = appTest(async ({ onCleanup }) => {
  sink = await startSmtpSink();
  onCleanup(() => sink.close());
  return { env: { SMTP_RELAY_URL: sink.url } };
});

/** Issue 21 item 5: DSNs (RFC 3464) and relay 5xx become email.bounced, label `bounced` and suppression. */
describe('bounces and the suppression list', () => {
  let port: number;
  const events: StoredEvent[] = [];
  let n = 0;
  const unique = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

  it.beforeAll(async ({ t }) => {
    port = t.app.smtpPort()!;
    t.app.ctx.bus.subscribe((e) => events.push(e));
  });

  async function identity(a: TestAccount, body: Record<string, unknown> = {}) {
    const res = await a.request('POST', '/api/email/identities', { localPart: unique('box'), ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string; address: string };
  }

  function dsn(opts: {
    to: string;
    recipient: string;
    original: string;
    action?: string;
    status?: string;
    rfc822?: boolean;
  }) {
    const returned = opts.rfc822
      ? `Content-Type: message/rfc822\r\n\r\nFrom: ${opts.to}\r\nTo: ${opts.recipient}\r\nSubject: Invoice\r\nMessage-ID: ${opts.original}\r\n\r\nbody\r\n`
      : `Content-Type: text/rfc822-headers\r\n\r\nFrom: ${opts.to}\r\nTo: ${opts.recipient}\r\nMessage-ID: ${opts.original}\r\n`;
    return [
      'From: Mail Delivery System <MAILER-DAEMON@mx.example.com>',
      `To: ${opts.to}`,
      'Subject: Undelivered Mail Returned to Sender',
      `Message-ID: <${unique('dsn')}@mx.example.com>`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="BB"',
      '',
      '--BB',
      'Content-Type: text/plain',
      '',
      'Your message could not be delivered.',
      '--BB',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.example.com',
      '',
      `Final-Recipient: rfc822; ${opts.recipient}`,
      `Action: ${opts.action ?? 'failed'}`,
      `Status: ${opts.status ?? '5.1.1'}`,
      'Diagnostic-Code: smtp; 550 5.1.1 <user>: Recipient address rejected:',
      '  User unknown',
      '',
      '--BB',
      returned,
      '--BB--',
      '',
    ].join('\r\n');
  }

  async function sendAndWait(a: TestAccount, box: { id: string }, to: string) {
    const res = await a.request('POST', `/api/email/identities/${box.id}/send`, { to, subject: 'Invoice', body: 'Hi' });
    expect(res.status).toBe(202);
    await vi.waitFor(() => expect(sink.messages.some((m) => m.parsed.messageId === res.body.messageId)).toBe(true), {
      timeout: 20_000,
      interval: 50,
    });
    return res.body as { messageId: string; threadId: string };
  }

  const bouncedEvents = (a: TestAccount) =>
    events.filter((e) => e.accountId === a.accountId && e.eventType === 'email.bounced');

  it('a DSN is matched to the sent message: email.bounced, label bounced, suppressed, and 422 on the next send', async ({
    t,
    a,
  }) => {
    const agent = await a.request('POST', '/api/agents', { name: 'A', textModel: 'm' });
    const box = await identity(a, { agentId: agent.body.id });
    const recipient = `gone.${unique('x')}@example.com`;
    const sent = await sendAndWait(a, box, recipient);
    await smtpSend(port, {
      envelope: { from: '', to: [box.address] },
      raw: dsn({ to: box.address, recipient, original: sent.messageId }),
    });
    const bounced = await vi.waitFor(
      () => {
        const got = bouncedEvents(a);
        expect(got).toHaveLength(1);
        return got[0]!;
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(bounced.payload).toEqual({
      event: 'email.bounced',
      data: {
        identityId: box.id,
        threadId: sent.threadId,
        messageId: sent.messageId,
        recipient,
        action: 'failed',
        status: '5.1.1',
        diagnosticCode: '550 5.1.1 <user>: Recipient address rejected: User unknown',
        type: 'permanent',
      },
    });
    const thread = await a.request('GET', `/api/email/identities/${box.id}/threads/${sent.threadId}`);
    expect(thread.body.messages).toHaveLength(2);
    expect(thread.body.messages[0].labels).toEqual(['sent', 'bounced']);
    // The DSN came over SMTP from a sender nobody authenticated (no DNS here): unauthenticated too.
    expect(thread.body.messages[1].labels).toEqual(['received', 'unauthenticated', 'bounced']);
    // Never reaches the agent.
    expect(thread.body.messages[1].agent).toMatchObject({ status: 'skipped', reason: 'BOUNCE' });

    const list = await a.request('GET', '/api/email/suppressions');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      suppressions: [
        expect.objectContaining({ address: recipient, reason: 'bounce', status: '5.1.1', messageId: sent.messageId }),
      ],
      nextCursor: null,
    });
    const again = await a.request('POST', `/api/email/identities/${box.id}/send`, {
      to: ['ok@example.com', recipient.toUpperCase()],
      subject: 's',
      body: 'b',
    });
    expect(again.status).toBe(422);
    expect(again.body.error).toMatchObject({
      code: 'RECIPIENT_SUPPRESSED',
      details: [{ field: 'recipients', code: 'SUPPRESSED', message: recipient }],
    });
    expect((await t.newAccount().then((b) => b.request('GET', '/api/email/suppressions'))).body.suppressions).toEqual(
      [],
    );
    expect((await a.request('DELETE', `/api/email/suppressions/${recipient}`)).status).toBe(204);
    expect((await a.request('DELETE', `/api/email/suppressions/${recipient}`)).body.error.field).toBe('address');
    const ok = await a.request('POST', `/api/email/identities/${box.id}/send`, {
      to: recipient,
      subject: 's',
      body: 'b',
    });
    expect(ok.status).toBe(202);
    expect((await a.request('GET', '/api/email/suppressions?nope=1')).status).toBe(400);
  });

  it('a transient DSN (delayed, returned as message/rfc822) emits email.bounced but suppresses nothing', async ({
    a,
  }) => {
    const box = await identity(a);
    const recipient = `slow.${unique('x')}@example.com`;
    const sent = await sendAndWait(a, box, recipient);
    await smtpSend(port, {
      envelope: { from: '', to: [box.address] },
      raw: dsn({
        to: box.address,
        recipient,
        original: sent.messageId,
        action: 'delayed',
        status: '4.4.1',
        rfc822: true,
      }),
    });
    const got = await vi.waitFor(
      () => {
        const x = bouncedEvents(a);
        expect(x).toHaveLength(1);
        return x[0]!;
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(got.payload).toMatchObject({ data: { type: 'transient', action: 'delayed', status: '4.4.1' } });
    expect((await a.request('GET', '/api/email/suppressions')).body.suppressions).toEqual([]);
  });

  it('a relay 5xx at send time is a permanent bounce', async ({ a }) => {
    const box = await identity(a);
    const recipient = `nobody.${unique('x')}@example.com`;
    sink.rejectWith(550, '5.1.1 No such user here');
    try {
      const res = await a.request('POST', `/api/email/identities/${box.id}/send`, {
        to: recipient,
        subject: 's',
        body: 'b',
      });
      expect(res.status).toBe(202);
      const got = await vi.waitFor(
        () => {
          const x = bouncedEvents(a);
          expect(x).toHaveLength(1);
          return x[0]!;
        },
        { timeout: 20_000, interval: 50 },
      );
      expect(got.payload).toMatchObject({
        data: { recipient, type: 'permanent', status: '5.1.1', messageId: res.body.messageId },
      });
    } finally {
      sink.rejectWith(undefined);
    }
    const list = await a.request('GET', '/api/email/suppressions');
    expect(list.body.suppressions).toEqual([expect.objectContaining({ address: recipient, reason: 'relay_rejected' })]);
    const gql = await a.gql(GqlSuppressions, { limit: 10 });
    expect(gql.data?.emailSuppressions).toEqual({
      suppressions: [{ address: recipient, reason: 'relay_rejected', status: '5.1.1' }],
      nextCursor: null,
    });
    const del = await a.gql(GqlUnsuppress, { input: { address: recipient } });
    expect(payload(del.data?.deleteEmailSuppression, 'DeleteEmailSuppressionPayload').deletedAddress).toBe(recipient);
    const again = await a.gql(GqlUnsuppress, { input: { address: recipient } });
    expect(again.data?.deleteEmailSuppression).toMatchObject({ code: 'NOT_FOUND', field: 'address' });
  });

  it('a malformed DSN or one about mail we never sent is stored as ordinary mail, no bounce, no 5xx', async ({ a }) => {
    const box = await identity(a);
    const garbage = dsn({ to: box.address, recipient: 'x@example.com', original: '<never@sent>' }).replace(
      /Final-Recipient[\s\S]*?User unknown/,
      'this is : not ; a delivery status\r\n\r\n\r\n::::',
    );
    await smtpSend(port, { envelope: { from: '', to: [box.address] }, raw: garbage });
    await smtpSend(port, {
      envelope: { from: '', to: [box.address] },
      raw: dsn({ to: box.address, recipient: 'x@example.com', original: '<never@sent>' }),
    });
    const threads = await a.request('GET', `/api/email/identities/${box.id}/threads`);
    expect(threads.body.threads).toHaveLength(2);
    expect(bouncedEvents(a)).toEqual([]);
  });

  it('concurrent sends, one to a blocked recipient: the others are stored and relayed, the blocked one alone refused', async ({
    a,
  }) => {
    const box = await identity(a);
    const blocked = `${unique('held')}@blocked-batch.example`;
    expect((await a.request('POST', '/api/email/blocklist', { entry: blocked, direction: 'outbound' })).status).toBe(
      201,
    );
    // Sent at once, so on PostgreSQL they may share one group-commit statement (SendWriteQueue).
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        a.request('POST', `/api/email/identities/${box.id}/send`, {
          to: [i === 3 ? blocked : `ok${i}@batch.example`],
          subject: `batch ${i}`,
          body: 'b',
        }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 422, 202, 202, 202, 202]);
    expect(answers[3]!.body.error.code).toBe('RECIPIENT_BLOCKED');
    const threads = (await a.request('GET', `/api/email/identities/${box.id}/threads?limit=20`)).body.threads as {
      subject: string;
    }[];
    expect(threads.map((th) => th.subject).sort()).toEqual([0, 1, 2, 4, 5, 6, 7].map((i) => `batch ${i}`));
  });

  it('block list: a blocked sender gets 550 5.7.1 at RCPT, a blocked recipient 422 RECIPIENT_BLOCKED', async ({
    t,
    a,
  }) => {
    const box = await identity(a);
    const other = await identity(a);
    const created = await a.request('POST', '/api/email/blocklist', {
      entry: 'Spam.Example',
      direction: 'inbound',
      identityId: box.id,
      reason: 'spam',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ entry: 'spam.example', direction: 'inbound', identityId: box.id });
    await expect(
      smtpSend(port, { from: 'x@mail.spam.example', to: box.address, subject: 's', text: 't' }),
    ).rejects.toMatchObject({ responseCode: 550, response: expect.stringContaining('5.7.1') });
    // Scoped to one identity: the other still receives; another sender still reaches the first.
    await smtpSend(port, { from: 'x@mail.spam.example', to: other.address, subject: 's', text: 't' });
    await smtpSend(port, { from: 'friend@example.org', to: box.address, subject: 's', text: 't' });
    expect((await a.request('GET', `/api/email/identities/${box.id}/threads`)).body.threads).toHaveLength(1);

    const g = await a.gql(GqlBlock, { input: { entry: 'ex@competitor.example', direction: 'outbound' } });
    expect(payload(g.data?.createBlockListEntry, 'CreateBlockListEntryPayload').entry.entry).toBe(
      'ex@competitor.example',
    );
    const refused = await a.request('POST', `/api/email/identities/${box.id}/send`, {
      to: ['ok@example.com'],
      bcc: ['EX@competitor.example'],
      subject: 's',
      body: 'b',
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: 'RECIPIENT_BLOCKED',
      details: [{ field: 'recipients', code: 'BLOCKED', message: 'ex@competitor.example' }],
    });
    // Nothing of the refused send is stored (the read of the block list is part of the statement that writes).
    expect((await a.request('GET', `/api/email/identities/${box.id}/threads`)).body.threads).toHaveLength(1);
    const list = await a.request('GET', '/api/email/blocklist?limit=1');
    expect(list.body.entries).toHaveLength(1);
    expect(typeof list.body.nextCursor).toBe('string');
    const page2 = await a.request('GET', `/api/email/blocklist?limit=1&cursor=${list.body.nextCursor}`);
    expect(page2.body).toMatchObject({ entries: [{ entry: 'ex@competitor.example' }], nextCursor: null });
    expect((await a.gql(GqlBlockList)).data?.emailBlockList.entries).toHaveLength(2);
    expect(
      (await a.request('POST', '/api/email/blocklist', { entry: 'not an entry', direction: 'inbound' })).status,
    ).toBe(400);
    expect(
      (await a.request('POST', '/api/email/blocklist', { entry: 'a.example', direction: 'sideways' })).status,
    ).toBe(400);
    const stranger = await t.newAccount();
    expect((await stranger.request('DELETE', `/api/email/blocklist/${page2.body.entries[0].id}`)).status).toBe(404);
    expect((await a.request('DELETE', `/api/email/blocklist/${page2.body.entries[0].id}`)).status).toBe(204);
    const ok = await a.request('POST', `/api/email/identities/${box.id}/send`, {
      to: 'ex@competitor.example',
      subject: 's',
      body: 'b',
    });
    expect(ok.status).toBe(202);
  });

  /**
   * One SMTP session by hand, so something can happen between RCPT TO and the end of DATA: `between` runs after
   * the RCPT replies (one RCPT per address of `to`). @returns the reply to the final "." (e.g. "250 …").
   */
  async function rcptThenData(to: string | string[], between: () => Promise<void>): Promise<string> {
    const rcpts = Array.isArray(to) ? to : [to];
    const socket = net.connect(port, '127.0.0.1');
    socket.setEncoding('utf8');
    let buffered = '';
    const waiting: ((line: string) => void)[] = [];
    socket.on('data', (d: string) => {
      buffered += d;
      for (let i = buffered.indexOf('\r\n'); i >= 0; i = buffered.indexOf('\r\n')) {
        const line = buffered.slice(0, i);
        buffered = buffered.slice(i + 2);
        if (/^\d{3} /.test(line)) waiting.shift()?.(line);
      }
    });
    const reply = () => new Promise<string>((resolve) => waiting.push(resolve));
    const command = (c: string) => {
      const r = reply();
      socket.write(`${c}\r\n`);
      return r;
    };
    try {
      expect(await reply()).toMatch(/^220 /);
      expect(await command('EHLO client.example')).toMatch(/^250 /);
      expect(await command('MAIL FROM:<friend@example.org>')).toMatch(/^250 /);
      for (const r of rcpts) expect(await command(`RCPT TO:<${r}>`)).toMatch(/^250 /);
      await between();
      expect(await command('DATA')).toMatch(/^354 /);
      const mid = `<${unique('m')}@example.org>`;
      return await command(
        `From: friend@example.org\r\nTo: ${rcpts.join(', ')}\r\nSubject: between\r\nMessage-ID: ${mid}\r\n\r\nhi\r\n.`,
      );
    } finally {
      socket.destroy();
    }
  }

  it('RCPT found the mailbox: deprovisioned before the end of DATA it gets nothing and the sender 550 5.1.1; given an agent, the agent gets a job', async ({
    a,
  }) => {
    const gone = await identity(a);
    // Nothing is kept, so the answer is a permanent refusal: the sending server bounces it to its author (a 250
    // would have told it the mail was delivered).
    expect(
      await rcptThenData(gone.address, async () => {
        expect((await a.request('DELETE', `/api/email/identities/${gone.id}`)).status).toBeLessThan(300);
      }),
    ).toMatch(/^550 5\.1\.1 /);
    expect(
      events.filter(
        (e) =>
          e.eventType === 'email.received' &&
          (e.payload.data as { identityId?: string } | undefined)?.identityId === gone.id,
      ),
    ).toEqual([]);

    const agent = await a.request('POST', '/api/agents', { name: 'B', textModel: 'm' });
    const box = await identity(a);
    expect(
      await rcptThenData(box.address, async () => {
        const patched = await a.request('PATCH', `/api/email/identities/${box.id}`, { agentId: agent.body.id });
        expect(patched.status).toBe(200);
      }),
    ).toMatch(/^250 /);
    const threads = await a.request('GET', `/api/email/identities/${box.id}/threads`);
    expect(threads.body.threads).toHaveLength(1);
    const thread = await a.request(
      'GET',
      `/api/email/identities/${box.id}/threads/${threads.body.threads[0].threadId}`,
    );
    // The message took the path that writes an agent job (here skipped: the sender is not authenticated).
    expect(thread.body.messages[0].agent).toMatchObject({ status: 'skipped' });
  });

  const receivedBy = (identityId: string) =>
    events.filter(
      (e) =>
        e.eventType === 'email.received' &&
        (e.payload.data as { identityId?: string } | undefined)?.identityId === identityId,
    );

  it('RCPT accepted, then the sender blocked through the REST API: the end of DATA answers 550 5.7.1 and stores nothing; with a second recipient only its copy is kept', async ({
    a,
  }) => {
    // The RCPT answer in hand is as old as a cached one (another instance's block never empties this one's cache):
    // the delivery checks the block list again.
    const box = await identity(a);
    let blockId = '';
    expect(
      await rcptThenData(box.address, async () => {
        const res = await a.request('POST', '/api/email/blocklist', { entry: 'example.org', direction: 'inbound' });
        expect(res.status).toBe(201);
        blockId = res.body.id as string;
      }),
    ).toMatch(/^550 5\.7\.1 /);
    expect((await a.request('GET', `/api/email/identities/${box.id}/threads`)).body.threads).toEqual([]);
    expect(receivedBy(box.id)).toEqual([]);
    expect((await a.request('DELETE', `/api/email/blocklist/${blockId}`)).status).toBe(204);

    // Two recipients (the delivery's transaction path), the block of one of them only added between RCPT and DATA.
    const blocking = await identity(a);
    const open = await identity(a);
    expect(
      await rcptThenData([blocking.address, open.address], async () => {
        const res = await a.request('POST', '/api/email/blocklist', {
          entry: 'friend@example.org',
          direction: 'inbound',
          identityId: blocking.id,
        });
        expect(res.status).toBe(201);
      }),
    ).toMatch(/^250 /);
    expect((await a.request('GET', `/api/email/identities/${blocking.id}/threads`)).body.threads).toEqual([]);
    expect((await a.request('GET', `/api/email/identities/${open.id}/threads`)).body.threads).toHaveLength(1);
    expect(receivedBy(blocking.id)).toEqual([]);
  });

  it('a positive RCPT answer is not reused once the block list or the identity changed: the next message is refused at RCPT, nothing stored', async ({
    a,
  }) => {
    const box = await identity(a);
    const from = 'pen.pal@letters.example';
    // Accepted: RCPT's answer for this recipient and sender is now cached.
    await smtpSend(port, { from, to: box.address, subject: 'first', text: 't' });
    const created = await a.request('POST', '/api/email/blocklist', { entry: from, direction: 'inbound' });
    expect(created.status).toBe(201);
    // The RCPT reply (it names the recipient), not the end of DATA's.
    await expect(smtpSend(port, { from, to: box.address, subject: 'second', text: 't' })).rejects.toMatchObject({
      responseCode: 550,
      response: expect.stringContaining(`5.7.1 <${box.address}>: sender blocked`),
    });
    expect((await a.request('DELETE', `/api/email/blocklist/${created.body.id}`)).status).toBe(204);
    await smtpSend(port, { from, to: box.address, subject: 'third', text: 't' });

    // Cached again by the third message; the mailbox removed: 550 5.1.1 at RCPT.
    expect((await a.request('DELETE', `/api/email/identities/${box.id}`)).status).toBeLessThan(300);
    await expect(smtpSend(port, { from, to: box.address, subject: 'fourth', text: 't' })).rejects.toMatchObject({
      responseCode: 550,
      response: expect.stringContaining(`5.1.1 <${box.address}>: mailbox unavailable`),
    });
    const threads = (await a.request('GET', `/api/email/identities/${box.id}/threads`)).body.threads as {
      subject: string;
    }[];
    expect(threads.map((th) => th.subject).sort()).toEqual(['first', 'third']);
  });
});
