import type { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { ConflictError, NotFoundError, UnprocessableError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import { uuidv7 } from '../kernel/ids.js';
import { PRUNE_INTERVAL_MS, periodicWorker } from '../kernel/workers.js';
import { decodeCursor, encodeCursor, keysetPage, type PageQuery } from '../paging.js';
import { findAgent } from './agent.service.js';
import type { RowSelection } from './agent.store.js';
import { localAddresses, requireIdentityDomain } from './domain.service.js';
import type { CreateIdentityInput, UpdateIdentityInput } from './email.schemas.js';
import type { identityShape } from './email.shapes.js';
import {
  activeIdentitiesAt,
  type EmailIdentity,
  findIdentityRow,
  identitiesOf,
  identityByAddress,
  identityByIdOrThrow,
  identityPage,
  identityRowSelected,
  insertIdentity,
  markDeprovisioning,
  purgeDeprovisioned,
  updateIdentityRow,
} from './identity.store.js';
import { smtpEndpoint } from './smtp-endpoint.js';

/** Days a deprovisioning identity and its threads stay readable before the purge worker deletes them. */
export const PURGE_AFTER_DAYS = 30;

/** Spec 2.6 shape of an identity. */
export type IdentityView = z.output<typeof identityShape>;

/** Spec 2.6 shape of a row. */
export function identityView(ctx: DomainContext, i: EmailIdentity): IdentityView {
  return {
    id: i.id,
    address: i.address,
    localPart: i.localPart,
    domain: i.domain,
    displayName: i.displayName,
    agentId: i.agentId,
    replyMode: i.replyMode as IdentityView['replyMode'],
    status: i.status as IdentityView['status'],
    ...smtpEndpoint(ctx),
    smtpUser: i.address,
    smtpPass: null,
    createdAt: i.createdAt.toISOString(),
  };
}

/**
 * Payload of `email.identity.created` / `.updated` / `.deprovisioned` (channel `email`, issue 22): the identity as
 * spec 2.6 shows it (no password exists to leak: `smtpPass` is always null), under `identityId`.
 */
export function identityEventPayload(ctx: DomainContext, i: EmailIdentity): Record<string, unknown> {
  const { id, ...rest } = identityView(ctx, i);
  return { identityId: id, ...rest };
}

/** The account's identity in any status. @throws NotFoundError (another account's id answers the same). */
export async function findIdentity(ctx: DomainContext, accountId: string, identityId: string): Promise<EmailIdentity> {
  const identity = await findIdentityRow(ctx.db, accountId, identityId);
  if (!identity) throw new NotFoundError('Email identity', identityId, 'id');
  return identity;
}

/** The account's identity, which must be active. @throws NotFoundError; UnprocessableError IDENTITY_DEPROVISIONING. */
export async function findActiveIdentity(
  ctx: DomainContext,
  accountId: string,
  identityId: string,
): Promise<EmailIdentity> {
  const identity = await findIdentity(ctx, accountId, identityId);
  if (identity.status !== 'active') {
    throw new UnprocessableError(
      'IDENTITY_DEPROVISIONING',
      `Email identity ${identityId} is deprovisioning; it neither sends nor receives mail.`,
    );
  }
  return identity;
}

/**
 * {@link findActiveIdentity} for the send path, cached for SEND_IDENTITY_TTL_MS (send-caches.ts) (issue 24: one read less
 * per send). Only for a write that checks the identity is active itself (`insertNewThreadMessages`).
 * @throws NotFoundError; UnprocessableError IDENTITY_DEPROVISIONING.
 */
export async function activeIdentityForSend(
  ctx: DomainContext,
  accountId: string,
  identityId: string,
): Promise<EmailIdentity> {
  const cache = ctx.emailCaches.sendIdentities;
  const hit = cache.get(identityId);
  if (hit && hit.accountId === accountId) return hit;
  const identity = await findActiveIdentity(ctx, accountId, identityId);
  cache.set(identityId, identity);
  return identity;
}

/**
 * Drops an identity from the send cache (it changed, here or as a send found) and empties the RCPT TO answers
 * (send-caches.ts `RcptAnswers`: keyed by address, so all of them; identities change rarely).
 */
export function forgetIdentity(ctx: DomainContext, identityId: string): void {
  ctx.emailCaches.sendIdentities.delete(identityId);
  ctx.emailCaches.rcptAnswers.clear();
}

async function requireAssignableAgent(ctx: DomainContext, accountId: string, agentId: string): Promise<void> {
  const agent = await findAgent(ctx, accountId, agentId);
  if (!agent.textModel) {
    throw new UnprocessableError(
      'AGENT_TEXT_MODEL_REQUIRED',
      `Agent ${agentId} has no textModel; set one before assigning it (spec 4.4).`,
      'agentId',
    );
  }
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === 'P2002';
}

/**
 * POST /api/email/identities (spec 4.4, 2.6): provisions an inbox `localPart@domain` (domain default EMAIL_DOMAIN),
 * status `active`; emits `email.identity.created`. The domain must be one this service hosts (EMAIL_DOMAINS): an identity on any other domain would
 * capture mail that other accounts send to that domain. Addresses are lower-cased and unique across the service while the identity exists (also
 * while deprovisioning, until purged), because inbound mail is routed by address alone.
 * `data` is parsed at the door by `createIdentityInput`.
 * Custom domains of the account count once verified (src/domain/email/domain.service.ts).
 * @throws UnprocessableError DOMAIN_NOT_HOSTED or DOMAIN_NOT_VERIFIED (field `domain`); NotFoundError for an unknown
 *   agentId; UnprocessableError AGENT_TEXT_MODEL_REQUIRED;
 *   ConflictError ADDRESS_TAKEN (409).
 */
export async function createIdentity(
  ctx: DomainContext,
  actor: Actor,
  data: CreateIdentityInput,
): Promise<IdentityView> {
  requireScope(actor, 'email');
  const localPart = data.localPart.toLowerCase();
  const domain = (data.domain ?? ctx.config.EMAIL_DOMAIN).toLowerCase();
  const address = `${localPart}@${domain}`;
  await requireIdentityDomain(ctx, actor.accountId, domain);
  if (data.agentId) await requireAssignableAgent(ctx, actor.accountId, data.agentId);
  const taken = await identityByAddress(ctx.db, address);
  if (taken) throw new ConflictError('ADDRESS_TAKEN', `The address ${address} is already in use.`, 'localPart');
  try {
    return await ctx.events.transaction(async (tx, emit) => {
      const row = await insertIdentity(tx, {
        id: uuidv7(),
        accountId: actor.accountId,
        address,
        localPart,
        domain,
        displayName: data.displayName ?? null,
        agentId: data.agentId ?? null,
        replyMode: data.replyMode ?? 'send',
        status: 'active',
        createdAt: ctx.clock.now(),
      });
      await emit(actor.accountId, 'email.identity.created', identityEventPayload(ctx, row));
      return identityView(ctx, row);
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new ConflictError('ADDRESS_TAKEN', `The address ${address} is already in use.`, 'localPart');
    }
    throw err;
  }
}

/**
 * GET /api/email/identities: a page of the account's identities (active and deprovisioning), oldest first (uuidv7
 * ids, so id order), with the one paging rule (`limit` 1–200 default 50, `cursor`; docs/conventions.md).
 * @returns `{identities, nextCursor}`, nextCursor null on the last page. @throws BadRequestError INVALID_CURSOR.
 */
export async function listIdentities(
  ctx: DomainContext,
  actor: Actor,
  query: PageQuery,
): Promise<{ identities: IdentityView[]; nextCursor: string | null }> {
  requireScope(actor, 'email');
  const after = decodeCursor(query.cursor);
  const page = await keysetPage(query.limit, (take) => identityPage(ctx.db, actor.accountId, after, take));
  return {
    identities: page.items.map((r) => identityView(ctx, r)),
    nextCursor: page.last ? encodeCursor(page.last.id) : null,
  };
}

/** GET /api/email/identities/{id}. @throws NotFoundError. */
export async function getIdentity(ctx: DomainContext, actor: Actor, identityId: string): Promise<IdentityView> {
  requireScope(actor, 'email');
  return identityView(ctx, await findIdentity(ctx, actor.accountId, identityId));
}

/**
 * PATCH /api/email/identities/{id} (spec 4.4): displayName and agentId; null clears, absent keeps. Emits
 * `email.identity.updated`.
 * @throws NotFoundError (identity or agent); UnprocessableError AGENT_TEXT_MODEL_REQUIRED or IDENTITY_DEPROVISIONING.
 */
export async function updateIdentity(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  data: UpdateIdentityInput,
): Promise<IdentityView> {
  requireScope(actor, 'email');
  await findActiveIdentity(ctx, actor.accountId, identityId);
  if (data.agentId) await requireAssignableAgent(ctx, actor.accountId, data.agentId);
  const view = await ctx.events.transaction(async (tx, emit) => {
    const row = await updateIdentityRow(tx, identityId, data);
    await emit(actor.accountId, 'email.identity.updated', identityEventPayload(ctx, row));
    return identityView(ctx, row);
  });
  forgetIdentity(ctx, identityId);
  return view;
}

/**
 * DELETE /api/email/identities/{id} (spec 4.4, 3): moves the identity to `deprovisioning`. From then on the SMTP
 * listener refuses mail for it (550), it cannot send, and pending agent answers are skipped; its threads stay
 * readable for {@link PURGE_AFTER_DAYS} days, then the purge worker deletes identity, threads and messages and the
 * address becomes free. Emits `email.identity.deprovisioned` once; repeating the delete answers the same.
 * @throws NotFoundError.
 */
export async function deleteIdentity(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
): Promise<{ status: 'deprovisioning' }> {
  requireScope(actor, 'email');
  const identity = await findIdentity(ctx, actor.accountId, identityId);
  if (identity.status === 'active') {
    await ctx.events.transaction(async (tx, emit) => {
      const count = await markDeprovisioning(tx, identityId, ctx.clock.now());
      // Emitted once: a concurrent second delete finds nothing active and emits nothing.
      if (count === 1) {
        const row = await identityByIdOrThrow(tx, identityId);
        await emit(actor.accountId, 'email.identity.deprovisioned', identityEventPayload(ctx, row));
      }
    });
    forgetIdentity(ctx, identityId);
  }
  return { status: 'deprovisioning' };
}

/**
 * Worker: deletes identities deprovisioned more than {@link PURGE_AFTER_DAYS} days ago, with their threads; once a
 * minute at most (PRUNE_INTERVAL_MS).
 */
export function identityPurger(ctx: DomainContext) {
  return periodicWorker('email-identity-purger', ctx.clock, PRUNE_INTERVAL_MS, async () => {
    const before = new Date(ctx.clock.now().getTime() - PURGE_AFTER_DAYS * 86_400_000);
    return purgeDeprovisioned(ctx.db, before);
  });
}

/**
 * The row filter every email read uses (GraphQL connections spread it into their Prisma queries): the caller's
 * account. @throws ForbiddenError without the `email` scope.
 */
export function emailScope(actor: Actor): { accountId: string } {
  requireScope(actor, 'email');
  return { accountId: actor.accountId };
}

/**
 * A Prisma selection an adapter passes through to a row read (GraphQL's plugin-prisma selection: `include`/`select`
 * of the nested fields asked for, and `take`/`skip`/`cursor` of a connection page); the domain adds the scope.
 */
export type { RowSelection };

/** The account's identities as rows, oldest first, with the adapter's `selection`. Requires scope `email`. */
export async function listIdentityRows(
  ctx: DomainContext,
  actor: Actor,
  selection: RowSelection = {},
): Promise<EmailIdentity[]> {
  requireScope(actor, 'email');
  return identitiesOf(ctx.db, actor.accountId, selection);
}

/**
 * The account's identity row (any status) with the adapter's `selection`. Requires scope `email`.
 * @throws NotFoundError (another account's id answers the same).
 */
export async function getIdentityRow(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  selection: RowSelection = {},
): Promise<EmailIdentity> {
  requireScope(actor, 'email');
  const row = await identityRowSelected(ctx.db, actor.accountId, identityId, selection);
  if (!row) throw new NotFoundError('Email identity', identityId, 'id');
  return row;
}

/** Active identities among `addresses` (lower-cased match) on a hosted domain (EMAIL_DOMAINS). */
export async function activeIdentitiesFor(ctx: DomainContext, list: string[]): Promise<EmailIdentity[]> {
  const hosted = await localAddresses(ctx, list);
  if (hosted.length === 0) return [];
  return activeIdentitiesAt(ctx, hosted);
}
