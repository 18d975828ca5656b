import { Readable } from 'node:stream';
import nodemailer, { type SendMailOptions, type SentMessageInfo, type Transporter } from 'nodemailer';
import type MailMessage from 'nodemailer/lib/mailer/mail-message';
import MimeNode from 'nodemailer/lib/mime-node';
import type { InboundMessage, MailTransport, OutgoingMail } from '../../domain/email/mail-transport.port.js';
import { readMime, readMimeAttachment } from './mime-reader.js';

/**
 * Timeouts of the relay SMTP client (ms), kept well below the outbound claim lease (`CLAIM_LEASE_MS` of src/domain/email/outbound.service.ts; a test holds them apart):
 * nodemailer's defaults (2 min to connect, 10 min of socket inactivity) would let one attempt outlive the claim, so
 * a second dispatcher could claim the same message and the relay would get it twice. `connection` covers DNS and
 * TCP connect, `greeting` the server's 220 banner, `socket` any silence of the server after that, `dns` the lookup.
 * Parameters of the same name in the SMTP_RELAY_URL query string override them.
 */
export const RELAY_TIMEOUTS_MS = { connection: 30_000, greeting: 30_000, socket: 60_000, dns: 30_000 } as const;

/**
 * Open SMTP connections to the relay, reused from one message to the next (nodemailer's pool; `pool`,
 * `maxConnections` and `maxMessages` in the SMTP_RELAY_URL query string override these). A new connection per
 * message costs a TCP (and TLS) handshake, the greeting (smtp-server and many MTAs hold it back 100 ms to catch early
 * talkers) and EHLO before the first command: issue 24 measured the send API at 5 messages/s per client for that
 * alone. A message waiting for a free connection is still a claimed attempt whose lease is extended while it runs,
 * so the wait never lets a second dispatcher send it too.
 * `maxMessages` is 1,000 (was 100): the message that finds its connection used up waits for a new one and its
 * greeting, 100 ms and more, so at 100 one send in a hundred per connection paid it, which was the whole of the send
 * API's p99 in issue 24's bench (102 ms against the bare pool's 27 ms). Exim reuses a connection for 500 messages,
 * Postfix without a count limit; a relay that allows fewer per session is given its own `maxMessages` in the URL
 * (one that refuses with a 4xx is retried on the relay schedule, nothing is lost).
 */
export const RELAY_POOL = { pool: true, maxConnections: 10, maxMessages: 1_000 } as const;

/** Header fields a DKIM signature covers (RFC 6376 5.4.1 recommends these; From is required). */
const DKIM_SIGNED_HEADERS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:In-Reply-To:References:Auto-Submitted';

/**
 * The SMTP envelope nodemailer's `sendMail({ envelope })` would use, from nodemailer's own `MimeNode.setEnvelope`:
 * domains lower-cased and IDN ones punycoded (RFC 5890 A-labels), a display name dropped, odd local parts quoted,
 * recipients deduplicated in order. `from` is '' when nodemailer finds no address in it. About 25 µs per call
 * (≈ 1 % of a send's CPU, 2026-11-29), so no shortcut.
 */
export function relayEnvelope(envelope: { from: string; to: string[] }): { from: string; to: string[] } {
  const normalized = new MimeNode().setEnvelope(envelope).getEnvelope();
  return { from: normalized.from || '', to: normalized.to };
}

/**
 * What nodemailer's SMTP transports read of a message handed to their `send(mail, callback)` (the transport API
 * `sendMail` ends in): `message.getEnvelope()`, `message.messageId()`/`getHeader('message-id')` (for their log),
 * `message.createReadStream()` and `data` (signal, dsn: none here). The stream is the raw bytes as they are:
 * nodemailer's SMTP client escapes dots, makes line ends CRLF and ends the DATA itself. A Buffer gives a fresh stream
 * each time the pool asks again (it requeues a message a dropped connection had not read); a stream can be read
 * once, and a second ask gets a stream that fails, as nodemailer's own raw node does. `release()` destroys a source
 * stream not read to its end (after a failed send).
 */
function rawRelayMessage(
  envelope: { from: string; to: string[] },
  raw: Buffer | NodeJS.ReadableStream,
): MailMessage & { release(): void } {
  const normalized = relayEnvelope(envelope);
  let taken = false;
  const message = {
    getEnvelope: () => normalized,
    messageId: () => '',
    getHeader: () => '',
    createReadStream(): Readable {
      if (Buffer.isBuffer(raw)) return bufferStream(raw);
      if (taken) return Readable.from([]).destroy(new Error('ESTREAM: the raw message stream was read already'));
      taken = true;
      return raw as Readable;
    },
  };
  return {
    data: {},
    message,
    release() {
      if (!Buffer.isBuffer(raw)) (raw as Readable).destroy();
    },
  } as unknown as MailMessage & { release(): void };
}

/** One Buffer as a readable stream (one chunk, then the end), without `Readable.from`'s async iteration. */
function bufferStream(raw: Buffer): Readable {
  return new Readable({
    read() {
      this.push(raw);
      this.push(null);
    },
  });
}

function toSendMail(mail: OutgoingMail): SendMailOptions {
  const to = Array.isArray(mail.to) ? mail.to : [mail.to];
  const cc = mail.cc ?? [];
  const bcc = mail.bcc ?? [];
  return {
    from: mail.fromName ? { name: mail.fromName, address: mail.fromAddress } : mail.fromAddress,
    to,
    ...(cc.length > 0 ? { cc } : {}),
    // Bcc recipients ride only in the envelope below, never in a header (RFC 5322 3.6.3): nodemailer's stream
    // transport, which composes the stored raw message, would keep a `bcc` field as a header.
    ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
    subject: mail.subject,
    text: mail.text,
    ...(mail.html ? { html: mail.html } : {}),
    ...(mail.attachments && mail.attachments.length > 0
      ? {
          attachments: mail.attachments.map((a) => ({
            ...(a.filename ? { filename: a.filename } : {}),
            contentType: a.contentType,
            content: a.content,
            ...(a.contentId ? { cid: a.contentId, contentDisposition: 'inline' as const } : {}),
          })),
        }
      : {}),
    messageId: mail.messageId,
    ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo } : {}),
    ...(mail.references.length > 0 ? { references: mail.references } : {}),
    headers: mail.headers,
    envelope: { from: mail.fromAddress, to: mail.envelopeTo ?? [...to, ...cc, ...bcc] },
    date: mail.date,
    // RFC 6376 signature over the composed message (nodemailer signs the From domain's key, relaxed/relaxed).
    ...(mail.dkim ? { dkim: { ...mail.dkim, headerFieldNames: DKIM_SIGNED_HEADERS } } : {}),
  };
}

/**
 * The mail transport: nodemailer composes RFC 5322 messages (stream transport) and relays them through
 * `relayUrl` (SMTP_RELAY_URL; a pool of {@link RELAY_POOL} connections, opened lazily), mailparser reads inbound bytes.
 */
export class NodemailerTransport implements MailTransport {
  readonly #composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  #relay: Transporter | undefined;

  constructor(private readonly relayUrl: string | undefined) {}

  get hasRelay(): boolean {
    return Boolean(this.relayUrl);
  }

  async compose(mail: OutgoingMail): Promise<Buffer> {
    const { message } = (await this.#composer.sendMail(toSendMail(mail))) as unknown as { message: Buffer };
    return message;
  }

  parseStream(raw: NodeJS.ReadableStream): Promise<InboundMessage> {
    return readMime(raw);
  }

  extractAttachment(raw: NodeJS.ReadableStream, position: number): Promise<NodeJS.ReadableStream | null> {
    return readMimeAttachment(raw, position);
  }

  /**
   * Hands the raw bytes straight to the relay's SMTP transport (nodemailer's pool, or its single-connection
   * transport when SMTP_RELAY_URL says `pool=false`) as a {@link rawRelayMessage}: the pool's queue, connection
   * reuse, `maxMessages`, requeue of a message a dropped connection never read, reset after a refused message,
   * TLS and auth all stay nodemailer's; what `sendMail({ raw })` would add around the bytes (a MailMessage, a
   * MimeNode with a generated Message-ID, a stream pipeline) is left out. Errors are the transport's own.
   */
  relayRaw(envelope: { from: string; to: string[] }, raw: Buffer | NodeJS.ReadableStream): Promise<string> {
    const transport = this.#relayTransport().transporter;
    const mail = rawRelayMessage(envelope, raw);
    return new Promise((resolve, reject) => {
      transport.send(mail, (err, info) => {
        if (err) {
          mail.release();
          reject(err);
        } else resolve(String((info as SentMessageInfo | undefined)?.response ?? 'accepted'));
      });
    });
  }

  /** Parses a whole buffer through the same bounded reader as the SMTP listener ({@link readMime}). */
  async parse(raw: Buffer): Promise<InboundMessage> {
    return readMime(raw);
  }

  async relay(mail: OutgoingMail): Promise<string> {
    const info = await this.#relayTransport().sendMail(toSendMail(mail));
    return String(info.response ?? 'accepted');
  }

  #relayTransport(): Transporter {
    if (!this.relayUrl) throw new Error('NO_RELAY: SMTP_RELAY_URL is not configured');
    this.#relay ??= nodemailer.createTransport({
      url: this.relayUrl,
      ...RELAY_POOL,
      connectionTimeout: RELAY_TIMEOUTS_MS.connection,
      greetingTimeout: RELAY_TIMEOUTS_MS.greeting,
      socketTimeout: RELAY_TIMEOUTS_MS.socket,
      dnsTimeout: RELAY_TIMEOUTS_MS.dns,
    } as Parameters<typeof nodemailer.createTransport>[0]);
    return this.#relay;
  }

  close(): void {
    this.#relay?.close();
    this.#relay = undefined;
  }
}
