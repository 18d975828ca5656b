import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { getRoleMail, listRoleMail } from '../../domain/email/role-mail.service.js';
import { pageQuery } from '../../domain/paging.js';
import { idParams } from '../../domain/validation.js';
import { actorOf } from '../auth.js';

/**
 * Response schemas of a role mailbox (src/domain/email/role-mail.service.ts `RoleMessageView`), shared by the
 * account's routes below and the operator's (admin.routes.ts): `page` is a list answer `{messages, nextCursor}`
 * (no bodies), `one` a single message with its `body`. `recipient` describes the mailbox's role addresses.
 */
export function roleMessageSchemas(recipient: string) {
  const message = z.object({
    id: z.string(),
    recipient: z.string().describe(recipient),
    messageId: z.string(),
    mailFrom: z.string().describe('SMTP reverse-path; empty for the null reverse-path.'),
    from: z.string(),
    subject: z.string(),
    remoteAddress: z.string().describe("The SMTP client's address."),
    receivedAt: z.string(),
  });
  return {
    page: z.object({ messages: z.array(message), nextCursor: z.string().nullable() }),
    one: message.extend({ body: z.string() }),
  };
}

const roleMessage = roleMessageSchemas('The role address of one of your verified domains: postmaster@… or abuse@….');

/**
 * REST routes of role mail (issue 26, src/domain/email/role-mail.service.ts): mail to postmaster@ and abuse@ of the
 * account's verified custom domains (RFC 5321 4.5.1, RFC 2142) that no identity of the account holds.
 */
export async function roleMailRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['email'];
  r.get(
    '/api/email/role-mail',
    {
      schema: {
        operationId: 'listRoleMail',
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
        tags,
        summary: 'Mail to postmaster@ and abuse@ of your verified custom domains, in arrival order (no bodies).',
        querystring: pageQuery,
        response: { 200: roleMessage.page },
      },
    },
    async (request) => listRoleMail(ctx, actorOf(request), request.query),
  );
  r.get(
    '/api/email/role-mail/:id',
    {
      schema: {
        operationId: 'getRoleMail',
        errors: ['FORBIDDEN', 'NOT_FOUND'],
        tags,
        summary: 'One message to a role address of your custom domains, with its text body.',
        params: idParams,
        response: { 200: roleMessage.one },
      },
    },
    async (request) => getRoleMail(ctx, actorOf(request), request.params.id),
  );
}
