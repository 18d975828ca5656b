import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { relayEnvelope } from '../../src/infra/mail/nodemailer-transport.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

/**
 * The relay as the send API uses it: raw stored bytes handed to nodemailer's SMTP pool (SMTP_RELAY_URL), against a
 * real smtp-server that counts its sessions, limits them through the URL's `maxMessages`, and turns a reused session
 * away with a 421 before the message (as a relay closing an idle session does).
 */
interface Received {
  session: string;
  transaction: number;
  mailFrom: string;
  rcptTo: string[];
  raw: Buffer;
}

const received: Received[] = [];
/** MAIL FROM commands per SMTP session (session id → count). */
const sessions = new Map<string, number>();
/** When set, MAIL FROM of a session's second (and later) transaction answers 421 and the server closes it. */
let refuseReuse = false;
const clock = new ManualClock();

const it = appTest(async ({ onCleanup }) => {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onMailFrom(_address, session, cb) {
      const transaction = (sessions.get(session.id) ?? 0) + 1;
      sessions.set(session.id, transaction);
      if (refuseReuse && transaction > 1) {
        cb(Object.assign(new Error('closing idle session'), { responseCode: 421 }));
        return;
      }
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          session: session.id,
          transaction: sessions.get(session.id) ?? 0,
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks),
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.server.address() as AddressInfo;
  // maxConnections=1 makes the sessions follow one another, so the counts below are exact.
  return { clock, env: { SMTP_RELAY_URL: `smtp://127.0.0.1:${port}/?pool=true&maxConnections=1&maxMessages=2` } };
});

describe('the relay pool (SMTP_RELAY_URL options, reused sessions, the bytes relayed)', () => {
  const send = async (a: TestAccount, identityId: string, to: string) => {
    const res = await a.request('POST', `/api/email/identities/${identityId}/send`, {
      to,
      subject: 'Order',
      body: 'Hi.',
    });
    expect(res.status).toBe(202);
    return res.body as { messageId: string; threadId: string };
  };
  const statusOf = async (a: TestAccount, id: string, threadId: string) =>
    (await a.request('GET', `/api/email/identities/${id}/threads/${threadId}`)).body.messages[0].status as string;

  it('maxMessages from the URL: 5 sends over 3 sessions, each mail once, as stored, DKIM-signed', async ({ t, a }) => {
    received.length = 0;
    sessions.clear();
    const box = (await a.request('POST', '/api/email/identities', { localPart: `pool${Date.now().toString(36)}` }))
      .body as { id: string; address: string };
    const sent = [];
    for (let i = 0; i < 5; i++) sent.push(await send(a, box.id, `peer${i}@example.net`));
    for (const s of sent) expect(await statusOf(a, box.id, s.threadId)).toBe('sent');
    expect(received.map((r) => r.rcptTo)).toEqual([0, 1, 2, 3, 4].map((i) => [`peer${i}@example.net`]));
    expect(received.map((r) => r.transaction)).toEqual([1, 2, 1, 2, 1]);
    expect(sessions.size).toBe(3);
    for (const [i, s] of sent.entries()) {
      const raw = await fetch(
        `${t.url}/api/email/identities/${box.id}/messages/${encodeURIComponent(s.messageId)}/raw`,
        { headers: { authorization: `Bearer ${a.apiKey}` } },
      );
      const stored = Buffer.from(await raw.arrayBuffer());
      expect(received[i]!.mailFrom).toBe(box.address);
      // The stored bytes, ending in the line break the SMTP client puts before the terminating dot.
      expect(received[i]!.raw.toString('latin1')).toBe(stored.toString('latin1').replace(/(?<!\r\n)$/, '\r\n'));
      expect(stored.toString('latin1')).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256;/);
    }
  });

  it('a reused session turned away with 421 before the message: every mail goes out once, in the request or on the relay retry', async ({
    t,
    a,
  }) => {
    received.length = 0;
    sessions.clear();
    refuseReuse = true;
    const box = (await a.request('POST', '/api/email/identities', { localPart: `reuse${Date.now().toString(36)}` }))
      .body as { id: string };
    const sent = [];
    try {
      for (let i = 0; i < 3; i++) sent.push(await send(a, box.id, `again${i}@example.net`));
    } finally {
      refuseReuse = false;
    }
    // nodemailer's pool moves a message the server refused with 421 before reading it to a new session; what still
    // fails there is a transient error: queued for the relay retry (30 s), never failed, never sent twice.
    for (const s of sent) expect(['sent', 'queued']).toContain(await statusOf(a, box.id, s.threadId));
    expect(sessions.size).toBeGreaterThanOrEqual(3);
    clock.advance(30_000);
    await t.drain();
    for (const s of sent) expect(await statusOf(a, box.id, s.threadId)).toBe('sent');
    expect(received.map((r) => r.rcptTo[0]).sort()).toEqual([0, 1, 2].map((i) => `again${i}@example.net`));
  });
});

describe('relayEnvelope', () => {
  it('gives the envelope nodemailer itself would use: IDN domains punycoded, domains lower-cased, duplicates dropped', () => {
    const cases: [{ from: string; to: string[] }, { from: string; to: string[] }][] = [
      [
        { from: 'box@agents.example', to: ['a@example.net', 'user@jõgeva.ee', 'a@example.net'] },
        { from: 'box@agents.example', to: ['a@example.net', 'user@xn--jgeva-dua.ee'] },
      ],
      [
        { from: 'box@agents.example', to: ["o'hara@example.net", 'x_y-z@a-b.example.co'] },
        { from: 'box@agents.example', to: ["o'hara@example.net", 'x_y-z@a-b.example.co'] },
      ],
      [
        { from: 'Box@Agents.Example', to: ['Peer@Example.NET'] },
        { from: 'Box@agents.example', to: ['Peer@example.net'] },
      ],
      [
        { from: 'Kasutaja <box@jõgeva.ee>', to: ['"quoted local"@example.net', 'a@[127.0.0.1]'] },
        { from: 'box@xn--jgeva-dua.ee', to: ['"quoted local"@example.net', 'a@[127.0.0.1]'] },
      ],
    ];
    for (const [envelope, expected] of cases) expect(relayEnvelope(envelope)).toEqual(expected);
  });
});
