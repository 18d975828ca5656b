import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import {
  adminAccountInput,
  adminCreateAccount,
  adminGetAccount,
  adminIssueKey,
  adminKeyInput,
  adminListAccounts,
  adminListQuery,
  adminRevokeKey,
} from '../../domain/accounts/admin.service.js';
import { getRoleMessage, listRoleMessages, OPERATOR_MAILBOX } from '../../domain/email/role-mail.service.js';
import { pageQuery } from '../../domain/paging.js';
import { idParams, resourceId } from '../../domain/validation.js';
import { roleMessageSchemas } from './role-mail.routes.js';

const operatorMessage = roleMessageSchemas(
  'The role address: postmaster@<hosted domain>, abuse@<hosted domain> or postmaster.',
);

const issued = z.object({
  accountId: z.string(),
  keyId: z.string(),
  apiKey: z.string().describe('The API key, shown only in this response.'),
  scopes: z.array(z.string()),
});

/**
 * Operator routes (docs/operations.md "Admin surface"), behind `Authorization: Bearer <ADMIN_TOKEN>` (or the
 * per-start local token of DATA_DIR/admin.json): accounts and API keys while the service runs, on every storage
 * mode. A key issued here works on the next request.
 */
export async function adminRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['admin'];
  const config = { admin: true };

  r.post(
    '/admin/accounts',
    {
      config,
      schema: {
        operationId: 'adminCreateAccount',
        tags,
        summary: 'Create an account and its first API key (201).',
        body: adminAccountInput,
        response: { 201: issued },
      },
    },
    async (request, reply) => reply.status(201).send(await adminCreateAccount(ctx.db, request.body)),
  );

  r.get(
    '/admin/accounts',
    {
      config,
      schema: {
        operationId: 'adminListAccounts',
        tags,
        summary: 'List accounts in creation order.',
        errors: ['INVALID_CURSOR'],
        querystring: adminListQuery,
        response: {
          200: z.object({
            accounts: z.array(z.object({ id: z.string(), name: z.string(), createdAt: z.string() })),
            nextCursor: z.string().nullable(),
          }),
        },
      },
    },
    async (request) => adminListAccounts(ctx.db, request.query),
  );

  r.get(
    '/admin/accounts/:id',
    {
      config,
      schema: {
        operationId: 'adminGetAccount',
        tags,
        summary: 'One account with its API keys (ids, names, scopes, revocation; never secrets).',
        errors: ['NOT_FOUND'],
        params: idParams,
        response: {
          200: z.object({
            id: z.string(),
            name: z.string(),
            createdAt: z.string(),
            keys: z.array(
              z.object({
                id: z.string(),
                name: z.string(),
                scopes: z.array(z.string()),
                createdAt: z.string(),
                revokedAt: z.string().nullable(),
              }),
            ),
          }),
        },
      },
    },
    async (request) => adminGetAccount(ctx.db, request.params.id),
  );

  r.post(
    '/admin/keys',
    {
      config,
      schema: {
        operationId: 'adminIssueKey',
        tags,
        summary: 'Issue another API key for an account, with any scopes (201).',
        errors: ['NOT_FOUND'],
        body: adminKeyInput,
        response: { 201: issued },
      },
    },
    async (request, reply) => reply.status(201).send(await adminIssueKey(ctx.db, request.body)),
  );

  r.delete(
    '/admin/keys/:keyId',
    {
      config,
      schema: {
        operationId: 'adminRevokeKey',
        tags,
        summary: 'Revoke an API key (204); requests with it answer 401 from then on.',
        params: z.object({ keyId: resourceId }),
        errors: ['NOT_FOUND'],
        response: { 204: z.undefined() },
      },
    },
    async (request, reply) => {
      await adminRevokeKey(ctx, request.params.keyId);
      return reply.status(204).send();
    },
  );

  r.get(
    '/admin/mail',
    {
      config,
      schema: {
        operationId: 'adminListOperatorMail',
        tags,
        summary: 'The operator mailbox: mail to postmaster@ and abuse@ of every hosted domain, in arrival order.',
        errors: ['INVALID_CURSOR'],
        querystring: pageQuery,
        response: { 200: operatorMessage.page },
      },
    },
    async (request) => listRoleMessages(ctx.db, OPERATOR_MAILBOX, request.query),
  );

  r.get(
    '/admin/mail/:id',
    {
      config,
      schema: {
        operationId: 'adminGetOperatorMail',
        tags,
        summary: 'One message of the operator mailbox, with its text body.',
        errors: ['NOT_FOUND'],
        params: idParams,
        response: { 200: operatorMessage.one },
      },
    },
    async (request) => getRoleMessage(ctx.db, OPERATOR_MAILBOX, request.params.id),
  );
}
