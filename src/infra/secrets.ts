import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';

/*
 * Encryption at rest for secrets the service must be able to read back (webhook secrets, stored idempotent
 * responses that carry a secret): AES-256-GCM under one 32-byte key per deployment.
 */

/** Name of the key file generated into DATA_DIR when SECRETS_KEY is not set. */
export const SECRETS_KEY_FILE = 'secrets.key';

/**
 * Parses SECRETS_KEY: 64 hex characters or base64 (standard or url-safe) of exactly 32 bytes.
 * @throws Error when it is neither.
 */
export function parseSecretsKey(value: string): Buffer {
  const trimmed = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  const key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes, as 64 hex characters or base64');
  return key;
}

/**
 * The 32-byte AES-256-GCM key that encrypts secrets at rest: SECRETS_KEY when set; otherwise the key in
 * `DATA_DIR/secrets.key` (64 hex characters, created with mode 0600 on first use); with `DATA_DIR=memory://`, a
 * random key that lives as long as the process (like the data itself).
 * @throws Error when SECRETS_KEY or the key file is malformed.
 */
export function loadSecretsKey(config: Pick<Config, 'SECRETS_KEY' | 'DATA_DIR'>): Buffer {
  if (config.SECRETS_KEY) return parseSecretsKey(config.SECRETS_KEY);
  if (config.DATA_DIR.startsWith('memory://')) return randomBytes(32);
  const file = path.resolve(config.DATA_DIR, SECRETS_KEY_FILE);
  try {
    return parseSecretsKey(readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(path.dirname(file), { recursive: true });
  const key = randomBytes(32);
  try {
    writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    // Another process created it between our read and write: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return parseSecretsKey(readFileSync(file, 'utf8'));
    throw err;
  }
}

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
