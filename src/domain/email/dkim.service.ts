import { createPrivateKey, createPublicKey, generateKeyPair } from 'node:crypto';
import type { DomainContext } from '../kernel/context.js';
import type { Tx } from '../kernel/db.js';
import { decryptSecret, encryptSecret } from '../kernel/secrets.js';
import { type DkimKey, deleteDkimKeyRow, dkimKeyOf, dkimKeyOrThrow, insertDkimKeyOnce } from './email-domain.store.js';
import type { DkimSigner } from './mail-transport.port.js';

/** RSA modulus of DKIM keys: 2048 bits (RFC 8301 3.2: at least 1024, 2048 recommended; fits one 255-octet TXT split). */
export const DKIM_KEY_BITS = 2048;

function aad(domain: string): string {
  return `dkim:${domain}`;
}

function newKeyPair(): Promise<{ publicKey: string; privateKey: string }> {
  return new Promise((resolve, reject) =>
    generateKeyPair(
      'rsa',
      {
        modulusLength: DKIM_KEY_BITS,
        publicKeyEncoding: { type: 'spki', format: 'pem' },
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      },
      (err, publicKey, privateKey) => (err ? reject(err) : resolve({ publicKey, privateKey })),
    ),
  );
}

/**
 * The DKIM key of `domain` (lower-case), generated once (RSA-2048, selector DKIM_SELECTOR) with its private key
 * encrypted under the secrets key. Concurrent first calls (several instances) keep the first row written.
 */
export async function ensureDkimKey(ctx: DomainContext, domain: string, db: Tx = ctx.db): Promise<DkimKey> {
  const found = await dkimKeyOf(db, domain);
  if (found) return found;
  const pair = await newKeyPair();
  await insertDkimKeyOnce(db, {
    domain,
    selector: ctx.config.DKIM_SELECTOR,
    publicKey: pair.publicKey,
    privateKeyEncrypted: encryptSecret(ctx.secretsKey, pair.privateKey, aad(domain)),
    keyId: ctx.secretsKeyId,
    createdAt: ctx.clock.now(),
  });
  return dkimKeyOrThrow(db, domain);
}

/**
 * The DNS TXT value that publishes a key (RFC 6376 3.6.1): `v=DKIM1; k=rsa; p=<base64 DER SubjectPublicKeyInfo>`,
 * at `<selector>._domainkey.<domain>`.
 */
export function dkimRecordValue(key: Pick<DkimKey, 'publicKey'>): string {
  const der = createPublicKey(key.publicKey).export({ type: 'spki', format: 'der' });
  return `v=DKIM1; k=rsa; p=${der.toString('base64')}`;
}

/**
 * What signs outbound mail from `domain` (issue 20 section 4: every message, whatever path sent it). @returns the
 * signer, or undefined (mail goes unsigned, with an error logged) when the stored key cannot be decrypted because
 * SECRETS_KEY changed: unsigned mail still reaches receivers that do not require DKIM, a lost message reaches nobody.
 * `db` is the transaction to read (and, the first time, write) the key in; default ctx.db. A key that was already
 * stored is decrypted once and its signer reused for DKIM_SIGNER_TTL_MS (send-caches.ts); a key this call generates
 * is not cached, since the transaction that wrote it may still roll back. The signer holds the key as a parsed
 * `KeyObject` (parsed once per decryption, not once per message).
 */
export async function dkimSignerFor(
  ctx: DomainContext,
  domain: string,
  db: Tx = ctx.db,
): Promise<DkimSigner | undefined> {
  const cache = ctx.emailCaches.dkimSigners;
  const hit = cache.get(domain);
  if (hit) return hit;
  const stored = await dkimKeyOf(db, domain);
  const key = stored ?? (await ensureDkimKey(ctx, domain, db));
  try {
    const signer: DkimSigner = {
      domainName: domain,
      keySelector: key.selector,
      // Parsed once here, not by every signature (see DkimSigner).
      privateKey: createPrivateKey(decryptSecret(ctx.secretsKey, key.privateKeyEncrypted, aad(domain))),
    };
    if (stored) cache.set(domain, signer);
    return signer;
  } catch {
    ctx.log.error(
      { domain, keyId: key.keyId },
      'DKIM key cannot be decrypted (SECRETS_KEY is not the key that encrypted it); sending unsigned',
    );
    return undefined;
  }
}

/** Removes the key of a custom domain that was deleted (a domain added again gets a new key). */
export async function deleteDkimKey(ctx: DomainContext, domain: string): Promise<void> {
  await deleteDkimKeyRow(ctx.db, domain);
  ctx.emailCaches.dkimSigners.delete(domain);
}
