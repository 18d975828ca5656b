import type { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { NotFoundError, UnprocessableError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import type { Tx } from '../kernel/db.js';
import { decodeCursor, encodeCursor, keysetPage, pageQuery } from '../paging.js';
import { normalizeAddress } from './mail.rules.js';
import {
  deleteSuppressionRow,
  type EmailSuppression,
  suppressionsAmong,
  suppressionsPage,
} from './suppression.store.js';

/** A suppressed address as the API shows it (issue 21 item 5). */
export interface SuppressionView {
  address: string;
  reason: string;
  status: string | null;
  diagnosticCode: string | null;
  messageId: string | null;
  createdAt: string;
}

/** Converts a row. */
export function suppressionView(s: EmailSuppression): SuppressionView {
  return {
    address: s.address,
    reason: s.reason,
    status: s.status,
    diagnosticCode: s.diagnosticCode,
    messageId: s.messageId,
    createdAt: s.createdAt.toISOString(),
  };
}

/** Query of GET /api/email/suppressions: the project's paging convention (`limit` 1–200, default 50, `cursor`). */
export const listSuppressionsInput = pageQuery;

/**
 * GET /api/email/suppressions: the account's suppressed addresses, oldest first, keyset-paged.
 * @returns `{suppressions, nextCursor}`, `nextCursor` null on the last page. @throws BadRequestError INVALID_CURSOR.
 */
export async function listSuppressions(
  ctx: DomainContext,
  actor: Actor,
  query: z.output<typeof listSuppressionsInput>,
): Promise<{ suppressions: SuppressionView[]; nextCursor: string | null }> {
  requireScope(actor, 'email');
  const after = decodeCursor(query.cursor);
  const page = await keysetPage(query.limit, (take) => suppressionsPage(ctx.db, actor.accountId, after, take));
  return {
    suppressions: page.items.map(suppressionView),
    nextCursor: page.last ? encodeCursor(page.last.id) : null,
  };
}

/**
 * DELETE /api/email/suppressions/{address}: mail to the address may be sent again.
 * @throws NotFoundError (field `address`) when it is not on the list.
 */
export async function deleteSuppression(ctx: DomainContext, actor: Actor, address: string): Promise<void> {
  requireScope(actor, 'email');
  const count = await deleteSuppressionRow(ctx.db, actor.accountId, normalizeAddress(address));
  if (count === 0) throw new NotFoundError('Suppression', address, 'address');
}

/**
 * Refuses a send to any suppressed recipient: 422 RECIPIENT_SUPPRESSED (field `to`), one detail per such
 * recipient (`{field: "recipients", code: "SUPPRESSED", message: <address>}`). Nothing is stored. Inside a
 * transaction pass its client (`db`): PGlite has one connection, so a read outside the open transaction waits on it.
 */
export async function assertNotSuppressed(db: Tx, accountId: string, recipients: string[]): Promise<void> {
  const addresses = [...new Set(recipients.map(normalizeAddress))];
  if (addresses.length === 0) return;
  const hits = await suppressionsAmong(db, accountId, addresses);
  const refused = recipientsSuppressed(hits.map((h) => h.address));
  if (refused) throw refused;
}

/** The error of {@link assertNotSuppressed} for the suppressed addresses found, or undefined when there is none. */
export function recipientsSuppressed(suppressed: string[]): UnprocessableError | undefined {
  if (suppressed.length === 0) return undefined;
  return new UnprocessableError(
    'RECIPIENT_SUPPRESSED',
    `${suppressed.join(', ')} bounced permanently and is on the suppression list ` +
      '(DELETE /api/email/suppressions/{address} to send again)',
    'to',
    suppressed.map((a) => ({ field: 'recipients', code: 'SUPPRESSED', message: a })),
  );
}
