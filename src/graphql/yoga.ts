import { useGraphQLSSE } from '@graphql-yoga/plugin-graphql-sse';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createYoga } from 'graphql-yoga';
import type { AppContext } from '../app-context.js';
import { UnauthenticatedError } from '../domain/errors.js';
import type { GraphQLContext } from './builder.js';
import { createMaskError } from './errors.js';
import { schema } from './schema.js';

/** Server context Yoga receives from the Fastify route. */
export interface YogaServerContext {
  req: FastifyRequest;
  reply: FastifyReply;
}

/**
 * Yoga at /graphql: masked errors with our codes in `extensions`, GraphiQL, Yoga's SSE transport for
 * subscriptions, and the graphql-sse protocol at /graphql/stream (distinct and single-connection modes).
 */
export function createGraphQLServer(ctx: AppContext) {
  return createYoga<YogaServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    maskedErrors: { maskError: createMaskError(ctx.log) },
    graphiql: { title: 'Switchboard GraphQL' },
    plugins: [useGraphQLSSE({ endpoint: '/graphql/stream' })],
    context: ({ req }): GraphQLContext => {
      if (!req.actor) throw new UnauthenticatedError();
      return { app: ctx, actor: req.actor, requestId: req.id };
    },
  });
}
