import { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { BadRequestError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import { keysetPage } from '../paging.js';
import { decimalInt } from '../validation.js';
import { labelFilter, THREADS_DEFAULT_LIMIT, THREADS_MAX_LIMIT } from './email.schemas.js';
import { findIdentity } from './identity.service.js';
import { DOMAIN_NAME } from './mail.rules.js';
import { searchThreadRows } from './search.store.js';
import { indexAccountBeforeSearch } from './search-index.js';
import { type ThreadSummary, threadCursor, threadSummary } from './thread.service.js';
import type { EmailThread } from './thread.store.js';

/** Longest search text (`q`), in characters. */
export const MAX_QUERY_CHARS = 500;

const isoTime = z
  .string()
  .datetime({ offset: true })
  .transform((v) => new Date(v));

/** The search filters shared by both thread searches (issue 21 item 4). */
export const searchFilters = {
  q: z
    .string()
    .trim()
    .min(1)
    .max(MAX_QUERY_CHARS)
    .optional()
    .describe(
      'Full-text search over subject, text bodies and addresses (PostgreSQL websearch syntax: words, "a phrase", ' +
        '-excluded, or). Words are matched stemmed (English), stop words included; stop words of the query need ' +
        'not be in the message.',
    ),
  from: z
    .string()
    .trim()
    .toLowerCase()
    .max(320)
    .refine((v) => (v.includes('@') ? z.string().email().safeParse(v).success : DOMAIN_NAME.test(v)), {
      message: 'must be an email address or a domain',
      params: { code: 'INVALID_FORMAT' },
    })
    .optional()
    .describe('Only threads with a message from this address, or from any address at this domain.'),
  after: isoTime.optional().describe('Only threads with a message sent at or after this time (ISO 8601).'),
  before: isoTime.optional().describe('Only threads with a message sent before this time (ISO 8601).'),
  label: z.lazy(() => labelFilter).optional(),
};

/** Query of GET /api/email/threads (account-wide search) and of the identity's thread list with filters. */
export const searchThreadsInput = z
  .object({
    limit: decimalInt(1, THREADS_MAX_LIMIT).default(THREADS_DEFAULT_LIMIT),
    cursor: z.string().max(500).optional(),
    ...searchFilters,
  })
  .strict();
/** Parsed searchThreadsInput. */
export type SearchThreadsInput = z.output<typeof searchThreadsInput>;

/** Whether a thread-list query asks for a search (any of q, from, after, before). */
export function isSearch(query: Partial<Record<'q' | 'from' | 'after' | 'before', unknown>>): boolean {
  return query.q !== undefined || query.from !== undefined || query.after !== undefined || query.before !== undefined;
}

/** A thread found by a search: the summary plus the identity it belongs to. */
export type ThreadHit = ThreadSummary & { identityId: string };

function decodeThreadCursor(cursor: string): { at: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const date = new Date(at);
    if (typeof id !== 'string' || Number.isNaN(date.getTime())) throw new Error('bad cursor');
    return { at: date, id };
  } catch {
    throw new BadRequestError('INVALID_CURSOR', 'cursor is not one this endpoint returned', 'cursor');
  }
}

/**
 * Rows of a thread search of the account (or of one identity), newest activity first, keyset-paged with the
 * same cursor as the thread list. `before > after` is not checked: an empty window finds nothing.
 * @throws NotFoundError (identity `id`); BadRequestError INVALID_CURSOR.
 */
export async function searchThreadPage(
  ctx: DomainContext,
  actor: Actor,
  identityId: string | undefined,
  query: Omit<SearchThreadsInput, 'limit'> & { limit: number },
): Promise<{ rows: EmailThread[]; nextCursor: string | null }> {
  requireScope(actor, 'email');
  const identity = identityId ? await findIdentity(ctx, actor.accountId, identityId) : undefined;
  const cursor = query.cursor ? decodeThreadCursor(query.cursor) : undefined;
  // Read-your-writes: the account's messages stored since the indexer last ran are indexed first.
  if (query.q) await indexAccountBeforeSearch(ctx.db, actor.accountId);
  const page = await keysetPage(query.limit, (take) =>
    searchThreadRows(ctx.db, {
      accountId: actor.accountId,
      identityId: identity?.id,
      q: query.q,
      from: query.from,
      after: query.after,
      before: query.before,
      label: query.label,
      cursor,
      take,
    }),
  );
  return { rows: page.items, nextCursor: page.last ? threadCursor(page.last) : null };
}

/**
 * GET /api/email/identities/{id}/threads?q=&from=&after=&before=&label= (one identity) and GET /api/email/threads
 * (every identity of the account; `identityId` undefined): threads with a message matching the search, newest
 * activity first. `nextCursor` is "" on the last page (as the thread list). `query` is parsed at the door by
 * `searchThreadsInput`. @throws NotFoundError; BadRequestError INVALID_CURSOR.
 */
export async function searchThreads(
  ctx: DomainContext,
  actor: Actor,
  identityId: string | undefined,
  query: SearchThreadsInput,
): Promise<{ threads: ThreadHit[]; nextCursor: string }> {
  const page = await searchThreadPage(ctx, actor, identityId, query);
  return {
    threads: page.rows.map((t) => ({ ...threadSummary(t), identityId: t.identityId })),
    nextCursor: page.nextCursor ?? '',
  };
}
