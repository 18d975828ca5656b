import { useGraphQLSSE } from '@graphql-yoga/plugin-graphql-sse';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type DocumentNode, GraphQLError, visit } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import type { AppContext } from '../app-context.js';
import { UnauthenticatedError, ValidationError } from '../domain/errors.js';
import { badTextFields } from '../domain/validation.js';
import type { GraphQLContext } from './builder.js';
import { createMaskError } from './errors.js';
import { schema } from './schema.js';

/** Server context Yoga receives from the Fastify route. */
export interface YogaServerContext {
  req: FastifyRequest;
  reply: FastifyReply;
}

/**
 * graphql-sse (2.6) only recognises an execution result that has a `data` key; graphql-js answers an error thrown
 * while subscribing (a bad argument, a missing scope) with `{errors}` alone, which graphql-sse then misreads as
 * "Unable to detect operation AST" (400). Adding `data: null` lets the client receive our coded errors.
 */
const subscribeErrorsWithData: Plugin = {
  onSubscribe() {
    return {
      onSubscribeResult({ result, setResult }) {
        if (!(Symbol.asyncIterator in result) && !('data' in result)) setResult({ ...result, data: null });
      },
    };
  },
};

/**
 * A stream token (stream-token.ts) opens subscriptions only: queries and mutations with one answer
 * UNAUTHENTICATED, as REST routes other than the stream do.
 */
const streamTokenSubscribesOnly: Plugin<GraphQLContext> = {
  onExecute({ args, setResultAndStopExecution }) {
    if (args.contextValue.actor?.expiresAt) {
      setResultAndStopExecution({
        errors: [
          new GraphQLError('A stream token only opens event streams (subscriptions).', {
            extensions: { code: 'UNAUTHENTICATED', status: 401 },
          }),
        ],
      });
    }
  },
};

/** The first problem found by {@link badTextFields} in a document's string literals and its variables. */
function unstorableText(document: DocumentNode, variables: unknown): GraphQLError | undefined {
  const literals: string[] = [];
  visit(document, {
    StringValue(node) {
      literals.push(node.value);
    },
  });
  const bad = [
    ...badTextFields(variables ?? {}, ['variables']),
    ...badTextFields(literals).map((d) => ({ ...d, field: 'query' })),
  ];
  if (bad.length === 0) return undefined;
  const err = new ValidationError(bad);
  return new GraphQLError(err.message, {
    extensions: { code: err.code, status: err.status, field: err.field, details: err.details },
  });
}

/**
 * NUL and lone surrogates in arguments are refused as in REST bodies (src/rest/inputs.ts): PostgreSQL cannot store
 * them, and a GET /graphql request's variables never pass the JSON body parser (issue 13: an id with U+0000 was an
 * INTERNAL_ERROR).
 */
const refuseUnstorableText: Plugin<GraphQLContext> = {
  onExecute({ args, setResultAndStopExecution }) {
    const error = unstorableText(args.document, args.variableValues);
    if (error) setResultAndStopExecution({ errors: [error] });
  },
  onSubscribe({ args, setResultAndStopExecution }) {
    const error = unstorableText(args.document, args.variableValues);
    if (error) setResultAndStopExecution({ errors: [error] });
  },
};

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
    plugins: [
      subscribeErrorsWithData,
      streamTokenSubscribesOnly,
      refuseUnstorableText,
      useGraphQLSSE({ endpoint: '/graphql/stream' }),
    ],
    context: ({ req }): GraphQLContext => {
      if (!req.actor) throw new UnauthenticatedError();
      return { app: ctx, actor: req.actor, requestId: req.id };
    },
  });
}
