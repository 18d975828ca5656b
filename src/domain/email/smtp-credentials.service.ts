import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import type { DomainContext } from '../kernel/context.js';
import type { smtpCredentialsShape } from './email.shapes.js';
import { findActiveIdentity } from './identity.service.js';
import {
  type EmailIdentity,
  identityByAddress,
  identityById,
  saveSmtpCredential,
  smtpCredentialOf,
} from './identity.store.js';
import { normalizeAddress } from './mail.rules.js';
import { SPEC_SMTP_PORT, smtpEndpoint } from './smtp-endpoint.js';

/** Answer of POST /api/email/identities/{id}/smtp-credentials: the only time the password is shown. */
export type SmtpCredentialsView = z.output<typeof smtpCredentialsShape>;

export { SPEC_SMTP_PORT, smtpEndpoint };

/**
 * scrypt cost (RFC 7914): N=2^14, r=8, p=1 (node:crypto's defaults; 16 MiB and about 50 ms of one libuv thread per
 * check here). The password is 192 random bits, so no hash cost is needed against guessing it; a higher cost would
 * mostly let an AUTH flood occupy the thread pool that DNS lookups and file I/O share.
 */
const SCRYPT = { N: 16_384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const KEY_BYTES = 32;

function scryptAsync(password: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_BYTES, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$<salt>$<hash>` (base64url) of `password` with a fresh 16-byte salt. */
export async function hashSmtpPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Whether `password` matches a {@link hashSmtpPassword} value; the hashes are compared in constant time. */
export async function verifySmtpPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash no password matches, checked when the user is unknown so that answer takes as long as a wrong password. */
let decoy: Promise<string> | undefined;

/**
 * POST /api/email/identities/{id}/smtp-credentials (issue 20 section 3): issues a new SMTP submission password for
 * the identity (24 random bytes, base64url) and replaces any earlier one, which stops working at once. Only a salted
 * scrypt hash is stored; the password is in this answer and nowhere else (GET keeps `smtpPass: null`, spec 2.6).
 * @returns `{smtpHost, smtpPort, smtpUser, smtpPass}`.
 * @throws NotFoundError; UnprocessableError IDENTITY_DEPROVISIONING.
 */
export async function createSmtpCredentials(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
): Promise<SmtpCredentialsView> {
  requireScope(actor, 'email');
  const identity = await findActiveIdentity(ctx, actor.accountId, identityId);
  const password = randomBytes(24).toString('base64url');
  const passwordHash = await hashSmtpPassword(password);
  const now = ctx.clock.now();
  await saveSmtpCredential(ctx.db, {
    identityId: identity.id,
    accountId: identity.accountId,
    passwordHash,
    createdAt: now,
  });
  return { ...smtpEndpoint(ctx), smtpUser: identity.address, smtpPass: password };
}

/** What a submission session proved at AUTH: the identity, and the stored hash of the password it gave. */
export interface SubmissionLogin {
  identity: EmailIdentity;
  /** The credential's stored scrypt hash at AUTH: kept in memory to see a replacement, never logged or sent. */
  credentialHash: string;
}

/**
 * SMTP AUTH of the submission listener (PLAIN and LOGIN carry the same user and password): the active identity
 * whose address is `username` (any case) and whose current password is `password`. A deprovisioning identity, an
 * unknown user and a wrong password all answer undefined, after the same scrypt work.
 * @returns the login, which {@link submissionLoginHolds} checks again for each message of the session.
 */
export async function authenticateSubmission(
  ctx: DomainContext,
  username: string,
  password: string,
): Promise<SubmissionLogin | undefined> {
  const address = normalizeAddress(username);
  // An address is at most 320 printable characters (RFC 5321 4.5.3.1); anything else (NUL bytes included, which
  // PostgreSQL text refuses) cannot name an identity.
  const plausible = address.length > 0 && address.length <= 320 && /^[\x21-\x7e]+$/.test(address);
  const identity = plausible ? await identityByAddress(ctx.db, address) : null;
  const credential = identity?.status === 'active' ? await smtpCredentialOf(ctx.db, identity.id) : null;
  if (!identity || !credential) {
    decoy ??= hashSmtpPassword(randomBytes(16).toString('hex'));
    await verifySmtpPassword(password, await decoy);
    return undefined;
  }
  return (await verifySmtpPassword(password, credential.passwordHash))
    ? { identity, credentialHash: credential.passwordHash }
    : undefined;
}

/**
 * Whether a submission session's login (from {@link authenticateSubmission}) still holds, checked at every
 * `MAIL FROM` and again before a message is stored: a password replaced since AUTH (a new POST …/smtp-credentials,
 * which "stops working at once") no longer sends on a session opened with it, nor does a deprovisioning identity.
 * Two indexed reads; the stored hashes are compared in constant time.
 * @returns the identity as it is now, `'revoked'` (the identity's credential is not the one of the login), or
 * `'deprovisioning'` (the identity is gone or no longer active).
 */
export async function submissionLoginHolds(
  ctx: DomainContext,
  login: { identityId: string; credentialHash: string },
): Promise<EmailIdentity | 'revoked' | 'deprovisioning'> {
  const [identity, credential] = await Promise.all([
    identityById(ctx.db, login.identityId),
    smtpCredentialOf(ctx.db, login.identityId),
  ]);
  if (identity?.status !== 'active') return 'deprovisioning';
  const now = Buffer.from(credential?.passwordHash ?? '');
  const then = Buffer.from(login.credentialHash);
  return now.length === then.length && timingSafeEqual(now, then) ? identity : 'revoked';
}
