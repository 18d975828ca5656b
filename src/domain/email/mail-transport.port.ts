/**
 * The mail port of the email area: what the domain needs from the mail world, implemented by
 * `src/infra/mail/` (nodemailer to compose and relay, mailparser to read). The domain never opens a socket.
 */

/** One outbound message as the domain describes it (RFC 5322 fields; addresses without display names but `fromName`). */
export interface OutgoingMail {
  fromAddress: string;
  fromName: string | null;
  /** The To header: one or more addresses (the envelope too, unless `envelopeTo` is given). */
  to: string | string[];
  /** Envelope recipients (RCPT TO) when they differ from `to`, e.g. only the relay's share of the recipients. */
  envelopeTo?: string[];
  subject: string;
  text: string;
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

/** What signs a message with DKIM (nodemailer's `dkim` option): `d=`, `s=` and the PEM private key. */
export interface DkimSigner {
  domainName: string;
  keySelector: string;
  privateKey: string;
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
