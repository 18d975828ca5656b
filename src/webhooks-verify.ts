/**
 * Receiver-side verification of Switchboard webhook deliveries (README "Webhooks" › Verifying signatures).
 * Depends only on node:crypto, so a receiver can import it from this package (`switchboard/webhooks-verify`) or copy
 * it. Always verify over the raw body bytes as received, before parsing JSON.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const PREFIX = 'whsec_';

function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function raw(body: Buffer | Uint8Array | string): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
}

/**
 * Checks `X-Switchboard-Signature` (spec 5.3): lowercase hex HMAC-SHA256 of the raw body keyed with the secret
 * string exactly as returned at registration (`whsec_…`, UTF-8). Compared in constant time.
 * During a rotation, also pass the value of `X-Switchboard-Signature-Previous` to accept either secret.
 * @returns true when the signature matches.
 */
export function verifySignature(
  body: Buffer | Uint8Array | string,
  secret: string,
  signature: string | undefined,
): boolean {
  if (!signature || !/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(raw(body)).digest();
  return safeEqual(expected, Buffer.from(signature, 'hex'));
}

/** The three Standard Webhooks headers (names are case-insensitive; pass the values). */
export interface StandardWebhookHeaders {
  'webhook-id'?: string;
  'webhook-timestamp'?: string;
  'webhook-signature'?: string;
}

/**
 * Checks the Standard Webhooks headers (standardwebhooks.com): `webhook-signature` holds space-separated
 * `v1,<base64>` entries; one must equal base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with
 * the base64-decoded secret after `whsec_`. The timestamp must be within `toleranceSeconds` (default 300) of `now`,
 * which stops replays of captured deliveries.
 * @returns true when a signature matches and the timestamp is fresh.
 */
export function verifyStandardWebhook(
  body: Buffer | Uint8Array | string,
  secret: string,
  headers: StandardWebhookHeaders,
  opts: { toleranceSeconds?: number; now?: Date } = {},
): boolean {
  const id = headers['webhook-id'];
  const ts = headers['webhook-timestamp'];
  const sigs = headers['webhook-signature'];
  if (!id || !ts || !sigs || !/^\d+$/.test(ts)) return false;
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(ts)) > (opts.toleranceSeconds ?? 300)) return false;
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.`).update(raw(body)).digest();
  let ok = false;
  for (const entry of sigs.split(' ')) {
    const [version, value] = entry.split(',');
    if (version === 'v1' && value && safeEqual(expected, Buffer.from(value, 'base64'))) ok = true;
  }
  return ok;
}
