import { searchThreadPage, searchThreadsInput } from '../../domain/email/search.service.js';
import type { EmailThread } from '../../generated/prisma/client.js';
import { builder } from '../builder.js';
import { parseArgs } from '../parse-args.js';
import { EmailThreadRef } from './email-thread.js';

const SearchPageRef = builder
  .objectRef<{ rows: EmailThread[]; nextCursor: string | null }>('EmailThreadSearchPage')
  .implement({
    description: 'One page of a thread search, newest activity first.',
    fields: (t) => ({
      threads: t.field({ type: [EmailThreadRef], resolve: (p) => p.rows }),
      nextCursor: t.exposeString('nextCursor', { nullable: true, description: 'null on the last page.' }),
    }),
  });

builder.queryFields((t) => ({
  emailThreadSearch: t.field({
    type: SearchPageRef,
    description:
      'Threads with a message matching every given filter (REST GET /api/email/identities/{id}/threads?q= and ' +
      'GET /api/email/threads): q is full-text over subject, bodies and addresses (websearch syntax); from an ' +
      'address or a domain; after/before ISO 8601 times of the messages; label. identityId omitted: every identity.',
    args: {
      identityId: t.arg.id(),
      q: t.arg.string(),
      from: t.arg.string(),
      after: t.arg.string({ description: 'ISO 8601: messages sent at or after it.' }),
      before: t.arg.string({ description: 'ISO 8601: messages sent before it.' }),
      label: t.arg.string(),
      limit: t.arg.int({ description: 'Default 20, at most 100.' }),
      cursor: t.arg.string({ description: 'nextCursor of the previous page.' }),
    },
    resolve: (_root, { identityId, ...args }, ctx) =>
      searchThreadPage(
        ctx.app,
        ctx.actor,
        identityId === null || identityId === undefined ? undefined : String(identityId),
        parseArgs(ctx, 'email', searchThreadsInput, args),
      ),
  }),
}));
