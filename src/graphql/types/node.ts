// The Relay Node interface with `node(id:)` and `nodes(ids:)`. Ids are the service's own ids (UUIDs, the same as
// REST's), unique across every type, so a client can move between REST and GraphQL with one id; the type is found
// by looking the id up, account-scoped, in each node type's batched domain read. Another account's id (or an
// unknown one) gives null, never an error that would reveal it exists; so does an id of a type whose scope the key
// lacks (a key with `email` only gets null for a brand's id).
import type { AppContext } from '../../app-context.js';
import type { Actor, Scope } from '../../domain/accounts/account.service.js';
import { brandsByIds, campaignsByIds } from '../../domain/compliance/compliance.batch.js';
import { contactRowsByIds } from '../../domain/contacts/contact.service.js';
import { agentRowsByIds, identityRowsByIds, threadRowsByIds } from '../../domain/email/email.batch.js';
import { roleMailByIds } from '../../domain/email/role-mail.service.js';
import { ValidationError } from '../../domain/errors.js';
import { deliveriesByIds, webhooksByIds } from '../../domain/webhooks/webhook.batch.js';
import { builder } from '../builder.js';

/** A node as resolved by `node`/`nodes`: the object plus its GraphQL type name. */
type NodeShape = { id: string; __node?: string };

export const NodeRef = builder.interfaceRef<NodeShape>('Node').implement({
  description: 'An object with an id, readable again with `node(id:)` (Relay).',
  fields: (t) => ({ id: t.exposeID('id', { description: 'Service-wide unique id (the same id as in REST).' }) }),
  resolveType: (value) => value.__node ?? null,
});

type Loader = (ctx: AppContext, actor: Actor, ids: readonly string[]) => Promise<({ id: string } | null)[]>;

/**
 * Each node type with the scope that reads it and its batched read (one entry per id, null where not the
 * account's), tried in this order until every id is found: at most one query per type per request.
 */
const NODE_LOADERS: [typename: string, scope: Scope, load: Loader][] = [
  ['Brand', 'compliance', brandsByIds],
  ['Campaign', 'compliance', campaignsByIds],
  ['Agent', 'email', agentRowsByIds],
  ['EmailIdentity', 'email', identityRowsByIds],
  ['EmailThread', 'email', threadRowsByIds],
  ['Contact', 'email', contactRowsByIds],
  ['RoleMessage', 'email', roleMailByIds],
  ['Webhook', 'webhooks', webhooksByIds],
  ['WebhookDelivery', 'webhooks', deliveriesByIds],
];

/** The names of the types implementing Node, for descriptions. */
const NODE_TYPES = NODE_LOADERS.map(([typename]) => typename).join(', ');

/** Resolves ids to nodes of the caller's account (null where unknown, another account's or out of the key's scopes). */
async function loadNodes(ctx: AppContext, actor: Actor, ids: string[]) {
  const found = new Map<string, NodeShape>();
  for (const [typename, scope, load] of NODE_LOADERS) {
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length === 0) break;
    if (!actor.scopes.includes(scope)) continue;
    const rows = await load(ctx, actor, missing);
    rows.forEach((row, i) => {
      if (row) found.set(missing[i]!, { ...row, __node: typename });
    });
  }
  return ids.map((id) => found.get(id) ?? null);
}

builder.queryFields((t) => ({
  node: t.field({
    type: NodeRef,
    nullable: true,
    description: `Any object by id (${NODE_TYPES}); null for an unknown id, another account’s, or one the key’s scopes do not cover.`,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await loadNodes(ctx.app, ctx.actor, [String(args.id)]))[0] ?? null,
  }),
  nodes: t.field({
    type: [NodeRef],
    nullable: { list: false, items: true },
    description: 'Objects by id, in the order asked (at most 100); null entries for unknown or other accounts’ ids.',
    args: { ids: t.arg.idList({ required: true }) },
    complexity: (args) => ({ field: 1, multiplier: Math.max(1, args.ids.length) }),
    resolve: (_root, args, ctx) => {
      if (args.ids.length > 100) throw new TooManyIdsError(args.ids.length);
      return loadNodes(ctx.app, ctx.actor, args.ids.map(String));
    },
  }),
}));

/** 400 TOO_MANY: `nodes(ids:)` takes at most 100 ids. */
class TooManyIdsError extends ValidationError {
  constructor(count: number) {
    super([{ field: 'ids', code: 'TOO_MANY', message: `at most 100 ids, got ${count}` }]);
  }
}
