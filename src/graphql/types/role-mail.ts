// Role mail of the account's custom domains (issue 26): postmaster@ and abuse@ of its verified domains, as REST
// GET /api/email/role-mail shows them, as a Relay connection whose cursors are REST's `nextCursor`s.
import { resolveCursorConnection } from '@pothos/plugin-relay';
import {
  pageRoleMail,
  type RoleMessageView,
  roleMailByIds,
  roleMailCursor,
} from '../../domain/email/role-mail.service.js';
import { NotFoundError } from '../../domain/errors.js';
import { builder } from '../builder.js';
import { NodeRef } from './node.js';

/** The GraphQL type of a role message (the domain's view; `body` read in one batch per page when selected). */
export const RoleMessageRef = builder.objectRef<RoleMessageView>('RoleMessage').implement({
  interfaces: [NodeRef],
  description:
    'A message to postmaster@ or abuse@ one of your verified custom domains (RFC 5321 4.5.1, RFC 2142), kept for ' +
    'you because no identity of yours has that address (REST GET /api/email/role-mail/{id}).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUIDv7 (arrival order); the same id as in REST.' }),
    recipient: t.exposeString('recipient', { description: 'The role address, lower-cased: postmaster@… or abuse@….' }),
    messageId: t.exposeString('messageId', { description: 'Message-ID (one made up for a message without).' }),
    mailFrom: t.exposeString('mailFrom', { description: 'SMTP reverse-path; empty for the null reverse-path.' }),
    from: t.exposeString('from', { description: 'First From: address.' }),
    subject: t.exposeString('subject'),
    remoteAddress: t.exposeString('remoteAddress', { description: 'The SMTP client’s address.' }),
    receivedAt: t.field({ type: 'DateTime', description: 'When it was stored.', resolve: (m) => m.receivedAt }),
    body: t.loadable({
      type: 'String',
      description: 'The text body (at most 1,000,000 characters kept); read in one batch for the whole page.',
      load: async (ids: string[], ctx) =>
        (await roleMailByIds(ctx.app, ctx.actor, ids, true)).map(
          (m, i) => m?.body ?? new NotFoundError('role message', ids[i]!, 'id'),
        ),
      resolve: (m) => m.id,
    }),
  }),
});

builder.queryFields((t) => ({
  roleMail: t.connection(
    {
      type: RoleMessageRef,
      description:
        'Mail to postmaster@ and abuse@ of your verified custom domains, in arrival order (Relay connection; the ' +
        'cursors are REST GET /api/email/role-mail’s `nextCursor`). Scope `email`.',
      resolve: (_root, args, ctx) =>
        resolveCursorConnection<Promise<RoleMessageView[]>>({ args, toCursor: roleMailCursor }, (window) =>
          pageRoleMail(ctx.app, ctx.actor, window),
        ),
    },
    { name: 'RoleMessageConnection' },
    { name: 'RoleMessageEdge' },
  ),
}));
