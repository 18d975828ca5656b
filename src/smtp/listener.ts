import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { AppContext } from '../app-context.js';
import { isInboundBlocked } from '../domain/email/blocklist.service.js';
import { activeIdentitiesFor } from '../domain/email/inbound.service.js';
import { receiveInboundStream } from '../domain/email/inbound-stream.js';

/** An SMTP reply as an error smtp-server sends to the client. */
function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

/** A running inbound listener. */
export interface SmtpListener {
  /** The bound TCP port. */
  port: number;
  close(): Promise<void>;
}

/**
 * The inbound SMTP listener (smtp-server), a front door like HTTP: the MX side of the service: no AUTH, no STARTTLS (run it behind a TLS
 * terminator or on a private network). Rules:
 * - RCPT TO an address that is not an active identity: `550 5.1.1` (unknown and deprovisioning alike); from a
 *   sender on the identity's account block list (inbound): `550 5.7.1`;
 * - more than SMTP_MAX_RECIPIENTS accepted recipients: `452 4.5.3 Too many recipients` (RFC 5321 4.5.3.1.10);
 * - SIZE is advertised as SMTP_MAX_MESSAGE_BYTES (RFC 1870); a larger MAIL FROM SIZE= or body gets `552 5.3.4`;
 * - DATA is streamed to storage and parsed as it arrives (bounded memory) and answered `250` only after the
 *   message is stored for every recipient (never lost once accepted); a message that cannot be parsed (too many
 *   MIME parts or nesting too deep) answers `554 5.6.0` (permanent); a storage failure answers `451 4.3.0` so the
 *   sender retries.
 */
export async function startSmtpListener(ctx: AppContext, port: number): Promise<SmtpListener> {
  const maxBytes = ctx.config.SMTP_MAX_MESSAGE_BYTES;
  const server = new SMTPServer({
    name: ctx.config.SMTP_PUBLIC_HOST,
    banner: 'Switchboard inbound mail',
    size: maxBytes,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    maxClients: 200,
    onRcptTo(address, session, callback) {
      if (session.envelope.rcptTo.length >= ctx.config.SMTP_MAX_RECIPIENTS) {
        callback(smtpError(452, '4.5.3 Too many recipients'));
        return;
      }
      const sender = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      activeIdentitiesFor(ctx, [address.address])
        .then(async (found) => {
          if (found.length === 0) return smtpError(550, `5.1.1 <${address.address}>: mailbox unavailable`);
          // The account's block list (src/domain/email/blocklist.service.ts).
          if (await isInboundBlocked(ctx.db, found[0]!, sender)) {
            return smtpError(550, `5.7.1 <${address.address}>: sender blocked by the recipient`);
          }
          return null;
        })
        .then(
          (refusal) => callback(refusal),
          (err: unknown) => {
            ctx.log.error({ err }, 'SMTP recipient lookup failed');
            callback(smtpError(451, '4.3.0 Temporary failure, try again later'));
          },
        );
    },
    onData(stream, session, callback) {
      const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      const envelope = { mailFrom, rcptTo: session.envelope.rcptTo.map((r) => r.address) };
      // Streamed to storage and parsed as it arrives (bounded memory): src/domain/email/inbound-stream.ts.
      receiveInboundStream(ctx, stream, envelope, maxBytes).then(
        (outcome) => {
          if (outcome.kind === 'too-large' || stream.sizeExceeded) {
            callback(smtpError(552, `5.3.4 Message exceeds the fixed maximum message size of ${maxBytes} bytes`));
          } else if (outcome.kind === 'unparseable') {
            callback(smtpError(554, outcome.reason.startsWith('5.6.0') ? outcome.reason : `5.6.0 ${outcome.reason}`));
          } else {
            callback(null);
          }
        },
        (err: unknown) => {
          ctx.log.error({ err }, 'storing inbound mail failed');
          callback(smtpError(451, '4.3.0 Temporary failure, try again later'));
        },
      );
    },
  });
  server.on('error', (err) => ctx.log.warn({ err }, 'SMTP listener error'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, ctx.config.HOST, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.server.address() as AddressInfo).port;
  return {
    port: bound,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
