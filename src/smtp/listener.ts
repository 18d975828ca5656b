import { SMTPServer } from 'smtp-server';
import type { AppContext } from '../app-context.js';
import type { EmailIdentity } from '../domain/email/identity.store.js';
import { recipientAtRcpt, SenderBlockedError } from '../domain/email/inbound.service.js';
import { receiveInboundStream } from '../domain/email/inbound-stream.js';
import { customRoleOwner, isRoleAddress, roleMailHook } from '../domain/email/role-mail.service.js';
import { IdleGc } from '../infra/idle-gc.js';
import type { SmtpCertificate } from '../infra/tls/smtp-certificate.js';
import { tracingEnabled } from '../infra/tracing.js';
import { authenticateInbound, DmarcRejection } from './authenticate.js';
import { edgeLimitsFromConfig, SmtpEdge } from './edge.js';
import { storingFailureReply } from './replies.js';
import { listenSmtp, sharedSmtpOptions, smtpError } from './smtp-options.js';
import { traceSmtp } from './tracing.js';

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
 *   postmaster@ and abuse@ of every hosted domain (and bare `postmaster`), kept in the operator mailbox, and of
 *   every verified custom domain without such an identity, kept for the domain's account (role-mail.service.ts); from a
 *   sender on the identity's account block list (inbound): `550 5.7.1`. A positive answer (active, not blocked) is
 *   reused for the same recipient and sender for RCPT_CACHE_TTL_MS (5 s, send-caches.ts); a block or a removal
 *   made on another instance within that time is refused at the end of DATA instead (`550 5.7.1` / `550 5.1.1`,
 *   nothing stored);
 * - more than SMTP_MAX_RECIPIENTS accepted recipients: `452 4.5.3 Too many recipients` (RFC 5321 4.5.3.1.10);
 * - SIZE is advertised as SMTP_MAX_MESSAGE_BYTES (RFC 1870); a larger MAIL FROM SIZE= or body gets `552 5.3.4`;
 * - DATA below one blob chunk (256 KiB) is held to its end and read once by the parser and the sender authentication;
 *   larger DATA is streamed to storage and parsed as it arrives (bounded memory either way,
 *   src/domain/email/inbound-stream.ts), the same bytes feeding the sender authentication (SPF, DKIM, DMARC, ARC; src/smtp/authenticate.ts) whose deadline
 *   counts from the end of DATA: DMARC `fail` under `p=reject` answers `550 5.7.1` and keeps nothing (the chunks
 *   stored so far are deleted);
 * - at most SMTP_MAX_CONCURRENT_DATA messages are read and stored at once (edge.ts; the DATA of others waits unread,
 *   TCP backpressure), and once a burst of large mail is over one full collection returns its memory (idle-gc.ts);
 * - DATA is answered `250` only after the message is stored for every recipient (never lost once accepted); when
 *   every recipient was deprovisioned between RCPT and the end of DATA, nothing is kept and DATA answers
 *   `550 5.1.1` (the sender bounces it; a 250 would lose it silently);
 *   unparseable MIME (too many parts, nesting too deep, malformed) or data that will fail again answers
 *   `554 5.6.0`, any other storage failure `451 4.3.0` so the sender retries (replies.ts).
 */
export async function startSmtpListener(ctx: AppContext, port: number, tls: SmtpCertificate): Promise<SmtpListener> {
  const maxBytes = ctx.config.SMTP_MAX_MESSAGE_BYTES;
  const edge = new SmtpEdge(edgeLimitsFromConfig(ctx.config)); // per-address and per-session limits: edge.ts
  // One full collection once a burst of large mail is over (memory back to its baseline: idle-gc.ts).
  const idleGc = new IdleGc();
  // The identity each accepted RCPT TO found, by smtp-server's address object (the one kept in the envelope).
  const rcptIdentity = new WeakMap<object, EmailIdentity>();
  idleGc.soon(); // and once after start-up, whose garbage (the embedded database's load) would stay as well
  const server = new SMTPServer({
    ...sharedSmtpOptions(ctx, tls),
    ...edge.serverOptions(),
    banner: 'Switchboard inbound mail',
    authOptional: true,
    disabledCommands: ['AUTH'],
    onRcptTo(address, session, callback) {
      // postmaster@/abuse@ of every hosted domain reach the operator mailbox (role-mail.service.ts).
      if (isRoleAddress(ctx.config, address.address)) return callback();
      if (session.envelope.rcptTo.length >= ctx.config.SMTP_MAX_RECIPIENTS) {
        callback(smtpError(452, '4.5.3 Too many recipients'));
        return;
      }
      const sender = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      // The active identity and the account's block list (blocklist.service.ts) in one read (inbound.service.ts).
      recipientAtRcpt(ctx, address.address, sender)
        .then(async (found) => {
          if (!found) {
            // postmaster@/abuse@ of a verified custom domain: kept for the domain's account (role-mail.service.ts).
            if (await customRoleOwner(ctx, address.address)) return null;
            return smtpError(550, `5.1.1 <${address.address}>: mailbox unavailable`);
          }
          if (found.blocked) {
            return smtpError(550, `5.7.1 <${address.address}>: sender blocked by the recipient`);
          }
          // Handed to DATA (smtp-server keeps this object in the envelope): the delivery re-checks it in its statement.
          rcptIdentity.set(address, found.identity);
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
      // The identities RCPT found, when every recipient was one (a role address was not looked up there).
      const found = session.envelope.rcptTo.map((r) => rcptIdentity.get(r));
      const rcptIdentities = found.every((i) => i !== undefined)
        ? [...new Map(found.map((i) => [i.id, i])).values()]
        : undefined;
      const alsoDeliver = roleMailHook(ctx, envelope, session.remoteAddress);
      // Held whole when small, else streamed to storage, parsed and authenticated as it arrives: inbound-stream.ts.
      receiveInboundStream(ctx, stream, envelope, maxBytes, {
        authenticate: (message, dataEnd) => authenticateInbound(ctx, message, session, dataEnd),
        // The role-mail hook only when a recipient can be a role address (roleMailHook).
        ...(alsoDeliver ? { alsoDeliver } : {}),
        ...(rcptIdentities ? { rcptIdentities } : {}),
      })
        .finally(() => idleGc.add(stream.byteLength ?? 0))
        .then(
          (outcome) => {
            if (outcome.kind === 'too-large' || stream.sizeExceeded) {
              callback(smtpError(552, `5.3.4 Message exceeds the fixed maximum message size of ${maxBytes} bytes`));
            } else if (outcome.kind === 'unparseable') {
              callback(smtpError(554, outcome.reason.startsWith('5.6.0') ? outcome.reason : `5.6.0 ${outcome.reason}`));
            } else if (rcptIdentities && outcome.stored.length === 0) {
              // Every recipient was an identity at RCPT and none takes mail now (deprovisioned before the end of
              // DATA): nothing was kept, so the sender must bounce the message rather than be told it was delivered.
              callback(smtpError(550, '5.1.1 Recipient mailbox no longer available; message not delivered'));
            } else {
              callback(null);
            }
          },
          (err: unknown) => {
            if (err instanceof DmarcRejection) return callback(err);
            // A block added since RCPT's (cached) answer: nothing stored, refused as RCPT would have (inbound.service.ts).
            if (err instanceof SenderBlockedError) {
              return callback(smtpError(550, '5.7.1 Message refused: sender blocked by the recipient'));
            }
            const reply = storingFailureReply(err); // 554 when permanent, 451 when it can heal: replies.ts
            ctx.log.error({ err, reply: reply.code }, 'storing inbound mail failed');
            callback(smtpError(reply.code, reply.message));
          },
        );
    },
  });
  edge.attach(server);
  if (tracingEnabled()) traceSmtp(server, 'mx'); // spans per session and message: tracing.ts
  server.on('error', (err) => ctx.log.warn({ err }, 'SMTP listener error'));
  const bound = await listenSmtp(server, port, ctx.config.HOST);
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        idleGc.stop();
        server.close(() => resolve());
      }),
  };
}
