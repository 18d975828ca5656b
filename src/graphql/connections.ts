// Relay connection helpers shared by the noun files.

/** A connection result with a lazily computed `totalCount` (one COUNT query, run only when the field is asked). */
export interface Counted {
  totalCount: () => Promise<number>;
}

/** Adds a lazy `totalCount` to a resolved connection. */
export async function withTotalCount<C extends object>(connection: Promise<C>, count: () => Promise<number>) {
  let memo: Promise<number> | undefined;
  const counted: Counted = {
    totalCount: () => {
      memo ??= count();
      return memo;
    },
  };
  return Object.assign(await connection, counted);
}

/** Description of every connection's `totalCount`. */
export const TOTAL_COUNT_DESCRIPTION = 'How many items the whole list has (every page), now.';

/** The `totalCount` of a connection built with {@link withTotalCount}. */
export function totalCountOf(connection: object): Promise<number> {
  return (connection as Counted).totalCount();
}
