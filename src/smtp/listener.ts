import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { AppContext } from '../app-context.js';
import { activeIdentitiesFor, deliverInbound } from '../domain/email/inbound.service.js';
import { deliverToOperator, isRoleAddress } from '../domain/email/operator-mail.service.js';
import { edgeLimitsFromConfig, SmtpEdge } from './edge.js';
import { storingFailureReply, unparseable } from './replies.js';

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
 * - RCPT TO an address that is not an active identity: `550 5.1.1` (unknown and deprovisioning alike), except
 *   postmaster@ and abuse@ of every hosted domain (and bare `postmaster`), kept in the operator mailbox;
 * - more than SMTP_MAX_RECIPIENTS accepted recipients: `452 4.5.3 Too many recipients` (RFC 5321 4.5.3.1.10);
 * - SIZE is advertised as SMTP_MAX_MESSAGE_BYTES (RFC 1870); a larger MAIL FROM SIZE= or body gets `552 5.3.4`;
 * - DATA is answered `250` only after the message is stored for every recipient (never lost once accepted);
 *   unparseable MIME or data that will fail again answers `554 5.6.0`, any other storage failure `451 4.3.0` so
 *   the sender retries (replies.ts).
 */
export async function startSmtpListener(ctx: AppContext, port: number): Promise<SmtpListener> {
  const maxBytes = ctx.config.SMTP_MAX_MESSAGE_BYTES;
  const edge = new SmtpEdge(edgeLimitsFromConfig(ctx.config)); // per-address and per-session limits: edge.ts
  const server = new SMTPServer({
    ...edge.serverOptions(),
    name: ctx.config.SMTP_PUBLIC_HOST,
    banner: 'Switchboard inbound mail',
    size: maxBytes,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onRcptTo(address, session, callback) {
      if (session.envelope.rcptTo.length >= ctx.config.SMTP_MAX_RECIPIENTS) {
        callback(smtpError(452, '4.5.3 Too many recipients'));
        return;
      }
      // postmaster@/abuse@ of every hosted domain reach the operator mailbox (operator-mail.service.ts).
      if (isRoleAddress(ctx.config, address.address)) return callback();
      activeIdentitiesFor(ctx, [address.address]).then(
        (found) =>
          callback(found.length > 0 ? null : smtpError(550, `5.1.1 <${address.address}>: mailbox unavailable`)),
        (err: unknown) => {
          ctx.log.error({ err }, 'SMTP recipient lookup failed');
          callback(smtpError(451, '4.3.0 Temporary failure, try again later'));
        },
      );
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      let bytes = 0;
      stream.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes <= maxBytes) chunks.push(chunk);
      });
      stream.on('end', () => {
        if (stream.sizeExceeded || bytes > maxBytes) {
          callback(smtpError(552, `5.3.4 Message exceeds the fixed maximum message size of ${maxBytes} bytes`));
          return;
        }
        const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const envelope = { mailFrom, rcptTo: session.envelope.rcptTo.map((r) => r.address) };
        ctx.mail
          .parse(Buffer.concat(chunks))
          .catch(unparseable)
          .then((parsed) =>
            Promise.all([
              deliverInbound(ctx, parsed, envelope),
              deliverToOperator(ctx, parsed, envelope, session.remoteAddress),
            ]),
          )
          .then(
            () => callback(null),
            (err: unknown) => {
              const reply = storingFailureReply(err); // 554 when permanent, 451 when it can heal: replies.ts
              ctx.log.error({ err, reply: reply.code }, 'storing inbound mail failed');
              callback(smtpError(reply.code, reply.message));
            },
          );
      });
    },
  });
  edge.attach(server);
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
