import type { SMTPServerSession } from 'smtp-server';
import type { AppContext } from '../app-context.js';
import { mailHostName } from '../domain/email/mail.rules.js';
import { authenticateSender, type SenderAuthOutcome } from '../domain/email/sender-auth.js';

/** The SMTP answer to mail that DMARC `p=reject` refuses: `550 5.7.1` (RFC 7489 6.6.4, RFC 3463 5.7.1). */
export class DmarcRejection extends Error {
  readonly responseCode = 550;
  constructor() {
    super('5.7.1 Message rejected: the sender domain’s DMARC policy (p=reject) failed');
  }
}

/** The client's IP address as SPF reads it (an IPv4-mapped IPv6 address as IPv4). */
export function clientIp(session: Pick<SMTPServerSession, 'remoteAddress'>): string {
  const ip = session.remoteAddress ?? '';
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

/**
 * Sender authentication of the DATA of a session (docs/email.md "Sender authentication"): SPF with the session's
 * client IP, EHLO name and MAIL FROM, DKIM, DMARC and ARC through ctx.dns, bounded by SMTP_AUTH_TIMEOUT_MS counted
 * from `dataEnd` (the end of DATA; a dead resolver gives `temperror`, never a hung session). `raw` is the whole
 * message or the stream of its bytes as they arrive (the listener tees DATA here and to storage).
 * @returns the outcome to store with the message.
 * @throws {@link DmarcRejection} (SMTP `550 5.7.1`) when DMARC failed under `p=reject` (RFC 7489 6.6.4, `pct` respected): the
 *   listener answers it and stores nothing.
 */
export async function authenticateInbound(
  ctx: AppContext,
  raw: Buffer | NodeJS.ReadableStream,
  session: Pick<SMTPServerSession, 'remoteAddress' | 'hostNameAppearsAs' | 'envelope'>,
  dataEnd?: Promise<unknown>,
): Promise<SenderAuthOutcome> {
  const outcome = await authenticateSender(
    raw,
    {
      ip: clientIp(session),
      helo: session.hostNameAppearsAs ?? '',
      mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
    },
    {
      resolver: ctx.dns,
      authServId: mailHostName(ctx.config),
      timeoutMs: ctx.config.SMTP_AUTH_TIMEOUT_MS,
      ...(dataEnd ? { deadlineFrom: dataEnd } : {}),
    },
  );
  if (outcome.disposition === 'reject') {
    throw new DmarcRejection();
  }
  return outcome;
}
