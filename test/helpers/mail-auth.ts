import { generateKeyPairSync } from 'node:crypto';

/** An SPF record that lets the loopback client (the tests' SMTP client, 127.0.0.1) send for a domain. */
export const SPF_LOOPBACK = 'v=spf1 ip4:127.0.0.1 -all';
/** An SPF record that excludes every host, the loopback client included. */
export const SPF_NONE_ALLOWED = 'v=spf1 -all';

/** A DKIM key pair: the PEM private key for nodemailer's `dkim` option and the TXT record that publishes it. */
export interface DkimKey {
  privateKey: string;
  /** `v=DKIM1; k=rsa; p=<base64 SubjectPublicKeyInfo>` (RFC 6376 3.6.1). */
  record: string;
}

/** Generates an RSA-2048 DKIM key. */
export function dkimKey(): DkimKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  return {
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    record: `v=DKIM1; k=rsa; p=${spki}`,
  };
}
