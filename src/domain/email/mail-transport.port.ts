import type { KeyObject } from 'node:crypto';
/**
 * The mail port of the email area: what the domain needs from the mail world, implemented by
 * `src/infra/mail/` (nodemailer to compose and relay, mailparser to read). The domain never opens a socket.
 */

/** One attachment of an outbound message (bytes decoded). `contentId` (without brackets) makes it inline. */
export interface OutgoingAttachment {
  filename: string | null;
  contentType: string;
  content: Buffer;
  contentId?: string | null;
}

/** One outbound message as the domain describes it (RFC 5322 fields; addresses without display names but `fromName`). */
export interface OutgoingMail {
  fromAddress: string;
  fromName: string | null;
  /** The To header: one or more addresses (the envelope too, with cc and bcc, unless `envelopeTo` is given). */
  to: string | string[];
  /** Envelope recipients (RCPT TO) when they differ from to+cc+bcc, e.g. only the relay's share of the recipients. */
  envelopeTo?: string[];
  /** Header Cc. */
  cc?: string[];
  /** Envelope-only recipients: never written into a header (RFC 5322 3.6.3, "Bcc" removed before transmission). */
  bcc?: string[];
  replyTo?: string | null;
  subject: string;
  text: string;
  html?: string | null;
  attachments?: OutgoingAttachment[];
  /** RFC 5322 Message-ID with angle brackets. */
  messageId: string;
  inReplyTo: string | null;
  references: string[];
  /** Extra header fields, e.g. `Auto-Submitted` (RFC 3834). */
  headers: Record<string, string>;
  date: Date;
  /** DKIM signing key of the From domain (RFC 6376); unsigned when absent. */
  dkim?: DkimSigner;
}

/**
 * What signs a message with DKIM (nodemailer's `dkim` option): `d=`, `s=` and the private key, as a parsed
 * `KeyObject` (what the service holds: nodemailer hands it to `crypto.Sign.sign`, which then skips parsing a PEM on
 * every signature, about half the CPU of an RSA-2048 signature; issue 24) or as PEM text.
 */
export interface DkimSigner {
  domainName: string;
  keySelector: string;
  privateKey: KeyObject | string;
}

/** The fields the inbound path reads from a parsed RFC 5322 message. Strings may still contain U+0000. */
export interface InboundMessage {
  /** Addresses of From, To and Cc (no display names), in header order. */
  from: string[];
  to: string[];
  cc: string[];
  messageId: string | null;
  inReplyTo: string | null;
  /** References as the parser gives it: one string of ids or a list. */
  references: string | string[] | null;
  subject: string;
  /** The text body (HTML-only mail converted to text). */
  text: string;
  /** Raw value of the `Auto-Submitted` header, if present (RFC 3834). */
  autoSubmitted: string | null;
  /** Each header's first raw value by lower-case name (List-* headers unparsed). */
  headers: Map<string, string>;
  /** The MIME type of the Content-Type header (e.g. `multipart/report`), if present. */
  contentType: string | undefined;
  /** Reply-To address, if any. */
  replyTo?: string | null;
  /** The HTML part, if any (unsanitised). */
  html?: string | null;
  /** Attachments in the order of the raw message (their bytes stay in the raw message). */
  attachments?: InboundAttachment[];
  /** Size of the raw message in bytes. */
  size?: number;
  /**
   * For a `multipart/report` (RFC 6522): its `report-type`, the decoded `message/delivery-status` part and
   * `text/rfc822-headers` part (each up to 256 KiB), and the message's first 256 KiB as text (where the returned
   * message's headers are when it came back as `message/rfc822`). Null for any other message.
   */
  report?: {
    reportType: string | null;
    deliveryStatus: string | null;
    returnedHeaders: string | null;
    head: string;
  } | null;
}

/** Metadata of one attachment of a parsed message; `position` is its index among the message's attachments. */
export interface InboundAttachment {
  position: number;
  filename: string | null;
  contentType: string;
  /** Decoded size in bytes. */
  size: number;
  inline: boolean;
  /** Content-ID without angle brackets, if any. */
  contentId: string | null;
}

/** Why a message cannot be parsed: permanent (RFC 3463 5.6.0, e.g. too many MIME parts or nesting too deep). */
export class MimeError extends Error {
  readonly permanent = true;
}

/** Why a relay refused or failed a message. `responseCode` is the SMTP reply code when the relay answered. */
export interface RelayError {
  responseCode?: number;
  response?: string;
  message: string;
}

/** The mail transport port. */
export interface MailTransport {
  /** Composes the message as RFC 5322 bytes (CRLF line ends), as it would go on the wire. */
  compose(mail: OutgoingMail): Promise<Buffer>;
  /** Parses RFC 5322 bytes. */
  parse(raw: Buffer): Promise<InboundMessage>;
  /**
   * Parses an RFC 5322 stream with bounded memory: attachment bytes are counted and dropped, text and HTML kept.
   * @throws MimeError for a message that cannot be parsed (too many parts or nesting too deep).
   */
  parseStream(raw: NodeJS.ReadableStream): Promise<InboundMessage>;
  /**
   * The decoded bytes of the `position`-th attachment of the raw message, as a stream; null when there is none.
   */
  extractAttachment(raw: NodeJS.ReadableStream, position: number): Promise<NodeJS.ReadableStream | null>;
  /**
   * Hands raw RFC 5322 bytes to the relay with the given envelope (Bcc recipients ride only in the envelope).
   * @returns the relay's answer line. @throws RelayError-shaped errors as {@link relay}.
   */
  relayRaw(envelope: { from: string; to: string[] }, raw: Buffer | NodeJS.ReadableStream): Promise<string>;
  /** Whether a relay (SMTP_RELAY_URL) is configured for mail outside the service's hosted domains. */
  readonly hasRelay: boolean;
  /**
   * Hands the message to the relay. @returns the relay's answer line.
   * @throws RelayError-shaped errors (a 5xx `responseCode` is permanent); throws when no relay is configured.
   */
  relay(mail: OutgoingMail): Promise<string>;
  /** Closes pooled relay connections. */
  close(): void;
}
