import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { describe, expect, vi } from 'vitest';
import type { StoredEvent } from '../../src/domain/events/event-log.js';
import type { TestAccount, TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { type SmtpSink, startSmtpSink } from '../helpers/mail-peers.js';

let sink: SmtpSink;
const it = appTest(async ({ onCleanup }) => {
  sink = await startSmtpSink();
  onCleanup(() => sink.close());
  return { env: { SMTP_RELAY_URL: sink.url, SMTP_MAX_MESSAGE_BYTES: '65536' } };
});

/** SMTP submission with AUTH over implicit TLS (issue 20 section 3), with nodemailer as the mail client. */
describe('SMTP submission (RFC 8314 implicit TLS, AUTH PLAIN/LOGIN)', () => {
  let ca: string;
  const events: StoredEvent[] = [];
  let n = 0;
  const unique = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

  /** The file's app, for the helpers below (tests get it as the `t` fixture). */
  let t: TestApp;
  it.beforeAll(async ({ t: app }) => {
    t = app;
    ca = t.app.smtpCertificate()!.cert;
    t.app.ctx.bus.subscribe((e) => events.push(e));
  });

  const eventsOf = (a: TestAccount, type: string) =>
    events.filter((e) => e.accountId === a.accountId && e.eventType === type);

  async function identity(a: TestAccount) {
    const res = await a.request('POST', '/api/email/identities', { localPart: unique('box') });
    expect(res.status).toBe(201);
    return res.body as { id: string; address: string; smtpHost: string; smtpPort: number };
  }

  async function credentials(a: TestAccount, identityId: string) {
    const res = await a.request('POST', `/api/email/identities/${identityId}/smtp-credentials`);
    expect(res.status).toBe(201);
    return res.body as { smtpHost: string; smtpPort: number; smtpUser: string; smtpPass: string };
  }

  /** A mail client: implicit TLS to the submission port, trusting only the service's certificate. */
  async function submit(
    auth: { user: string; pass: string } | undefined,
    mail: SendMailOptions,
    method: 'PLAIN' | 'LOGIN' = 'PLAIN',
  ) {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: t.app.smtpSubmissionPort()!,
      secure: true,
      tls: { ca, servername: 'localhost' },
      ...(auth ? { auth, authMethod: method } : {}),
    });
    try {
      return await transport.sendMail(mail);
    } finally {
      transport.close();
    }
  }

  async function threadsOf(a: TestAccount, identityId: string) {
    const res = await a.request('GET', `/api/email/identities/${identityId}/threads`);
    expect(res.status).toBe(200);
    return res.body.threads as { threadId: string; subject: string; messageCount: number }[];
  }

  it('issues credentials once: 201 with the password, GET keeps smtpPass null and reports the listener', async ({
    t,
    a,
  }) => {
    const box = await identity(a);
    expect(box).toMatchObject({ smtpHost: 'localhost', smtpPort: t.app.smtpSubmissionPort() });
    const creds = await credentials(a, box.id);
    expect(creds).toEqual({
      smtpHost: 'localhost',
      smtpPort: t.app.smtpSubmissionPort(),
      smtpUser: box.address,
      smtpPass: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
    });
    const got = await a.request('GET', `/api/email/identities/${box.id}`);
    expect(got.body.smtpPass).toBeNull();
    const row = await t.app.ctx.db.smtpCredential.findUniqueOrThrow({ where: { identityId: box.id } });
    expect(row.passwordHash).toMatch(/^scrypt\$/);
    expect(row.passwordHash).not.toContain(creds.smtpPass);
    // Another account's identity is 404, nothing issued.
    const b = await t.newAccount();
    expect((await b.request('POST', `/api/email/identities/${box.id}/smtp-credentials`)).status).toBe(404);
  });

  it('a mail client sends as the identity: relayed DKIM-signed, stored on its thread, email.sent', async ({ a }) => {
    const box = await identity(a);
    const creds = await credentials(a, box.id);
    const peer = `${unique('peer')}@example.net`;
    const info = await submit(
      { user: creds.smtpUser, pass: creds.smtpPass },
      { from: `Box <${box.address}>`, to: peer, subject: 'Hello over TLS', text: 'Sent from a mail client.' },
    );
    expect(info.response).toMatch(/^250/);
    const relayed = await vi.waitFor(
      () => {
        const m = sink.messages.find((x) => x.rcptTo.includes(peer));
        expect(m).toBeDefined();
        return m!;
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(relayed.mailFrom).toBe(box.address);
    expect(relayed.raw).toMatch(/^DKIM-Signature: [\s\S]*?\bd=agents\.switchboard\.local;/m);
    expect(relayed.parsed.subject).toBe('Hello over TLS');
    await vi.waitFor(() => expect(eventsOf(a, 'email.sent')).toHaveLength(1), { timeout: 10_000, interval: 20 });
    const [th] = await threadsOf(a, box.id);
    expect(th).toMatchObject({ subject: 'Hello over TLS', messageCount: 1 });
    const detail = await a.request('GET', `/api/email/identities/${box.id}/threads/${th!.threadId}`);
    expect(detail.body.messages[0]).toMatchObject({
      direction: 'outbound',
      from: box.address,
      to: [peer],
      body: 'Sent from a mail client.',
      status: 'sent',
      messageId: info.messageId,
    });
  });

  it('keeps what the client wrote: HTML, an attachment, To and Cc as headed, the rest of the envelope as Bcc', async ({
    a,
  }) => {
    const box = await identity(a);
    const creds = await credentials(a, box.id);
    const [to, cc, hidden] = ['to', 'cc', 'bcc'].map((p) => `${unique(p)}@example.net`);
    const info = await submit(
      { user: creds.smtpUser, pass: creds.smtpPass },
      {
        from: box.address,
        to,
        cc,
        bcc: hidden,
        subject: 'Rich',
        text: 'Plain part.',
        html: '<p>Rich <b>part</b>.</p>',
        attachments: [{ filename: 'notes.txt', content: 'attached bytes', contentType: 'text/plain' }],
      },
    );
    expect(info.response).toMatch(/^250/);
    const relayed = await vi.waitFor(
      () => {
        const m = sink.messages.find((x) => x.rcptTo.includes(to!));
        expect(m).toBeDefined();
        return m!;
      },
      { timeout: 10_000, interval: 20 },
    );
    expect([...relayed.rcptTo].sort()).toEqual([to, cc, hidden].sort());
    expect(relayed.raw).not.toMatch(/^Bcc:/im);
    expect(relayed.raw).toMatch(/^Cc: .*\bcc/im);
    expect(relayed.parsed.html).toContain('<b>part</b>');
    expect(relayed.parsed.attachments.map((x: { filename?: string }) => x.filename)).toEqual(['notes.txt']);
    expect(relayed.parsed.attachments[0]!.content.toString()).toBe('attached bytes');
    const [th] = await threadsOf(a, box.id);
    const detail = await a.request('GET', `/api/email/identities/${box.id}/threads/${th!.threadId}`);
    const m = detail.body.messages[0];
    expect(m).toMatchObject({ to: [to], cc: [cc], bcc: [hidden], body: 'Plain part.' });
    expect(m.html).toContain('<b>part</b>');
    expect(m.attachments).toMatchObject([{ filename: 'notes.txt', contentType: 'text/plain', size: 14 }]);
  });

  it('AUTH LOGIN works too; a reply is threaded by In-Reply-To and delivered locally to another identity', async ({
    a,
  }) => {
    const box = await identity(a);
    const other = await identity(a);
    const creds = await credentials(a, box.id);
    const auth = { user: creds.smtpUser, pass: creds.smtpPass };
    const first = await submit(auth, { from: box.address, to: other.address, subject: 'Plan', text: 'One' }, 'LOGIN');
    await submit(
      auth,
      { from: box.address, to: other.address, subject: 'Re: Plan', text: 'Two', inReplyTo: first.messageId },
      'LOGIN',
    );
    await vi.waitFor(async () => expect((await threadsOf(a, other.id))[0]?.messageCount).toBe(2), {
      timeout: 10_000,
      interval: 50,
    });
    const mine = await threadsOf(a, box.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ subject: 'Plan', messageCount: 2 });
  });

  it('without AUTH nothing is relayed: 530', async ({ a }) => {
    const box = await identity(a);
    const err = await submit(undefined, { from: box.address, to: 'x@example.net', subject: 's', text: 't' }).catch(
      (e) => e,
    );
    expect(err.responseCode).toBe(530);
  });

  it('wrong password 535 5.7.8; a new password replaces the old one; deprovisioning ends the credentials', async ({
    a,
  }) => {
    const box = await identity(a);
    const old = await credentials(a, box.id);
    const mail = { from: box.address, to: `${unique('p')}@example.net`, subject: 's', text: 't' };
    const wrong = await submit({ user: box.address, pass: `${old.smtpPass}x` }, mail).catch((e) => e);
    expect(wrong.responseCode).toBe(535);
    expect(wrong.response).toContain('5.7.8');
    // A user name no address can have (a NUL byte, 400 characters) is a wrong credential, not a server failure.
    for (const user of [`${box.address}\u0000x`, 'x'.repeat(400)]) {
      const odd = await submit({ user, pass: old.smtpPass }, mail, 'LOGIN').catch((e) => e);
      expect([501, 535]).toContain(odd.responseCode); // smtp-server itself refuses a NUL in the user name: 501
    }
    const fresh = await credentials(a, box.id);
    expect(fresh.smtpPass).not.toBe(old.smtpPass);
    const rotated = await submit({ user: box.address, pass: old.smtpPass }, mail).catch((e) => e);
    expect(rotated.responseCode).toBe(535);
    expect((await submit({ user: box.address.toUpperCase(), pass: fresh.smtpPass }, mail)).response).toMatch(/^250/);
    expect((await a.request('DELETE', `/api/email/identities/${box.id}`)).status).toBe(200);
    const gone = await submit({ user: box.address, pass: fresh.smtpPass }, mail).catch((e) => e);
    expect(gone.responseCode).toBe(535);
    expect((await a.request('POST', `/api/email/identities/${box.id}/smtp-credentials`)).body.error.code).toBe(
      'IDENTITY_DEPROVISIONING',
    );
  });

  /** A raw SMTP session over implicit TLS: `say` sends a line (or none) and resolves with the server's whole reply. */
  async function session(port: number) {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca, servername: 'localhost' });
    socket.setEncoding('utf8');
    let buffered = '';
    let waiting: ((reply: string) => void) | undefined;
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => {});
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      // A reply is complete at its last line: code, then a space (RFC 5321 4.2.1).
      const lines = buffered.split('\r\n');
      const last = lines.findIndex((l) => /^\d{3} /.test(l));
      if (last >= 0 && waiting) {
        const reply = lines.slice(0, last + 1).join('\n');
        buffered = lines.slice(last + 1).join('\r\n');
        const w = waiting;
        waiting = undefined;
        w(reply);
      }
    });
    const say = (line?: string) =>
      new Promise<string>((resolve) => {
        waiting = resolve;
        if (line !== undefined) socket.write(`${line}\r\n`);
      });
    await say(); // the greeting
    return { say, closed, end: () => socket.destroy() };
  }

  it('a password replaced during a session ends it: 421 at the next MAIL FROM, or after DATA, nothing stored', async ({
    t,
    a,
  }) => {
    const box = await identity(a);
    const port = t.app.smtpSubmissionPort()!;
    const to = `${unique('p')}@example.net`;
    const login = async (pass: string) => {
      const s = await session(port);
      expect(await s.say('EHLO client.example')).toMatch(/^250/);
      expect(await s.say(`AUTH PLAIN ${Buffer.from(`\u0000${box.address}\u0000${pass}`).toString('base64')}`)).toMatch(
        /^235/,
      );
      return s;
    };
    const message = async (s: Awaited<ReturnType<typeof session>>, subject: string) => {
      expect(await s.say(`MAIL FROM:<${box.address}>`)).toMatch(/^250/);
      expect(await s.say(`RCPT TO:<${to}>`)).toMatch(/^250/);
      expect(await s.say('DATA')).toMatch(/^354/);
      return `From: <${box.address}>\r\nTo: <${to}>\r\nSubject: ${subject}\r\n\r\nHello.\r\n.`;
    };

    // One message on the first password, then the password is replaced: the session's next MAIL FROM gets 421.
    const first = await login((await credentials(a, box.id)).smtpPass);
    expect(await first.say(await message(first, 'Before the change'))).toMatch(/^250/);
    const second = await credentials(a, box.id);
    expect(await first.say(`MAIL FROM:<${box.address}>`)).toMatch(/^421 4\.7\.0 .*authenticate again/);
    await first.closed;

    // Replaced while the message was on the wire: refused after DATA, not stored.
    const next = await login(second.smtpPass);
    const body = await message(next, 'During the change');
    await credentials(a, box.id);
    expect(await next.say(body)).toMatch(/^421 4\.7\.0/);
    await next.closed;

    expect((await threadsOf(a, box.id)).map((x) => x.subject)).toEqual(['Before the change']);
  });

  it('MAIL FROM or From of another identity: 553 5.7.1, nothing stored', async ({ a }) => {
    const box = await identity(a);
    const other = await identity(a);
    const creds = await credentials(a, box.id);
    const auth = { user: creds.smtpUser, pass: creds.smtpPass };
    const envelopeErr = await submit(auth, {
      from: other.address,
      to: 'x@example.net',
      subject: 'spoof',
      text: 't',
    }).catch((e) => e);
    expect(envelopeErr.responseCode).toBe(553);
    expect(envelopeErr.response).toContain('5.7.1');
    const headerErr = await submit(auth, {
      from: other.address,
      envelope: { from: box.address, to: ['x@example.net'] },
      subject: 'spoof',
      text: 't',
    }).catch((e) => e);
    expect(headerErr.responseCode).toBe(553);
    expect(await threadsOf(a, box.id)).toHaveLength(0);
  });

  it('at most 50 recipients: the 51st gets 452; SIZE over SMTP_MAX_MESSAGE_BYTES gets 552', async ({ a }) => {
    const box = await identity(a);
    const creds = await credentials(a, box.id);
    const auth = { user: creds.smtpUser, pass: creds.smtpPass };
    const to = Array.from({ length: 51 }, (_, i) => `r${i}.${unique('m')}@example.net`);
    const info = await submit(auth, { from: box.address, to, subject: 'many', text: 't' });
    expect(info.accepted).toHaveLength(50);
    expect(info.rejected).toEqual([to[50]]);
    const big = await submit(auth, {
      from: box.address,
      to: 'x@example.net',
      subject: 'big',
      text: 'x'.repeat(70_000),
    }).catch((e) => e);
    expect(big.responseCode).toBe(552);
  });

  it('a TLS handshake that never finishes does not hold other sessions', async ({ t, a }) => {
    const box = await identity(a);
    const creds = await credentials(a, box.id);
    const port = t.app.smtpSubmissionPort()!;
    // Ten clients connect and never say a word (no ClientHello), one starts TLS and stops mid-way.
    const silent = await Promise.all(
      Array.from(
        { length: 10 },
        () =>
          new Promise<ReturnType<typeof connect>>((resolve) => {
            const s = connect(port, '127.0.0.1', () => resolve(s));
            s.on('error', () => {});
          }),
      ),
    );
    const partial = connect(port, '127.0.0.1', () => partial.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00])));
    partial.on('error', () => {});
    try {
      const info = await submit(
        { user: creds.smtpUser, pass: creds.smtpPass },
        { from: box.address, to: `${unique('p')}@example.net`, subject: 'meanwhile', text: 't' },
      );
      expect(info.response).toMatch(/^250/);
    } finally {
      for (const s of [...silent, partial]) s.destroy();
    }
  });

  it('the MX listener offers STARTTLS with the same certificate and never AUTH', async ({ t, a }) => {
    const box = await identity(a);
    const port = t.app.smtpPort()!;
    const ehlo = await new Promise<string>((resolve, reject) => {
      const s = connect(port, '127.0.0.1');
      let buf = '';
      s.on('data', (d) => {
        buf += d.toString();
        if (buf.startsWith('220') && !buf.includes('EHLO-SENT')) {
          buf += 'EHLO-SENT';
          s.write('EHLO client.test\r\n');
        }
        if (/\r\n250 [^\r\n]*\r\n$/.test(buf)) {
          s.end('QUIT\r\n');
          resolve(buf);
        }
      });
      s.on('error', reject);
    });
    expect(ehlo).toContain('250-STARTTLS');
    expect(ehlo).not.toMatch(/AUTH/);
    // A client that requires TLS upgrades, checks the certificate against the CA, and delivers.
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port,
      secure: false,
      requireTLS: true,
      tls: { ca, servername: 'localhost' },
    });
    try {
      const info = await transport.sendMail({
        from: 'someone@example.org',
        to: box.address,
        subject: 'over STARTTLS',
        text: 'hi',
      });
      expect(info.response).toMatch(/^250/);
    } finally {
      transport.close();
    }
    await vi.waitFor(async () => expect(await threadsOf(a, box.id)).toHaveLength(1), { timeout: 10_000, interval: 50 });
    // The certificate served after STARTTLS is the submission listener's one.
    const fp = await new Promise<string>((resolve, reject) => {
      const s = tlsConnect(
        { host: '127.0.0.1', port: t.app.smtpSubmissionPort()!, ca, servername: 'localhost' },
        () => {
          resolve(s.getPeerX509Certificate()!.fingerprint256);
          s.destroy();
        },
      );
      s.on('error', reject);
    });
    expect(fp).toBe(t.app.smtpCertificate()!.fingerprint256);
  });
});
