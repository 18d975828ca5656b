import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { ForbiddenError, NotFoundError, UnauthenticatedError, ValidationError } from '../errors.js';
import type { Db } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';
import {
  activeApiKeysAmong,
  countAccountRows,
  findActiveAccountKey,
  findApiKey,
  insertAccountWithKey,
  insertApiKey,
  isApiKeyActive,
  type NewApiKey,
  revokeApiKey,
} from './account.store.js';

/**
 * API key scopes (README "Authentication"). A key holds a subset; `accounts:create` issues all of them.
 * - `compliance`: brands, vetting, campaigns, numbers, DID mapping (spec 4.1–4.3 and /api/numbers)
 * - `email`: identities, threads, sending, agents (spec 4.4–4.5)
 * - `webhooks`: webhook management and logs (spec 4.6)
 * - `events:read`: the SSE stream, event history and GraphQL subscriptions (spec 4.7)
 * - `events:write`: publishing telephony-side events with POST /api/events
 */
export const SCOPES = ['compliance', 'email', 'webhooks', 'events:read', 'events:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** Who is calling: the key's account and scopes. Every domain function takes one and filters by `accountId`. */
export interface Actor {
  accountId: string;
  keyId: string;
  scopes: readonly Scope[];
  /** Set when the caller is a short-lived stream token (stream-token.ts): when it stops being valid. */
  expiresAt?: Date;
}

/** @throws ForbiddenError (403 FORBIDDEN) when `actor` lacks `scope`. */
export function requireScope(actor: Actor, scope: Scope): void {
  if (!actor.scopes.includes(scope)) throw new ForbiddenError(scope);
}

const KEY_PATTERN = /^sb_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/**
 * Creates an account and its first API key with `scopes` (default all).
 * @returns the account id and the API key `sb_<16 hex key id>_<43 char base64url secret>`; the key is shown only
 *   here: only SHA-256 of the secret part is stored (a 256-bit random secret needs no slow hash).
 */
export async function createAccount(
  db: Db,
  input: { name: string; scopes?: readonly Scope[] },
): Promise<{ accountId: string; apiKey: string; keyId: string }> {
  const accountId = uuidv7();
  const { row, apiKey } = newKey(accountId, input.scopes ?? SCOPES, 'default');
  await insertAccountWithKey(db, { id: accountId, name: input.name }, row);
  return { accountId, apiKey, keyId: row.id };
}

/** A fresh key of `accountId`: the row to store and the key to show once. */
function newKey(accountId: string, scopes: readonly Scope[], name: string): { row: NewApiKey; apiKey: string } {
  const keyId = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return {
    row: { id: keyId, accountId, name, secretHash: hashSecret(secret).toString('hex'), scopes: [...scopes] },
    apiKey: `sb_${keyId}_${secret}`,
  };
}

/** Issues another API key for an existing account. @returns the key, shown only here. */
export async function issueKey(
  db: Db,
  accountId: string,
  scopes: readonly Scope[],
  name = 'key',
): Promise<{ apiKey: string; keyId: string }> {
  const { row, apiKey } = newKey(accountId, scopes, name);
  await insertApiKey(db, row);
  return { apiKey, keyId: row.id };
}

/**
 * Resolves a raw API key to its {@link Actor}. The secret is compared as SHA-256 digests in constant time.
 * @throws UnauthenticatedError for a missing, malformed, unknown or revoked key (one message for all, so the
 *   answer does not tell which part was wrong).
 */
export async function authenticate(db: Db, rawKey: string | undefined): Promise<Actor> {
  const match = rawKey ? KEY_PATTERN.exec(rawKey) : null;
  if (!match) throw new UnauthenticatedError();
  const [, keyId, secret] = match as unknown as [string, string, string];
  const key = await findApiKey(db, keyId);
  const presented = hashSecret(secret);
  const stored = key ? Buffer.from(key.secretHash, 'hex') : Buffer.alloc(presented.length);
  const equal = stored.length === presented.length && timingSafeEqual(stored, presented);
  if (!key || !equal || key.revokedAt) throw new UnauthenticatedError();
  return { accountId: key.accountId, keyId: key.id, scopes: key.scopes.filter(isScope) };
}

function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

/** Parses a comma-separated scope list (CLI). @throws Error naming an unknown scope. */
export function parseScopes(list: string): Scope[] {
  const scopes = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const s of scopes) if (!isScope(s)) throw new Error(`unknown scope "${s}"; known: ${SCOPES.join(', ')}`);
  return scopes as Scope[];
}

/** Number of accounts (first-start bootstrap check). */
export async function countAccounts(db: Db): Promise<number> {
  return countAccountRows(db);
}

/**
 * Issues a new key for the caller's account with `scopes`, which must be a subset of the caller's own scopes
 * (a key cannot mint a more powerful key). @returns the key, shown only here.
 * @throws ValidationError (INVALID_ENUM_VALUE) for an unknown scope; ForbiddenError for a scope the caller lacks.
 */
export async function issueKeyForActor(
  db: Db,
  actor: Actor,
  input: { name: string; scopes: readonly string[] },
): Promise<{ apiKey: string; keyId: string; scopes: Scope[] }> {
  const details = input.scopes
    .map((s, i) => ({ s, i }))
    .filter(({ s }) => !isScope(s))
    .map(({ s, i }) => ({ code: 'INVALID_ENUM_VALUE', field: `scopes.${i}`, message: `unknown scope "${s}"` }));
  if (input.name.trim() === '') details.push({ code: 'REQUIRED', field: 'name', message: 'is required' });
  if (details.length > 0) throw new ValidationError(details);
  const scopes = input.scopes as Scope[];
  for (const s of scopes) requireScope(actor, s);
  const key = await issueKey(db, actor.accountId, scopes, input.name);
  return { ...key, scopes };
}

/**
 * Revokes one of the account's keys whose scopes are all among the caller's (a read-only key cannot lock out the
 * admin key; any key may revoke itself). Takes effect at once on this instance and
 * within {@link AUTH_CACHE_TTL_MS} on others.
 * @throws NotFoundError when the key is not the account's; ForbiddenError when it holds a scope the caller lacks.
 */
export async function revokeKey(ctx: { db: Db; auth: KeyAuthenticator }, actor: Actor, keyId: string): Promise<void> {
  const key = await findActiveAccountKey(ctx.db, actor.accountId, keyId);
  if (!key) throw new NotFoundError('API key', keyId, 'keyId');
  // As for issuing: a key may only act on keys no more powerful than itself.
  for (const s of key.scopes) if (isScope(s)) requireScope(actor, s);
  await revokeApiKey(ctx.db, keyId, new Date());
  ctx.auth.invalidate(keyId);
}

/** How long a verified key stays verified without asking the database again, in ms. */
export const AUTH_CACHE_TTL_MS = 10_000;

/**
 * {@link authenticate} with a small cache of keys verified in the last {@link AUTH_CACHE_TTL_MS} ms (at most 10,000),
 * keyed by the SHA-256 of the whole presented key, so a wrong secret never hits it and failures are never cached.
 * Saves a database round trip on every request (measured in `npm run bench`).
 */
export class KeyAuthenticator {
  // ttlResolution 0: read the clock on each lookup. lru-cache's default (1 ms) caches it behind a new timer per
  // millisecond of use, about one timer per three requests at the bench's rate (as in src/infra/dns/resolver.ts).
  readonly #cache = new LRUCache<string, Actor>({ max: 10_000, ttl: AUTH_CACHE_TTL_MS, ttlResolution: 0 });

  constructor(private readonly db: Db) {}

  /** @throws UnauthenticatedError as {@link authenticate}. */
  async authenticate(rawKey: string | undefined): Promise<Actor> {
    if (!rawKey) throw new UnauthenticatedError();
    return this.cached(rawKey) ?? this.#verify(rawKey);
  }

  /**
   * The actor of `rawKey` when it was verified in the last {@link AUTH_CACHE_TTL_MS} ms, without a promise (the
   * HTTP host's auth hook answers most requests from here synchronously); undefined otherwise, then
   * {@link authenticate} verifies it. Failures are never cached, so undefined says nothing about the key.
   */
  cached(rawKey: string): Actor | undefined {
    // One-shot hash: no Hash object per request (issue 9); the digest, not the key, is what the cache holds.
    return this.#cache.get(hash('sha256', rawKey, 'base64'));
  }

  async #verify(rawKey: string): Promise<Actor> {
    const actor = await authenticate(this.db, rawKey);
    this.#cache.set(hash('sha256', rawKey, 'base64'), actor);
    return actor;
  }

  /** Whether `keyId` still exists unrevoked (asks the database; for long-lived streams re-checking their key). */
  async isActive(keyId: string): Promise<boolean> {
    return isApiKeyActive(this.db, keyId);
  }

  /**
   * Which of `keyIds` still exist unrevoked, in ONE query (the SSE heartbeat re-checks every key with an open
   * stream on the instance at once, rather than one query per connection).
   * @returns the ids among `keyIds` that are active.
   */
  async activeAmong(keyIds: readonly string[]): Promise<Set<string>> {
    if (keyIds.length === 0) return new Set();
    return activeApiKeysAmong(this.db, keyIds);
  }

  /** Forgets every cached verification of `keyId` (after a revocation). */
  invalidate(keyId: string): void {
    for (const [digest, actor] of this.#cache.entries()) if (actor.keyId === keyId) this.#cache.delete(digest);
  }
}
