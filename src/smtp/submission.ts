import { Readable } from 'node:stream';
import { SMTPServer } from 'smtp-server';
import type { AppContext } from '../app-context.js';
import { authenticateSubmission, submissionLoginHolds } from '../domain/email/smtp-credentials.service.js';
import { requireOwnSender, SUBMISSION_MAX_RECIPIENTS, submitMessage } from '../domain/email/submission.service.js';
import { DomainError } from '../domain/errors.js';
import type { SmtpCertificate } from '../infra/tls/smtp-certificate.js';
import { tracingEnabled } from '../infra/tracing.js';
import { edgeLimitsFromConfig, SmtpEdge } from './edge.js';
import type { SmtpListener } from './listener.js';
import { listenSmtp, readMessage, sharedSmtpOptions, smtpError, tooBig } from './smtp-options.js';
import { traceSmtp } from './tracing.js';

/** Failed AUTH attempts one client address may make per window before it is refused (issue 20 section 3). */
export const AUTH_FAILURE_LIMIT = 10;
/** The window of {@link AUTH_FAILURE_LIMIT} and the pause after it, in ms. */
export const AUTH_FAILURE_WINDOW_MS = 60_000;
/** Client addresses tracked at once; the oldest entry goes first past it (bounded memory under a spray of sources). */
const MAX_TRACKED_ADDRESSES = 10_000;

/**
 * Failed SMTP AUTH per client address, per instance, in fixed windows: past the limit the address is refused
 * (`421`) until its window ends. A map of counters rather than a rate-limit library: the project's limiter
 * (@fastify/rate-limit) is bound to HTTP requests.
 */
class AuthFailures {
  readonly #byAddress = new Map<string, { count: number; windowEnds: number }>();

  constructor(private readonly now: () => number) {}

  blocked(address: string): boolean {
    const e = this.#byAddress.get(address);
    if (!e) return false;
    if (e.windowEnds <= this.now()) {
      this.#byAddress.delete(address);
      return false;
    }
    return e.count > AUTH_FAILURE_LIMIT;
  }

  /** Counts one failure. @returns whether the address is now over the limit. */
  fail(address: string): boolean {
    const now = this.now();
    let e = this.#byAddress.get(address);
    if (!e || e.windowEnds <= now) {
      this.#byAddress.delete(address);
      if (this.#byAddress.size >= MAX_TRACKED_ADDRESSES) {
        const oldest = this.#byAddress.keys().next().value;
        if (oldest !== undefined) this.#byAddress.delete(oldest);
      }
      e = { count: 0, windowEnds: now + AUTH_FAILURE_WINDOW_MS };
      this.#byAddress.set(address, e);
    }
    e.count += 1;
    return e.count > AUTH_FAILURE_LIMIT;
  }
}

const TOO_MANY_FAILURES = () => smtpError(421, '4.7.0 Too many failed authentications; try again later');
/** The session's password was replaced or removed since AUTH: closed, so the client authenticates again (and fails). */
const CREDENTIALS_REPLACED = () =>
  smtpError(421, '4.7.0 Authentication credentials were replaced since AUTH; authenticate again');
const DEPROVISIONING = () => smtpError(550, '5.7.1 This identity is deprovisioning; it cannot send');

/** SMTP reply of a domain refusal at DATA (5.7.1 for sender rules; the message already carries the status code). */
function replyFor(err: DomainError): Error {
  return smtpError(err.code === 'FROM_NOT_IDENTITY' ? 553 : 550, err.message);
}

/**
 * The SMTP submission listener (RFC 8314 implicit TLS, RFC 6409 message submission, RFC 4954 AUTH), a front door
 * like HTTP: TLS from the first byte with the SMTP certificate, then:
 * - AUTH PLAIN or LOGIN with an identity's address and its issued password (POST …/smtp-credentials) before MAIL
 *   (`530 5.7.0` otherwise); wrong credentials `535 5.7.8`; more than {@link AUTH_FAILURE_LIMIT} failures from one
 *   address within a minute: `421 4.7.0` and the connection closed, and that address is refused until the minute
 *   ends; the login is checked again at every MAIL FROM and before a message is stored (submissionLoginHolds): a
 *   password replaced since AUTH answers `421 4.7.0` and closes the connection, nothing stored;
 * - MAIL FROM and the From header must be the identity's address (`553 5.7.1`); at most
 *   {@link SUBMISSION_MAX_RECIPIENTS} recipients (`452 4.5.3`); SIZE SMTP_MAX_MESSAGE_BYTES (`552 5.3.4`);
 * - DATA is answered `250` once the message is stored (then it is delivered as POST …/send delivers); a storage
 *   failure answers `451 4.3.0`. A deprovisioned identity's session fails at MAIL and DATA (`550 5.7.1`).
 * A TLS handshake that never finishes is dropped after smtp-server's socket timeout and holds no other session.
 */
export async function startSubmissionListener(
  ctx: AppContext,
  port: number,
  tls: SmtpCertificate,
): Promise<SmtpListener> {
  const maxBytes = ctx.config.SMTP_MAX_MESSAGE_BYTES;
  const failures = new AuthFailures(() => Date.now());
  // Each authenticated session's login (the credential hash it proved), kept here rather than in session.user, which
  // smtp-server's logger prints.
  const logins = new WeakMap<object, string>();
  const loginOf = (session: { user?: unknown }) => ({
    identityId: String(session.user),
    credentialHash: logins.get(session) ?? '',
  });
  // The MX listener's connection and session limits (edge.ts). Not its message rates: those bound anonymous senders,
  // and a submitting client has authenticated as an identity.
  const edge = new SmtpEdge({
    ...edgeLimitsFromConfig(ctx.config),
    messagesPerAddress: Number.MAX_SAFE_INTEGER,
    messagesPerSenderDomain: Number.MAX_SAFE_INTEGER,
  });
  const server = new SMTPServer({
    ...sharedSmtpOptions(ctx, tls),
    ...edge.serverOptions(),
    secure: true,
    banner: 'Switchboard mail submission',
    authMethods: ['PLAIN', 'LOGIN'],
    authOptional: false,
    authRequiredMessage: '5.7.0 Authentication required',
    disabledCommands: ['STARTTLS'],
    onConnect(session, callback) {
      callback(failures.blocked(session.remoteAddress) ? TOO_MANY_FAILURES() : null);
    },
    onAuth(auth, session, callback) {
      const address = session.remoteAddress;
      if (failures.blocked(address)) {
        callback(TOO_MANY_FAILURES());
        return;
      }
      authenticateSubmission(ctx, auth.username ?? '', auth.password ?? '').then(
        (login) => {
          if (login) {
            logins.set(session, login.credentialHash);
            callback(null, { user: login.identity.id });
            return;
          }
          ctx.log.info({ remoteAddress: address, user: auth.username }, 'SMTP submission: authentication failed');
          callback(
            failures.fail(address) ? TOO_MANY_FAILURES() : smtpError(535, '5.7.8 Authentication credentials invalid'),
          );
        },
        (err: unknown) => {
          ctx.log.error({ err }, 'SMTP submission: authentication lookup failed');
          callback(smtpError(454, '4.7.0 Temporary authentication failure'));
        },
      );
    },
    onMailFrom(address, session, callback) {
      submissionLoginHolds(ctx, loginOf(session)).then(
        (identity) => {
          if (identity === 'revoked') return callback(CREDENTIALS_REPLACED());
          if (identity === 'deprovisioning') return callback(DEPROVISIONING());
          try {
            requireOwnSender(identity, address.address);
            callback();
          } catch (err) {
            callback(smtpError(553, (err as Error).message));
          }
        },
        (err: unknown) => {
          ctx.log.error({ err }, 'SMTP submission: sender lookup failed');
          callback(smtpError(451, '4.3.0 Temporary failure, try again later'));
        },
      );
    },
    onRcptTo(_address, session, callback) {
      callback(
        session.envelope.rcptTo.length >= SUBMISSION_MAX_RECIPIENTS
          ? smtpError(452, `4.5.3 Too many recipients (at most ${SUBMISSION_MAX_RECIPIENTS})`)
          : null,
      );
    },
    onData(stream, session, callback) {
      readMessage(stream, maxBytes)
        .then(async (raw) => {
          if (!raw) return tooBig(maxBytes);
          // The password may have been replaced while the client sent DATA (deprovisioning: submitMessage refuses).
          if ((await submissionLoginHolds(ctx, loginOf(session))) === 'revoked') return CREDENTIALS_REPLACED();
          const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          const envelope = { mailFrom, rcptTo: session.envelope.rcptTo.map((r) => r.address) };
          await submitMessage(ctx, String(session.user), await ctx.mail.parse(raw), envelope, async (position) => {
            const stream = await ctx.mail.extractAttachment(Readable.from([raw]), position);
            if (!stream) return null;
            const parts: Buffer[] = [];
            for await (const chunk of stream) parts.push(Buffer.from(chunk as Buffer));
            return Buffer.concat(parts);
          });
          return null;
        })
        .then(
          (refusal) => callback(refusal),
          (err: unknown) => {
            if (err instanceof DomainError) {
              callback(replyFor(err));
              return;
            }
            ctx.log.error({ err }, 'storing submitted mail failed');
            callback(smtpError(451, '4.3.0 Temporary failure, try again later'));
          },
        );
    },
  });
  edge.attach(server);
  if (tracingEnabled()) traceSmtp(server, 'submission'); // spans per session and message: tracing.ts
  server.on('error', (err) => ctx.log.warn({ err }, 'SMTP submission listener error'));
  const bound = await listenSmtp(server, port, ctx.config.HOST);
  return {
    port: bound,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
