import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/*
 * Encryption at rest for secrets the service must read back (webhook secrets, SMTP passwords' envelopes, stored
 * idempotent responses that carry a secret): AES-256-GCM under the deployment's 32-byte key, which src/infra/secrets.ts
 * loads (SECRETS_KEY or DATA_DIR/secrets.key) and the context carries as `secretsKey`.
 */

/**
 * Encrypts `plaintext` with AES-256-GCM (random 96-bit IV; `aad`, e.g. the row id, binds the ciphertext to its row).
 * @returns `v1.<iv>.<tag>.<ciphertext>`, each part base64url.
 */
export function encryptSecret(key: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), ct]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

/**
 * Decrypts what {@link encryptSecret} produced.
 * @throws Error when the key is not the one that encrypted it (SECRETS_KEY changed) or the value was tampered with.
 */
export function decryptSecret(key: Buffer, stored: string, aad: string): string {
  const [version, iv, tag, ct] = stored.split('.');
  if (version !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unknown secret format');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}

/** Fingerprint of a secrets key: the first 16 hex characters of its SHA-256 (safe to store; reveals nothing). */
export function secretsKeyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}
