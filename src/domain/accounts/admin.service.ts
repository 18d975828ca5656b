import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { NotFoundError, UnauthenticatedError } from '../errors.js';
import type { Db } from '../kernel/db.js';
import { decodeCursor, encodeCursor, keysetPage } from '../paging.js';
import { decimalInt } from '../validation.js';
import { createAccount, issueKey, SCOPES, type Scope } from './account.service.js';
import { accountPage, findAccount, findApiKey, keysOfAccount, revokeApiKey } from './account.store.js';

/*
 * Operator administration (docs/operations.md "Admin surface"): accounts and keys created while the service runs,
 * through REST /admin/* (src/rest/routes/admin.routes.ts) and the CLI, which calls that surface when a service is up.
 */

/** SHA-256 of a token: what is kept in memory and compared, so the raw token is never held longer than needed. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * The tokens that open /admin/*: ADMIN_TOKEN when configured, and a random local token made per start (written to
 * DATA_DIR/admin.json with mode 0600 for the local CLI, src/infra/admin-file.ts). Only SHA-256 digests are kept;
 * a presented token is compared against each in constant time (crypto.timingSafeEqual).
 */
export class AdminTokens {
  readonly #digests: Buffer[];
  readonly #metricsDigests: Buffer[];
  /** The per-start local token, handed to the admin file once and not logged. */
  readonly localToken: string;

  /**
   * @param configured ADMIN_TOKEN, if set.
   * @param metricsToken METRICS_TOKEN, if set: it opens GET /metrics only (admin tokens open it too).
   */
  constructor(configured: string | undefined, metricsToken?: string) {
    this.localToken = `sba_${randomBytes(32).toString('base64url')}`;
    this.#digests = [digest(this.localToken), ...(configured ? [digest(configured)] : [])];
    this.#metricsDigests = [...this.#digests, ...(metricsToken ? [digest(metricsToken)] : [])];
  }

  /**
   * Checks a presented admin token (or, with `scope: 'metrics'`, a token that may read /metrics).
   * @throws UnauthenticatedError (401) when it is missing or matches none.
   */
  verify(presented: string | undefined, scope: 'admin' | 'metrics' = 'admin'): void {
    const name = scope === 'metrics' ? 'METRICS_TOKEN' : 'ADMIN_TOKEN';
    if (!presented) throw new UnauthenticatedError(`A token is required: send "Authorization: Bearer <${name}>".`);
    const d = digest(presented);
    let ok = false;
    // Compare against every known digest, always, so timing does not tell which (if any) matched.
    for (const known of scope === 'metrics' ? this.#metricsDigests : this.#digests) {
      ok = timingSafeEqual(known, d) || ok;
    }
    if (!ok) throw new UnauthenticatedError(`The ${scope} token is not valid.`);
  }
}

const scopeList = z
  .array(z.enum(SCOPES))
  .min(1)
  .transform((list) => [...new Set(list)])
  .describe(`Scopes of the key, any of: ${SCOPES.join(', ')}.`);

/** Body of POST /admin/accounts (and `cli accounts:create`). */
export const adminAccountInput = z.object({
  name: z.string().trim().min(1).max(200).describe('Display name of the account.'),
  scopes: scopeList.optional().describe('Scopes of its first key (default: all).'),
});
/** Parsed adminAccountInput. */
export type AdminAccountInput = z.output<typeof adminAccountInput>;

/** Body of POST /admin/keys (and `cli keys:create`). */
export const adminKeyInput = z.object({
  accountId: z.string().min(1).max(100).describe('The account that gets the key.'),
  scopes: scopeList,
  name: z.string().trim().min(1).max(200).optional().describe('A label for the key (default "key").'),
});
/** Parsed adminKeyInput. */
export type AdminKeyInput = z.output<typeof adminKeyInput>;

/** Query of GET /admin/accounts. */
export const adminListQuery = z.object({
  limit: decimalInt(1, 200).default(50).describe('Page size, 1–200, default 50.'),
  cursor: z.string().min(1).max(200).optional().describe('nextCursor of the previous page.'),
});
/** Parsed adminListQuery. */
export type AdminListQuery = z.output<typeof adminListQuery>;

/** An account as the admin surface shows it. */
export interface AdminAccount {
  id: string;
  name: string;
  createdAt: string;
  keys: { id: string; name: string; scopes: string[]; createdAt: string; revokedAt: string | null }[];
}

/**
 * Creates an account with its first key (`scopes` default: all of {@link SCOPES}).
 * @returns `{accountId, keyId, apiKey, scopes}`; the key is shown only here and works at once on every instance.
 * `input` is parsed by the caller (route schema or CLI) with `adminAccountInput`.
 */
export async function adminCreateAccount(
  db: Db,
  input: AdminAccountInput,
): Promise<{ accountId: string; keyId: string; apiKey: string; scopes: Scope[] }> {
  const { name, scopes } = input;
  const created = await createAccount(db, { name, scopes: scopes ?? SCOPES });
  return {
    accountId: created.accountId,
    keyId: created.keyId,
    apiKey: created.apiKey,
    scopes: [...(scopes ?? SCOPES)],
  };
}

/**
 * Issues another key for an account, with any scopes (the operator is not limited by a key's own scopes).
 * `input` is parsed by the caller with `adminKeyInput`. @throws NotFoundError (404) for an unknown account.
 */
export async function adminIssueKey(
  db: Db,
  input: AdminKeyInput,
): Promise<{ accountId: string; keyId: string; apiKey: string; scopes: Scope[] }> {
  const { accountId, name, scopes } = input;
  const account = await findAccount(db, accountId);
  if (!account) throw new NotFoundError('account', accountId, 'accountId');
  const key = await issueKey(db, account.id, scopes, name ?? 'key');
  return { accountId: account.id, ...key, scopes };
}

/**
 * Accounts in creation order (ids are UUIDv7), `limit` per page.
 * @returns the page and `nextCursor` (null on the last page).
 * @throws BadRequestError 400 INVALID_CURSOR for a cursor this API did not return.
 */
export async function adminListAccounts(
  db: Db,
  query: AdminListQuery,
): Promise<{ accounts: { id: string; name: string; createdAt: string }[]; nextCursor: string | null }> {
  const { limit, cursor } = query;
  const after = decodeCursor(cursor);
  const page = await keysetPage(limit, (take) => accountPage(db, after, take));
  return {
    accounts: page.items.map((a) => ({ id: a.id, name: a.name, createdAt: a.createdAt.toISOString() })),
    nextCursor: page.last ? encodeCursor(page.last.id) : null,
  };
}

/** One account with its keys (secrets are never readable). @throws NotFoundError (404). */
export async function adminGetAccount(db: Db, accountId: string): Promise<AdminAccount> {
  const account = await findAccount(db, accountId);
  if (!account) throw new NotFoundError('account', accountId, 'id');
  const keys = await keysOfAccount(db, accountId);
  return {
    id: account.id,
    name: account.name,
    createdAt: account.createdAt.toISOString(),
    keys: keys.map((k) => ({
      id: k.id,
      name: k.name,
      scopes: k.scopes,
      createdAt: k.createdAt.toISOString(),
      revokedAt: k.revokedAt?.toISOString() ?? null,
    })),
  };
}

/**
 * Revokes any key; requests with it answer 401 at once on this instance, within AUTH_CACHE_TTL_MS on others.
 * Revoking an already revoked key is a no-op. @throws NotFoundError (404) for an unknown key.
 */
export async function adminRevokeKey(ctx: { db: Db; auth: { invalidate(keyId: string): void } }, keyId: string) {
  const key = await findApiKey(ctx.db, keyId);
  if (!key) throw new NotFoundError('API key', keyId, 'keyId');
  await revokeApiKey(ctx.db, keyId, new Date());
  ctx.auth.invalidate(keyId);
}
