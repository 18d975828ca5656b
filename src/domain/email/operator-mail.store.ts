import type { OperatorMessage } from '../../generated/prisma/client.js';
import type { Tx } from '../kernel/db.js';
import { keysetArgs } from '../paging.js';

/*
 * The store of the operator mailbox (postmaster@, abuse@ of the hosted domains; issue 23): every Prisma call about
 * it. The row type is re-exported here so the service names it without importing Prisma.
 */

export type { OperatorMessage };

/** Inserts the copies of one message, one per role recipient; a Message-ID already stored for one is skipped. @returns how many were new. */
export async function insertOperatorMessages(db: Tx, rows: OperatorMessage[]): Promise<number> {
  const result = await db.operatorMessage.createMany({ data: rows, skipDuplicates: true });
  return result.count;
}

/** One keyset page of the mailbox in id (arrival) order, without bodies: after the id `after`, at most `take` rows. */
export function operatorMessagesPage(
  db: Tx,
  after: string | undefined,
  take: number,
): Promise<Omit<OperatorMessage, 'body'>[]> {
  return db.operatorMessage.findMany({ ...keysetArgs('id', { after, limit: take }), omit: { body: true } });
}

/** One message of the mailbox with its body, or null. */
export function operatorMessageById(db: Tx, id: string): Promise<OperatorMessage | null> {
  return db.operatorMessage.findUnique({ where: { id } });
}
