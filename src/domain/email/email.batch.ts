// Batched, account-scoped reads of the email area by id, for GraphQL's `node(id:)`/`nodes(ids:)`. Each returns one
// row per id, in the ids' order; an id of another account (or unknown) gives null, never another account's row.

import { type Actor, requireScope } from '../accounts/account.service.js';
import type { DomainContext } from '../kernel/context.js';
import { type Agent, agentsByIds, countAgentsOf } from './agent.store.js';
import { countIdentitiesOf, type EmailIdentity, identitiesByIds } from './identity.store.js';
import { type EmailThread, threadsByIds } from './thread.store.js';

/** Orders `rows` as `ids`, null where missing. */
function inOrder<T extends { id: string }>(ids: readonly string[], rows: T[]): (T | null)[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id) ?? null);
}

/** Agent rows of the actor's account by id. Scope: email. */
export async function agentRowsByIds(
  ctx: DomainContext,
  actor: Actor,
  ids: readonly string[],
): Promise<(Agent | null)[]> {
  requireScope(actor, 'email');
  return inOrder(ids, await agentsByIds(ctx.db, actor.accountId, ids));
}

/** Identity rows of the actor's account by id (deprovisioning ones included, as GET shows them). Scope: email. */
export async function identityRowsByIds(
  ctx: DomainContext,
  actor: Actor,
  ids: readonly string[],
): Promise<(EmailIdentity | null)[]> {
  requireScope(actor, 'email');
  return inOrder(ids, await identitiesByIds(ctx.db, actor.accountId, ids));
}

/** Thread rows of the actor's account by id. Scope: email. */
export async function threadRowsByIds(
  ctx: DomainContext,
  actor: Actor,
  ids: readonly string[],
): Promise<(EmailThread | null)[]> {
  requireScope(actor, 'email');
  return inOrder(ids, await threadsByIds(ctx.db, actor.accountId, ids));
}

/** How many agents the account has (GraphQL `agents.totalCount`: one COUNT on the account index). Scope: email. */
export async function countAgents(ctx: DomainContext, actor: Actor): Promise<number> {
  requireScope(actor, 'email');
  return countAgentsOf(ctx.db, actor.accountId);
}

/** How many identities the account has, deprovisioning ones included (as the list shows them). Scope: email. */
export async function countIdentities(ctx: DomainContext, actor: Actor): Promise<number> {
  requireScope(actor, 'email');
  return countIdentitiesOf(ctx.db, actor.accountId);
}
