import { z } from 'zod';
import { BadRequestError } from './errors.js';
import { decimalInt } from './validation.js';

/**
 * Keyset paging, the one helper for every list (REST `{items, nextCursor}` pages, GraphQL Relay connections,
 * history): read `limit + 1` rows after the cursor's key, answer `limit`, and a next cursor only when there is more.
 */

/** Keyset window: items after/before a key, ascending by key (`inverted` reads from the end: Relay `last`). */
export interface KeysetWindow {
  after?: string;
  before?: string;
  limit: number;
  inverted?: boolean;
}

/**
 * `?limit&cursor` of a REST list, the one paging rule (docs/conventions.md "Paging"): `limit` 1–200 (default 50),
 * `cursor` the `nextCursor` of the previous page; any other query parameter answers 400 VALIDATION_FAILED
 * (`UNKNOWN_FIELD`, `.strict()`). A bad `cursor` is refused later, by {@link decodeCursor} (400 INVALID_CURSOR).
 */
export const pageQuery = z
  .object({
    limit: decimalInt(1, 200).default(50).describe('Page size, 1–200, default 50.'),
    cursor: z.string().min(1).max(200).optional().describe('`nextCursor` of the previous page.'),
  })
  .strict();
/** Parsed pageQuery: `{limit, cursor?}`. */
export type PageQuery = z.output<typeof pageQuery>;

/** Opaque REST cursor for a key (base64url). */
export function encodeCursor(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

/** Decodes a REST cursor. @throws BadRequestError 400 INVALID_CURSOR. */
export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const key = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!/^[\w+.-]{1,100}$/.test(key)) {
    throw new BadRequestError('INVALID_CURSOR', 'cursor is not a nextCursor this API returned', 'cursor');
  }
  return key;
}

/** Prisma `where`/`orderBy`/`take` parts of a keyset window over `field`. */
export function keysetArgs<F extends string>(field: F, w: KeysetWindow) {
  const range: { gt?: string; lt?: string } = {};
  if (w.after !== undefined) range.gt = w.after;
  if (w.before !== undefined) range.lt = w.before;
  return {
    where: (w.after !== undefined || w.before !== undefined ? { [field]: range } : {}) as Record<F, typeof range>,
    orderBy: { [field]: w.inverted ? 'desc' : 'asc' } as Record<F, 'asc' | 'desc'>,
    take: w.limit,
  };
}

/** One page of a keyset list: at most `limit` items and whether rows follow them. */
export interface KeysetPage<T> {
  items: T[];
  /** The last item of the page when more rows follow (its key is the next cursor), else undefined. */
  last: T | undefined;
  hasMore: boolean;
}

/**
 * Reads one page: calls `fetch(limit + 1)` (the caller's query, already positioned after the cursor) and keeps
 * `limit` rows; one extra row tells whether another page follows, without a count.
 * @param limit page size (≥ 1, validated by the caller's schema).
 */
export async function keysetPage<T>(limit: number, fetch: (take: number) => Promise<T[]>): Promise<KeysetPage<T>> {
  const rows = await fetch(limit + 1);
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  return { items, last: hasMore ? items.at(-1) : undefined, hasMore };
}

/** Rows read per statement when a list is answered whole ({@link everyItem}). */
export const STREAM_CHUNK = 200;

/**
 * Every item of a keyset list after `after`, in key order, read {@link STREAM_CHUNK} rows at a time so the whole list
 * is never held (spec 4.1/4.2 lists "all" brands and campaigns): `fetch` reads one window, `keyOf` gives an item's key.
 */
export async function* everyItem<T>(
  after: string | undefined,
  fetch: (window: KeysetWindow) => Promise<T[]>,
  keyOf: (item: T) => string,
): AsyncGenerator<T[]> {
  let cursor = after;
  for (;;) {
    const rows = await fetch({ after: cursor, limit: STREAM_CHUNK });
    if (rows.length > 0) yield rows;
    if (rows.length < STREAM_CHUNK) return;
    cursor = keyOf(rows.at(-1)!);
  }
}
