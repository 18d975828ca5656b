import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { searchThreads, searchThreadsInput } from '../../domain/email/search.service.js';
import { actorOf } from '../auth.js';

const threadHit = z.object({
  threadId: z.string(),
  identityId: z.string(),
  subject: z.string(),
  participants: z.array(z.string()),
  messageCount: z.number(),
  lastMessageAt: z.string(),
  labels: z.array(z.string()),
});

/** REST route of the account-wide thread search (issue 21 item 4). */
export async function emailSearchRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/api/email/threads',
    {
      schema: {
        operationId: 'searchEmailThreads',
        errors: ['FORBIDDEN', 'INVALID_CURSOR'],
        tags: ['email'],
        summary:
          'Threads of every identity of the account, newest activity first, filtered by q (full-text over subject, ' +
          'bodies and addresses), from, after, before and label; nextCursor "" on the last page.',
        querystring: searchThreadsInput,
        response: { 200: z.object({ threads: z.array(threadHit), nextCursor: z.string() }) },
      },
    },
    async (request) => searchThreads(ctx, actorOf(request), undefined, request.query),
  );
}
