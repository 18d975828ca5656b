import type { DomainContext } from '../kernel/context.js';

/** The port identities report when nothing better is known (spec 2.6 names 465, submission with implicit TLS). */
export const SPEC_SMTP_PORT = 465;

/**
 * Where a mail client submits (issue 20 section 3): host SMTP_PUBLIC_HOST (default `localhost`, reachable from the
 * same machine), port SMTP_PUBLIC_PORT, else the submission listener's bound port, else SMTP_SUBMISSION_PORT
 * (before listen), else 465 (submission disabled: a terminator in front is assumed).
 */
export function smtpEndpoint(ctx: DomainContext): { smtpHost: string; smtpPort: number } {
  const { config } = ctx;
  return {
    smtpHost: config.SMTP_PUBLIC_HOST ?? 'localhost',
    smtpPort:
      config.SMTP_PUBLIC_PORT ??
      ctx.smtpEndpoints.submissionPort ??
      (config.SMTP_SUBMISSION_PORT > 0 ? config.SMTP_SUBMISSION_PORT : SPEC_SMTP_PORT),
  };
}
