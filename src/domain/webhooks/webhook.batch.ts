// Batched, account-scoped reads of webhooks and deliveries by id, for GraphQL's `node(id:)`/`nodes(ids:)`. Each
// returns one entry per id, in the ids' order; an id of another account, a deleted webhook or an unknown id gives
// null, never another account's row.

import { type Actor, requireScope } from '../accounts/account.service.js';
import type { DomainContext } from '../kernel/context.js';
import { type DeliveryLogEntry, logEntry, view, type WebhookView } from './webhook.service.js';
import { deliveriesAmong, webhooksAmong } from './webhook.store.js';

/** Webhooks (API shape) of the actor's account by id; null where unknown, deleted or another account's. Scope: webhooks. */
export async function webhooksByIds(
  ctx: DomainContext,
  actor: Actor,
  ids: readonly string[],
): Promise<(WebhookView | null)[]> {
  requireScope(actor, 'webhooks');
  const rows = await webhooksAmong(ctx.db, actor.accountId, ids);
  const byId = new Map(rows.map((r) => [r.id, view(r)]));
  return ids.map((id) => byId.get(id) ?? null);
}

/** Delivery log entries of the actor's account by delivery id; null where unknown or another account's. Scope: webhooks. */
export async function deliveriesByIds(
  ctx: DomainContext,
  actor: Actor,
  ids: readonly string[],
): Promise<(DeliveryLogEntry | null)[]> {
  requireScope(actor, 'webhooks');
  const rows = await deliveriesAmong(ctx.db, actor.accountId, ids);
  const byId = new Map(rows.map((r) => [r.id, logEntry(r)]));
  return ids.map((id) => byId.get(id) ?? null);
}
