import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { SECRET_PREFIX } from './webhook.secrets.js';

/**
 * The HMAC-SHA256 keys of one webhook secret, made once per decrypted secret (issue 24: converting the secret on every
 * signature cost CPU per delivery): spec 5.3's (the secret's UTF-8 bytes, `whsec_` included) and Standard Webhooks'
 * (the base64 after `whsec_`). Holders keep it beside what they decrypted it from (the dispatcher's per-webhook
 * cache, replaced when the ciphertext rotates), so no plaintext secret is ever a map key.
 */
export interface SigningKey {
  hex: KeyObject;
  standard: KeyObject;
}

/** The {@link SigningKey} of a plaintext webhook secret (`whsec_` + base64, webhook.secrets.ts). */
export function signingKey(secret: string): SigningKey {
  return {
    hex: createSecretKey(Buffer.from(secret, 'utf8')),
    standard: createSecretKey(
      Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64'),
    ),
  };
}

/**
 * Spec 5.3 signature: lowercase hex HMAC-SHA256 of the exact raw body bytes, keyed with the webhook secret as
 * returned at registration (its UTF-8 bytes, `whsec_` prefix included, as GitHub-style receivers use it).
 */
export function hexSignature(key: SigningKey, body: Buffer): string {
  return createHmac('sha256', key.hex).update(body).digest('hex');
}

/**
 * Standard Webhooks signature (standardwebhooks.com): base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with the
 * base64-decoded part of the secret after `whsec_` (what the Standard Webhooks libraries do).
 * @param timestamp Unix time in seconds.
 */
export function standardSignature(key: SigningKey, id: string, timestamp: number, body: Buffer): string {
  return createHmac('sha256', key.standard).update(`${id}.${timestamp}.`).update(body).digest('base64');
}

/** What a delivery attempt is signed with: the current secret's keys and, during a rotation's overlap, the previous one's. */
export interface SigningSecrets {
  current: SigningKey;
  previous?: SigningKey;
}

/** The headers one attempt sends (README "Webhooks" › Headers). */
export interface DeliveryHeaderInput {
  deliveryId: string;
  eventType: string;
  eventId: string | null;
  attempt: number;
  /** Unix time in seconds, from the app clock. */
  timestamp: number;
  test: boolean;
}

/**
 * Signed headers of one attempt, re-computed on every attempt (the timestamp changes):
 * `X-Switchboard-Signature` (spec 5.3, current secret), `X-Switchboard-Signature-Previous` (previous secret, only
 * during a rotation's overlap), `webhook-id`/`webhook-timestamp`/`webhook-signature` (`v1,<current>` and, during
 * the overlap, ` v1,<previous>`), and the event type, delivery id, event id and attempt number.
 * @returns the headers as a flat list `[name0, value0, name1, value1, …]` (lowercase names, each once): the form the
 *   transport hands undici, so no object is built per attempt only to be flattened (issue 24: CPU per delivery).
 */
export function deliveryHeaders(body: Buffer, secrets: SigningSecrets, h: DeliveryHeaderInput): string[] {
  const previous = secrets.previous;
  const current = `v1,${standardSignature(secrets.current, h.deliveryId, h.timestamp, body)}`;
  const headers = [
    'content-type',
    'application/json',
    'user-agent',
    'Switchboard-Webhooks/1.0',
    'x-switchboard-signature',
    hexSignature(secrets.current, body),
    'x-switchboard-event',
    h.eventType,
    'x-switchboard-delivery',
    h.deliveryId,
    'x-switchboard-attempt',
    String(h.attempt),
    'webhook-id',
    h.deliveryId,
    'webhook-timestamp',
    String(h.timestamp),
    'webhook-signature',
    previous ? `${current} v1,${standardSignature(previous, h.deliveryId, h.timestamp, body)}` : current,
  ];
  if (previous) headers.push('x-switchboard-signature-previous', hexSignature(previous, body));
  if (h.eventId) headers.push('x-switchboard-event-id', h.eventId);
  if (h.test) headers.push('x-switchboard-test', 'true');
  return headers;
}

/** The value of header `name` (lowercase) in a flat list from {@link deliveryHeaders}; undefined when absent. */
export function headerValue(headers: readonly string[], name: string): string | undefined {
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === name) return headers[i + 1];
  return undefined;
}
