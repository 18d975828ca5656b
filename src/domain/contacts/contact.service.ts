import { type Actor, requireScope } from '../accounts/account.service.js';
import { ConflictError, NotFoundError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import type { Tx } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';
import { decodeCursor, encodeCursor, keysetPage } from '../paging.js';
import {
  type ContactRecord,
  contactByHandle,
  contactPage,
  contactsAmong,
  countContactRows,
  deleteContactRow,
  findContactRow,
  handleOwners,
  inContactTransaction,
  insertContact,
  replaceHandles,
  selectContact,
  selectContacts,
  updateContactRow,
} from './contact.store.js';

/** A contact as stored (what GraphQL's Contact type reads, through @pothos/plugin-prisma). */
export type Contact = ContactRecord;

import type { z } from 'zod';
import type { CreateContactInput, contactShape, ListContactsInput, UpdateContactInput } from './contact.schemas.js';

/** REST/GraphQL shape of a contact (docs/email.md "Contacts"): declared by `contactShape`. */
export type ContactView = z.output<typeof contactShape>;

/** One page of GET /api/contacts: `nextCursor` is null on the last page. */
export interface ContactPage {
  contacts: ContactView[];
  nextCursor: string | null;
}

/** Converts a row. */
export function contactView(c: Contact): ContactView {
  return {
    id: c.id,
    name: c.name,
    emails: c.emails,
    phones: c.phones,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === 'P2002';
}

/**
 * Replaces the handles (addresses and numbers) of `contactId` with `emails` and `phones`, after checking that no
 * other contact of the account holds one of them.
 * @throws ConflictError 409 CONTACT_EMAIL_TAKEN (field `emails.<i>`) or CONTACT_PHONE_TAKEN (field `phones.<i>`).
 */
async function writeHandles(
  tx: Tx,
  accountId: string,
  contactId: string,
  handles: { emails?: string[]; phones?: string[] },
): Promise<void> {
  const lists: ['email' | 'phone', string[]][] = [];
  if (handles.emails) lists.push(['email', handles.emails]);
  if (handles.phones) lists.push(['phone', handles.phones]);
  const values = lists.flatMap(([, list]) => list);
  const owner = values.length > 0 ? await handleOwners(tx, accountId, contactId, values) : new Map<string, string>();
  for (const [kind, list] of lists) {
    const i = list.findIndex((v) => owner.has(v));
    if (i >= 0) {
      const other = { contactId: owner.get(list[i]!) };
      throw new ConflictError(
        kind === 'email' ? 'CONTACT_EMAIL_TAKEN' : 'CONTACT_PHONE_TAKEN',
        `${list[i]} already belongs to contact ${other.contactId}; an ${kind === 'email' ? 'address' : 'number'} belongs to at most one contact.`,
        `${kind}s.${i}`,
      );
    }
  }
  for (const [kind, list] of lists) await replaceHandles(tx, accountId, contactId, kind, list);
}

/** Runs `fn`; a unique violation (two requests claiming one handle at once) answers as the losing one's conflict. */
async function claimingHandles<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new ConflictError(
        'CONTACT_EMAIL_TAKEN',
        'An address or number of this contact was just given to another contact; read the contacts and retry.',
        'emails',
      );
    }
    throw err;
  }
}

/** The account's contact. @throws NotFoundError (another account's id answers the same). */
async function findContact(ctx: DomainContext, accountId: string, contactId: string): Promise<Contact> {
  const row = await findContactRow(ctx.db, accountId, contactId);
  if (!row) throw new NotFoundError('Contact', contactId, 'id');
  return row;
}

/**
 * POST /api/contacts: creates a contact. Addresses are lower-cased and numbers normalised to E.164 at the door
 * (`createContactInput`); each belongs to at most one contact of the account.
 * @throws ConflictError CONTACT_EMAIL_TAKEN / CONTACT_PHONE_TAKEN (409, field `emails.<i>` / `phones.<i>`).
 */
export async function createContact(ctx: DomainContext, actor: Actor, data: CreateContactInput): Promise<ContactView> {
  requireScope(actor, 'email');
  const now = ctx.clock.now();
  const id = uuidv7();
  const row = await claimingHandles(() =>
    inContactTransaction(ctx.db, async (tx) => {
      const created = await insertContact(tx, {
        id,
        accountId: actor.accountId,
        name: data.name,
        emails: data.emails,
        phones: data.phones,
        createdAt: now,
        updatedAt: now,
      });
      await writeHandles(tx, actor.accountId, id, data);
      return created;
    }),
  );
  return contactView(row);
}

/** One contact. Scope email. @throws NotFoundError. */
export async function getContact(ctx: DomainContext, actor: Actor, contactId: string): Promise<ContactView> {
  requireScope(actor, 'email');
  return contactView(await findContact(ctx, actor.accountId, contactId));
}

/**
 * PATCH /api/contacts/{id}: changes the name and/or replaces the addresses or numbers (a list replaces the old one).
 * @throws NotFoundError; ConflictError CONTACT_EMAIL_TAKEN / CONTACT_PHONE_TAKEN.
 */
export async function updateContact(
  ctx: DomainContext,
  actor: Actor,
  contactId: string,
  data: UpdateContactInput,
): Promise<ContactView> {
  requireScope(actor, 'email');
  await findContact(ctx, actor.accountId, contactId);
  const row = await claimingHandles(() =>
    inContactTransaction(ctx.db, async (tx) => {
      await writeHandles(tx, actor.accountId, contactId, data);
      return updateContactRow(tx, contactId, {
        ...(data.name !== undefined ? { name: data.name } : {}),
        ...(data.emails !== undefined ? { emails: data.emails } : {}),
        ...(data.phones !== undefined ? { phones: data.phones } : {}),
        updatedAt: ctx.clock.now(),
      });
    }),
  );
  return contactView(row);
}

/** DELETE /api/contacts/{id}: removes the contact and frees its addresses and numbers. @throws NotFoundError. */
export async function deleteContact(ctx: DomainContext, actor: Actor, contactId: string): Promise<void> {
  requireScope(actor, 'email');
  if (!(await deleteContactRow(ctx.db, actor.accountId, contactId)))
    throw new NotFoundError('Contact', contactId, 'id');
}

/**
 * GET /api/contacts: the account's contacts, oldest first (ids are UUIDv7, so id order is creation order), keyset
 * paged by id: `limit` 1–200 (default 50), `cursor` = a `nextCursor` of an earlier page; `nextCursor` is null on
 * the last page. @throws BadRequestError INVALID_CURSOR.
 */
export async function listContacts(ctx: DomainContext, actor: Actor, query: ListContactsInput): Promise<ContactPage> {
  requireScope(actor, 'email');
  const after = decodeCursor(query.cursor);
  const page = await keysetPage(query.limit, (take) => contactPage(ctx.db, actor.accountId, after, take));
  return { contacts: page.items.map(contactView), nextCursor: page.last ? encodeCursor(page.last.id) : null };
}

/** Contact rows for GraphQL (the selection of @pothos/plugin-prisma), oldest first. Scope email. */
export async function listContactRows(
  ctx: DomainContext,
  actor: Actor,
  selection: Record<string, unknown> = {},
): Promise<Contact[]> {
  requireScope(actor, 'email');
  return selectContacts(ctx.db, actor.accountId, selection);
}

/** One contact row for GraphQL. @throws NotFoundError. */
export async function getContactRow(
  ctx: DomainContext,
  actor: Actor,
  contactId: string,
  selection: Record<string, unknown> = {},
): Promise<Contact> {
  requireScope(actor, 'email');
  const row = await selectContact(ctx.db, actor.accountId, contactId, selection);
  if (!row) throw new NotFoundError('Contact', contactId, 'id');
  return row;
}

/** The number of the account's contacts (GraphQL `totalCount`). */
export async function countContacts(ctx: DomainContext, actor: Actor): Promise<number> {
  requireScope(actor, 'email');
  return countContactRows(ctx.db, actor.accountId);
}

/** Contact rows of the actor's account by id, in the ids' order (null where unknown or another account's). */
export async function contactRowsByIds(
  ctx: DomainContext,
  actor: Actor,
  ids: readonly string[],
): Promise<(Contact | null)[]> {
  requireScope(actor, 'email');
  const rows = await contactsAmong(ctx.db, actor.accountId, ids);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id) ?? null);
}

/**
 * The contact of the account whose `emails` contain `address` (lower-cased match), or null. The agent's rule of who
 * sees what (docs/email.md "Who sees what") starts here.
 */
export async function contactByEmail(ctx: DomainContext, accountId: string, address: string): Promise<Contact | null> {
  const handle = await contactByHandle(ctx.db, accountId, address.trim().toLowerCase());
  return handle?.kind === 'email' ? handle.contact : null;
}
