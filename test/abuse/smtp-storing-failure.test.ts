// Issue 26 (SMTP replies, src/smtp/replies.ts): a message the service cannot store because the database is unreachable gets
// `451 4.3.0` (RFC 5321 4.2.1, 4.5.4.1; RFC 3463 4.3.0), so the sending server keeps it and retries; the retry, once
// the database is back, is stored exactly once. The database is cut between RCPT (accepted) and the end of DATA by a
// TCP front the test owns between the service and PostgreSQL: every open connection through it is reset and new
// ones are refused, as when the database host goes away. PostgreSQL only: PGlite lives inside the process and cannot
// be cut from it.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestAccount, type TestApp, testDatabaseUrl, usingPostgres } from '../helpers/app.js';

/** A TCP front to `target`: `cut()` resets every connection through it and closes the port, `heal()` reopens it. */
class CuttableFront {
  readonly #sockets = new Set<net.Socket>();
  #server: net.Server | undefined;
  port = 0;
  constructor(private readonly target: { host: string; port: number }) {}
  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.#server = server;
  }
  /** Resets every open connection (RST) and stops listening: new connections get ECONNREFUSED. */
  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    for (const s of this.#sockets) s.resetAndDestroy();
    await closed;
  }
  heal(): Promise<void> {
    return this.open();
  }
  /** Closes the port and every connection (the end of the test). */
  close(): Promise<void> {
    return this.cut();
  }
}

/** A line-level SMTP client: sends one command, resolves with its final reply line. */
class RawSmtp {
  readonly #socket: net.Socket;
  #buffer = '';
  #lines: string[] = [];
  #waiters: (() => void)[] = [];
  constructor(port: number) {
    this.#socket = net.connect({ host: '127.0.0.1', port });
    this.#socket.on('error', () => {});
    this.#socket.on('data', (d) => {
      this.#buffer += d.toString('latin1');
      for (let i = this.#buffer.indexOf('\r\n'); i >= 0; i = this.#buffer.indexOf('\r\n')) {
        this.#lines.push(this.#buffer.slice(0, i));
        this.#buffer = this.#buffer.slice(i + 2);
      }
      for (const w of this.#waiters.splice(0)) w();
    });
    this.#socket.on('close', () => {
      for (const w of this.#waiters.splice(0)) w();
    });
  }
  /** The next final reply line (`NNN text`) from `from` on; rejects when the connection closes without one. */
  async reply(from: number): Promise<string> {
    for (;;) {
      const line = this.#lines.slice(from).find((l) => /^\d{3} /.test(l));
      if (line) return line;
      if (this.#socket.destroyed) throw new Error(`closed without a reply; got ${JSON.stringify(this.#lines)}`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }
  async command(line: string): Promise<string> {
    const from = this.#lines.length;
    this.#socket.write(`${line}\r\n`);
    return this.reply(from);
  }
  /** Writes without waiting for a reply (the DATA body before its final dot). */
  write(text: string): void {
    this.#socket.write(text);
  }
  close(): void {
    this.#socket.destroy();
  }
}

describe.skipIf(!usingPostgres)('inbound SMTP while the database is unreachable (PostgreSQL)', () => {
  let t: TestApp;
  let front: CuttableFront;
  let account: TestAccount;
  let identity: { id: string; address: string };

  beforeAll(async () => {
    const url = new URL((await testDatabaseUrl())!);
    front = new CuttableFront({ host: url.hostname, port: Number(url.port || 5432) });
    await front.open();
    url.hostname = '127.0.0.1';
    url.port = String(front.port);
    t = await startApp({ env: { DATABASE_URL: url.toString() } });
    account = await t.newAccount();
    const box = await account.request('POST', '/api/email/identities', { localPart: `cut${Date.now().toString(36)}` });
    expect(box.status).toBe(201);
    identity = box.body;
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await front?.close();
  });

  it('answers 451 4.3.0 to a message it cannot store, and stores the retry exactly once when the database is back', async () => {
    const messageId = `<cut-${Date.now()}@example.org>`;
    const raw = [
      'From: Sender <sender@example.org>',
      `To: ${identity.address}`,
      'Subject: stored after the outage',
      `Message-ID: ${messageId}`,
      '',
      'This message arrived while the database was away.',
      '',
    ].join('\r\n');
    const attempt = async (cutBeforeEnd: boolean): Promise<string> => {
      const c = new RawSmtp(t.app.smtpPort()!);
      try {
        expect(await c.reply(0)).toMatch(/^220 /);
        expect(await c.command('EHLO sender.example.org')).toMatch(/^250 /);
        expect(await c.command('MAIL FROM:<sender@example.org>')).toMatch(/^250 /);
        expect(await c.command(`RCPT TO:<${identity.address}>`)).toMatch(/^250 /);
        expect(await c.command('DATA')).toMatch(/^354 /);
        c.write(raw);
        if (cutBeforeEnd) await front.cut();
        return await c.command('.');
      } finally {
        c.close();
      }
    };

    // RCPT accepted, then the database goes away before the end of DATA: a temporary failure, never a 5xx (the
    // sender would bounce the mail) and never a 250 (the mail would be lost).
    expect(await attempt(true)).toMatch(/^451 4\.3\.0 /);

    // The sending server retries once the database is back (its queue, RFC 5321 4.5.4.1): stored once.
    await front.heal();
    let answer = '';
    for (let i = 0; i < 150 && !answer.startsWith('250 '); i++) {
      // The pool's first connections after the outage may still be the dead ones: a retry is what a sender does.
      answer = await attempt(false).catch((err: Error) => err.message);
      if (!answer.startsWith('250 ')) await new Promise((r) => setTimeout(r, 200));
    }
    expect(answer).toMatch(/^250 /);
    // A second retry (the sender never saw the 250, say) is recognised by its Message-ID and not stored again.
    expect(await attempt(false)).toMatch(/^250 /);

    const threads = await account.request('GET', `/api/email/identities/${identity.id}/threads?limit=100`);
    expect(threads.status).toBe(200);
    const ours = threads.body.threads.filter((th: { subject: string }) => th.subject === 'stored after the outage');
    expect(ours).toHaveLength(1);
    const detail = await account.request('GET', `/api/email/identities/${identity.id}/threads/${ours[0].threadId}`);
    expect(detail.status).toBe(200);
    expect(detail.body.messages.map((m: { messageId: string }) => m.messageId)).toEqual([messageId]);
  }, 120_000);
});
