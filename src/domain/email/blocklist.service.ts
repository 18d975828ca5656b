import { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { NotFoundError, UnprocessableError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import type { Tx } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';
import { decodeCursor, encodeCursor, keysetPage, pageQuery } from '../paging.js';
import { findIdentity } from './identity.service.js';
import { DOMAIN_NAME, normalizeAddress } from './mail.rules.js';
import {
  blockEntriesPage,
  blockedEntries,
  deleteBlockEntryRow,
  type EmailBlockEntry,
  insertBlockEntry,
} from './suppression.store.js';

/** A block-list entry as the API shows it (issue 21 item 4). */
export interface BlockEntryView {
  id: string;
  entry: string;
  direction: 'inbound' | 'outbound';
  identityId: string | null;
  reason: string | null;
  createdAt: string;
}

/** Converts a row. */
export function blockEntryView(b: EmailBlockEntry): BlockEntryView {
  return {
    id: b.id,
    entry: b.entry,
    direction: b.direction as BlockEntryView['direction'],
    identityId: b.identityId,
    reason: b.reason,
    createdAt: b.createdAt.toISOString(),
  };
}

/** Body of POST /api/email/blocklist: `entry` an address or a domain (matching its subdomains too). */
export const createBlockEntryInput = z
  .object({
    entry: z
      .string()
      .trim()
      .max(320)
      .transform((v) => v.toLowerCase())
      .refine((v) => (v.includes('@') ? z.string().email().safeParse(v).success : DOMAIN_NAME.test(v)), {
        message: 'must be an email address or a domain',
        params: { code: 'INVALID_FORMAT' },
      }),
    direction: z.enum(['inbound', 'outbound']),
    identityId: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,100}$/)
      .optional()
      .describe('Only this identity; every identity of the account when absent.'),
    reason: z.string().max(500).optional(),
  })
  .strict();

/** Query of GET /api/email/blocklist (`limit` 1–200, default 50, `cursor`). */
export const listBlockEntriesInput = pageQuery;

/** POST /api/email/blocklist. @returns the entry. @throws NotFoundError (field `identityId`). */
export async function createBlockEntry(
  ctx: DomainContext,
  actor: Actor,
  data: z.output<typeof createBlockEntryInput>,
): Promise<BlockEntryView> {
  requireScope(actor, 'email');
  if (data.identityId)
    await findIdentity(ctx, actor.accountId, data.identityId).catch(() => {
      throw new NotFoundError('Identity', data.identityId!, 'identityId');
    });
  const row = await insertBlockEntry(ctx.db, {
    id: uuidv7(),
    accountId: actor.accountId,
    entry: data.entry,
    direction: data.direction,
    identityId: data.identityId ?? null,
    reason: data.reason ?? null,
    createdAt: ctx.clock.now(),
  });
  // RCPT TO answers this instance cached (send-caches.ts RcptAnswers) may now be wrong: a block answers 550 at once.
  ctx.emailCaches.rcptAnswers.clear();
  return blockEntryView(row);
}

/** GET /api/email/blocklist: oldest first; `nextCursor` null on the last page. */
export async function listBlockEntries(
  ctx: DomainContext,
  actor: Actor,
  query: z.output<typeof listBlockEntriesInput>,
): Promise<{ entries: BlockEntryView[]; nextCursor: string | null }> {
  requireScope(actor, 'email');
  const after = decodeCursor(query.cursor);
  const page = await keysetPage(query.limit, (take) => blockEntriesPage(ctx.db, actor.accountId, after, take));
  return { entries: page.items.map(blockEntryView), nextCursor: page.last ? encodeCursor(page.last.id) : null };
}

/** DELETE /api/email/blocklist/{id}. @throws NotFoundError (field `id`). */
export async function deleteBlockEntry(ctx: DomainContext, actor: Actor, id: string): Promise<void> {
  requireScope(actor, 'email');
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(id)) throw new NotFoundError('BlockListEntry', id.slice(0, 100), 'id');
  const count = await deleteBlockEntryRow(ctx.db, actor.accountId, id);
  if (count === 0) throw new NotFoundError('BlockListEntry', id, 'id');
}

/** The entries that match `address`: the address itself, its domain and each parent domain. */
function candidates(address: string): string[] {
  const a = normalizeAddress(address);
  const domain = a.slice(a.lastIndexOf('@') + 1);
  const parts = domain.split('.');
  const out = [a];
  for (let i = 0; i < parts.length - 1; i++) out.push(parts.slice(i).join('.'));
  return out;
}

/**
 * Refuses a send to any recipient on an `outbound` entry (account-wide or of this identity): 422
 * RECIPIENT_BLOCKED (field `to`), one detail `{field: "recipients", code: "BLOCKED", message: <address>}` each.
 */
export async function assertNotBlocked(
  db: Tx,
  identity: { id: string; accountId: string },
  recipients: string[],
): Promise<void> {
  const addresses = [...new Set(recipients.map(normalizeAddress))];
  if (addresses.length === 0) return;
  const entries = await blockedEntries(db, identity, 'outbound', blockCandidates(addresses));
  const refused = recipientsBlocked(addresses, entries);
  if (refused) throw refused;
}

/** What a block-list entry must equal to hold `addresses` (lower-cased): each address, its domain and parents. */
export function blockCandidates(addresses: string[]): string[] {
  return [...new Set(addresses.flatMap(candidates))];
}

/**
 * The error of {@link assertNotBlocked} for `addresses` (lower-cased, distinct) given the matching `outbound`
 * entries found, or undefined when none matches.
 */
export function recipientsBlocked(addresses: string[], entries: string[]): UnprocessableError | undefined {
  if (entries.length === 0) return undefined;
  const blocked = new Set(entries);
  const hits = addresses.filter((a) => candidates(a).some((c) => blocked.has(c)));
  return new UnprocessableError(
    'RECIPIENT_BLOCKED',
    `${hits.join(', ')} is on the block list for outbound mail`,
    'to',
    hits.map((a) => ({ field: 'recipients', code: 'BLOCKED', message: a })),
  );
}
