import { randomBytes } from 'node:crypto';

/** Prefix of webhook secrets (the Standard Webhooks convention): `whsec_` + base64 of 32 random bytes. */
export const SECRET_PREFIX = 'whsec_';
/** Random bytes in a webhook secret. */
export const SECRET_BYTES = 32;

/** A fresh webhook secret, `whsec_<base64 of 32 random bytes>` (50 characters). */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}
