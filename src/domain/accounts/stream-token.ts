import { createHmac, timingSafeEqual } from 'node:crypto';
import { ForbiddenError, UnauthenticatedError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import { type Actor, requireScope } from './account.service.js';

/**
 * Short-lived stream tokens (issue 13; README "Event stream"). A browser's EventSource cannot send headers, so
 * spec 5.2 puts the API key in the URL (`?token=<API_KEY>`), where proxies, browser history and Referer headers
 * keep it. A stream token is what to put there instead: it opens streams of one account only (scope
 * `events:read`, nothing else), expires within minutes (STREAM_TOKEN_TTL_SECONDS) and dies with its parent key.
 *
 * Format: `sbst_<payload>.<mac>`, payload = base64url of `<keyId>.<accountId>.<expiresAt ms>`, mac = base64url
 * HMAC-SHA256 (RFC 2104) of the payload under a subkey derived from the deployment's SECRETS_KEY. Stateless, so
 * any instance sharing SECRETS_KEY verifies it without a database row; revocation of the parent key ends it
 * because verification asks whether that key is still active.
 */

/** Prefix that tells a stream token from an API key (`sb_…`). */
export const STREAM_TOKEN_PREFIX = 'sbst_';

/** The only scope a stream token carries. */
export const STREAM_TOKEN_SCOPES = ['events:read'] as const;

const PATTERN = /^sbst_([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{43})$/;

function macKey(secretsKey: Buffer): Buffer {
  return createHmac('sha256', secretsKey).update('switchboard/stream-token/v1').digest();
}

function mac(secretsKey: Buffer, payload: string): Buffer {
  return createHmac('sha256', macKey(secretsKey)).update(payload).digest();
}

/** Whether a presented credential is a stream token rather than an API key. */
export function isStreamToken(value: string): boolean {
  return value.startsWith(STREAM_TOKEN_PREFIX);
}

/** An issued stream token. */
export interface IssuedStreamToken {
  /** `sbst_…`; pass as `?token=` to GET /api/events, /graphql (SSE subscriptions) or /graphql/stream. */
  token: string;
  /** When it stops opening streams and open streams end (ISO 8601 UTC). */
  expiresAt: string;
  /** Always `["events:read"]`. */
  scopes: string[];
}

/**
 * Trades the caller's API key for a stream token valid `STREAM_TOKEN_TTL_SECONDS` seconds.
 * @throws ForbiddenError without `events:read`, or when the caller is itself a stream token (no chaining).
 */
export function issueStreamToken(ctx: DomainContext, actor: Actor): IssuedStreamToken {
  requireScope(actor, 'events:read');
  if (actor.expiresAt) throw new ForbiddenError('API key (a stream token cannot issue stream tokens)');
  const expiresAt = new Date(ctx.clock.now().getTime() + ctx.config.STREAM_TOKEN_TTL_SECONDS * 1000);
  const payload = Buffer.from(`${actor.keyId}.${actor.accountId}.${expiresAt.getTime()}`).toString('base64url');
  const token = `${STREAM_TOKEN_PREFIX}${payload}.${mac(ctx.secretsKey, payload).toString('base64url')}`;
  return { token, expiresAt: expiresAt.toISOString(), scopes: [...STREAM_TOKEN_SCOPES] };
}

/**
 * Resolves a stream token to an {@link Actor} with scope `events:read` only and `expiresAt` set. The MAC is
 * compared in constant time; the parent key must still be active (asked of the database, so a revocation on any
 * instance takes effect at once).
 * @throws UnauthenticatedError for a malformed, forged, expired token or a revoked parent key (one message).
 */
export async function authenticateStreamToken(ctx: DomainContext, token: string): Promise<Actor> {
  const match = PATTERN.exec(token);
  if (!match) throw new UnauthenticatedError();
  const [, payload, presented] = match as unknown as [string, string, string];
  const expected = mac(ctx.secretsKey, payload);
  const given = Buffer.from(presented, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new UnauthenticatedError();
  const [keyId, accountId, expiresMs] = Buffer.from(payload, 'base64url').toString('utf8').split('.');
  const expiresAt = new Date(Number(expiresMs));
  if (!keyId || !accountId || Number.isNaN(expiresAt.getTime())) throw new UnauthenticatedError();
  if (expiresAt.getTime() <= ctx.clock.now().getTime()) {
    throw new UnauthenticatedError('The stream token has expired: ask POST /api/events/tokens for a new one.');
  }
  if (!(await ctx.auth.isActive(keyId))) throw new UnauthenticatedError();
  return { accountId, keyId, scopes: [...STREAM_TOKEN_SCOPES], expiresAt };
}

/**
 * Whether an open stream's credential still holds: its key is unrevoked and, for a stream token, not expired.
 * Streams ask this at every heartbeat and end when it is false (as they do for a revoked key).
 */
export async function credentialActive(ctx: DomainContext, actor: Actor): Promise<boolean> {
  if (actor.expiresAt && actor.expiresAt.getTime() <= ctx.clock.now().getTime()) return false;
  return ctx.auth.isActive(actor.keyId);
}

/**
 * Re-checks an open stream's credential with {@link credentialActive} every EVENT_STREAM_HEARTBEAT_MS (ms) and calls
 * `revoked` once it no longer holds (key revoked or deleted, stream token expired), for the streams that have no
 * heartbeat of their own to do it: the GraphQL subscriptions (`events` and the typed change feeds). A check that
 * fails (database unreachable) keeps the stream; the next tick asks again. The timer never keeps the process alive.
 * @returns the stopper (idempotent); call it when the stream ends.
 */
export function watchCredential(ctx: DomainContext, actor: Actor, revoked: () => void): () => void {
  const timer = setInterval(() => {
    void credentialActive(ctx, actor).then(
      (active) => {
        if (!active) revoked();
      },
      () => {},
    );
  }, ctx.config.EVENT_STREAM_HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}
