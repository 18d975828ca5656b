import type { AddressObject } from 'mailparser';
import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import type { InboundMessage, MailTransport, OutgoingMail } from '../../domain/email/mail-transport.port.js';

/**
 * Timeouts of the relay SMTP client (ms), kept well below the outbound claim lease (`CLAIM_LEASE_MS` of src/domain/email/outbound.service.ts; a test holds them apart):
 * nodemailer's defaults (2 min to connect, 10 min of socket inactivity) would let one attempt outlive the claim, so
 * a second dispatcher could claim the same message and the relay would get it twice. `connection` covers DNS and
 * TCP connect, `greeting` the server's 220 banner, `socket` any silence of the server after that, `dns` the lookup.
 * Parameters of the same name in the SMTP_RELAY_URL query string override them.
 */
export const RELAY_TIMEOUTS_MS = { connection: 30_000, greeting: 30_000, socket: 60_000, dns: 30_000 } as const;

/** Header fields a DKIM signature covers (RFC 6376 5.4.1 recommends these; From is required). */
const DKIM_SIGNED_HEADERS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:In-Reply-To:References:Auto-Submitted';

function toSendMail(mail: OutgoingMail): SendMailOptions {
  return {
    from: mail.fromName ? { name: mail.fromName, address: mail.fromAddress } : mail.fromAddress,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    messageId: mail.messageId,
    ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo } : {}),
    ...(mail.references.length > 0 ? { references: mail.references } : {}),
    headers: mail.headers,
    envelope: { from: mail.fromAddress, to: mail.envelopeTo ?? (Array.isArray(mail.to) ? mail.to : [mail.to]) },
    date: mail.date,
    // RFC 6376 signature over the composed message (nodemailer signs the From domain's key, relaxed/relaxed).
    ...(mail.dkim ? { dkim: { ...mail.dkim, headerFieldNames: DKIM_SIGNED_HEADERS } } : {}),
  };
}

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  const list = Array.isArray(field) ? field : field ? [field] : [];
  return list.flatMap((a) => a.value.map((v) => v.address ?? '')).filter((a) => a !== '');
}

/**
 * The mail transport: nodemailer composes RFC 5322 messages (stream transport) and relays them through
 * `relayUrl` (SMTP_RELAY_URL; pooled lazily), mailparser reads inbound bytes.
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

  async parse(raw: Buffer): Promise<InboundMessage> {
    // mailparser is loaded with the first inbound message, not at start-up (docs/operations.md "Start-up").
    const { simpleParser } = await import('mailparser');
    const parsed = await simpleParser(raw, { skipHtmlToText: false, skipTextToHtml: true, skipImageLinks: true });
    // Raw header lines: mailparser folds List-* headers into a structured `list` entry.
    const headers = new Map<string, string>();
    for (const h of parsed.headerLines) {
      if (!headers.has(h.key)) headers.set(h.key, h.line.slice(h.line.indexOf(':') + 1).trim());
    }
    const autoSubmitted = parsed.headers.get('auto-submitted');
    return {
      from: addresses(parsed.from),
      to: addresses(parsed.to),
      cc: addresses(parsed.cc),
      messageId: parsed.messageId ?? null,
      inReplyTo: parsed.inReplyTo ?? null,
      references: (parsed.references as string | string[] | undefined) ?? null,
      subject: parsed.subject ?? '',
      text: parsed.text ?? '',
      autoSubmitted: autoSubmitted === undefined ? null : String(autoSubmitted),
      headers,
      contentType: (parsed.headers.get('content-type') as { value?: string } | undefined)?.value,
    };
  }

  async relay(mail: OutgoingMail): Promise<string> {
    if (!this.relayUrl) throw new Error('NO_RELAY: SMTP_RELAY_URL is not configured');
    this.#relay ??= nodemailer.createTransport({
      url: this.relayUrl,
      connectionTimeout: RELAY_TIMEOUTS_MS.connection,
      greetingTimeout: RELAY_TIMEOUTS_MS.greeting,
      socketTimeout: RELAY_TIMEOUTS_MS.socket,
      dnsTimeout: RELAY_TIMEOUTS_MS.dns,
    } as Parameters<typeof nodemailer.createTransport>[0]);
    const info = await this.#relay.sendMail(toSendMail(mail));
    return String(info.response ?? 'accepted');
  }

  close(): void {
    this.#relay?.close();
    this.#relay = undefined;
  }
}
