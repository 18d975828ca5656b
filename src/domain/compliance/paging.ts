import { BadRequestError } from '../errors.js';

/** Keyset window: items after/before a key, ascending by key (`inverted` reads from the end: Relay `last`). */
export interface KeysetWindow {
  after?: string;
  before?: string;
  limit: number;
  inverted?: boolean;
}

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
