import { randomBytes } from 'node:crypto';
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

export { decryptSecret, encryptSecret, secretsKeyId } from '../domain/kernel/secrets.js';
