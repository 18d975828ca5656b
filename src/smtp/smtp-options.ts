import type { Readable } from 'node:stream';
import type { SMTPServer, SMTPServerOptions } from 'smtp-server';
import type { AppContext } from '../app-context.js';
import { mailHostName } from '../domain/email/mail.rules.js';
import type { SmtpCertificate } from '../infra/tls/smtp-certificate.js';

/** An SMTP reply as an error smtp-server sends to the client (`responseCode` + text). */
export function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

/** The name both listeners greet with (banner, EHLO): {@link mailHostName}. */
export const greetingName = mailHostName;

/**
 * The smtp-server options the MX and submission listeners share: greeting name, SIZE (RFC 1870) =
 * SMTP_MAX_MESSAGE_BYTES and the TLS certificate (TLS 1.2 at least) that the submission listener
 * serves on connect and the MX listener after STARTTLS.
 */
export function sharedSmtpOptions(ctx: AppContext, tls: SmtpCertificate): SMTPServerOptions {
  return {
    name: greetingName(ctx.config),
    size: ctx.config.SMTP_MAX_MESSAGE_BYTES,
    logger: false,
    key: tls.key,
    cert: tls.cert,
    minVersion: 'TLSv1.2',
  };
}

/**
 * Reads a DATA stream up to `maxBytes`. @returns the bytes, or undefined when the message was larger (the caller
 * answers `552 5.3.4`); the rest of an oversized stream is drained, not kept.
 */
export function readMessage(
  stream: Readable & { sizeExceeded?: boolean },
  maxBytes: number,
): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= maxBytes) chunks.push(chunk);
    });
    stream.on('error', reject);
    stream.on('end', () => resolve(stream.sizeExceeded || bytes > maxBytes ? undefined : Buffer.concat(chunks)));
  });
}

/** `552 5.3.4` for a message over SMTP_MAX_MESSAGE_BYTES. */
export function tooBig(maxBytes: number): Error {
  return smtpError(552, `5.3.4 Message exceeds the fixed maximum message size of ${maxBytes} bytes`);
}

/** Binds `server` to `host:port` (0 picks a free port). @returns the bound port. */
export async function listenSmtp(server: SMTPServer, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  return (server.server.address() as { port: number }).port;
}
