import { SMTPServer } from 'smtp-server';
import type { AppContext } from '../app-context.js';
import { activeIdentitiesFor, deliverInbound } from '../domain/email/inbound.service.js';
import { deliverToOperator, isRoleAddress } from '../domain/email/operator-mail.service.js';
import type { SmtpCertificate } from '../infra/tls/smtp-certificate.js';
import { authenticateInbound, DmarcRejection } from './authenticate.js';
import { edgeLimitsFromConfig, SmtpEdge } from './edge.js';
import { storingFailureReply, unparseable } from './replies.js';
import { listenSmtp, sharedSmtpOptions, smtpError } from './smtp-options.js';

/** A running inbound listener. */
export interface SmtpListener {
  /** The bound TCP port. */
  port: number;
  close(): Promise<void>;
}

/**
 * The inbound SMTP listener (smtp-server), a front door like HTTP: the MX side of the service. It offers STARTTLS
 * (RFC 3207) with the SMTP certificate (`tls`, shared with the submission listener) and never AUTH: mail for
 * other domains is never relayed here (submission is src/smtp/submission.ts). Rules:
 * - RCPT TO an address that is not an active identity: `550 5.1.1` (unknown and deprovisioning alike), except
 *   postmaster@ and abuse@ of every hosted domain (and bare `postmaster`), kept in the operator mailbox;
 * - more than SMTP_MAX_RECIPIENTS accepted recipients: `452 4.5.3 Too many recipients` (RFC 5321 4.5.3.1.10);
 * - SIZE is advertised as SMTP_MAX_MESSAGE_BYTES (RFC 1870); a larger MAIL FROM SIZE= or body gets `552 5.3.4`;
 * - at the end of DATA the sender is authenticated (SPF, DKIM, DMARC, ARC; src/smtp/authenticate.ts): DMARC
 *   `fail` under `p=reject` answers `550 5.7.1` and stores nothing;
 * - DATA is answered `250` only after the message is stored for every recipient (never lost once accepted);
 *   unparseable MIME or data that will fail again answers `554 5.6.0`, any other storage failure `451 4.3.0` so
 *   the sender retries (replies.ts).
 */
export async function startSmtpListener(ctx: AppContext, port: number, tls: SmtpCertificate): Promise<SmtpListener> {
  const maxBytes = ctx.config.SMTP_MAX_MESSAGE_BYTES;
  const edge = new SmtpEdge(edgeLimitsFromConfig(ctx.config)); // per-address and per-session limits: edge.ts
  const server = new SMTPServer({
    ...sharedSmtpOptions(ctx, tls),
    ...edge.serverOptions(),
    banner: 'Switchboard inbound mail',
    authOptional: true,
    disabledCommands: ['AUTH'],
    onRcptTo(address, session, callback) {
      // postmaster@/abuse@ of every hosted domain reach the operator mailbox (operator-mail.service.ts).
      if (isRoleAddress(ctx.config, address.address)) return callback();
      if (session.envelope.rcptTo.length >= ctx.config.SMTP_MAX_RECIPIENTS) {
        callback(smtpError(452, '4.5.3 Too many recipients'));
        return;
      }
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
        const raw = Buffer.concat(chunks);
        // Sender authentication first: DMARC p=reject answers 550 5.7.1 and stores nothing.
        Promise.all([authenticateInbound(ctx, raw, session), ctx.mail.parse(raw).catch(unparseable)])
          .then(([auth, parsed]) =>
            Promise.all([
              deliverInbound(ctx, parsed, envelope, auth),
              deliverToOperator(ctx, parsed, envelope, session.remoteAddress),
            ]),
          )
          .then(
            () => callback(null),
            (err: unknown) => {
              if (err instanceof DmarcRejection) return callback(err);
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
  const bound = await listenSmtp(server, port, ctx.config.HOST);
  return {
    port: bound,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
