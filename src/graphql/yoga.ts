import { useGraphQlJit } from '@envelop/graphql-jit';
import { useGraphQLSSE } from '@graphql-yoga/plugin-graphql-sse';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type DocumentNode, GraphQLError, Kind, type ValidationRule, visit } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import type { AppContext } from '../app-context.js';
import { type ErrorDetail, UnauthenticatedError, ValidationError } from '../domain/errors.js';
import { badTextFields } from '../domain/validation.js';
import { SpanKind, SpanStatusCode, tracer, tracingEnabled } from '../infra/tracing.js';
import type { GraphQLContext } from './builder.js';
import { BAD_USER_INPUT, createMaskError } from './errors.js';
import { renderSwitchboardGraphiQL } from './graphiql.js';
import { batchLimitError, limitPlugins, limitsFromConfig } from './limits.js';
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
 * PostgreSQL text cannot hold U+0000, and a GraphQL string literal can spell it (`"Nul\u0000Corp"`). Refused in
 * validation (400 BAD_USER_INPUT, field = the argument) before anything runs; JSON variables are refused by the
 * host's JSON parser the same way.
 */
const noNulInLiterals: ValidationRule = (context) => ({
  StringValue(node) {
    if (node.value.includes('\u0000')) {
      context.reportError(
        new GraphQLError('String literals must not contain U+0000 (NUL).', {
          nodes: [node],
          extensions: { code: BAD_USER_INPUT, reason: 'INVALID_CHARACTER', http: { status: 400 } },
        }),
      );
    }
  },
});
const nulPlugin: Plugin = {
  onValidate({ addValidationRule }) {
    addValidationRule(noNulInLiterals);
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

/**
 * The problems {@link badTextFields} finds in a document's string literals, computed once per parsed document: Yoga's
 * parse cache hands back the same document object for the same text, so repeated queries skip the AST walk.
 */
const literalProblems = new WeakMap<DocumentNode, ErrorDetail[]>();
function literalTextProblems(document: DocumentNode): ErrorDetail[] {
  let problems = literalProblems.get(document);
  if (!problems) {
    const literals: string[] = [];
    visit(document, {
      StringValue(node) {
        literals.push(node.value);
      },
    });
    problems = badTextFields(literals).map((d) => ({ ...d, field: 'query' }));
    literalProblems.set(document, problems);
  }
  return problems;
}

/**
 * The first problem found by {@link badTextFields} in a document's string literals and its variables, as the
 * BAD_USER_INPUT GraphQLError execution answers; undefined when both can be stored.
 */
export function unstorableText(document: DocumentNode, variables: unknown): GraphQLError | undefined {
  const inVariables = variables ? badTextFields(variables, ['variables']) : [];
  const inLiterals = literalTextProblems(document);
  if (inVariables.length === 0 && inLiterals.length === 0) return undefined;
  const err = new ValidationError([...inVariables, ...inLiterals]);
  return new GraphQLError(err.message, {
    extensions: { code: err.code, status: err.status, field: err.field, details: err.details },
  });
}

/**
 * NUL and lone surrogates in arguments are refused as in REST bodies (badTextFields, src/domain/validation.ts): PostgreSQL cannot store
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
 * graphql-jit for queries and mutations (compiled once per parsed document; Yoga's parse/validate cache hands back
 * the same document object for the same text, so the compiled query is reused). Subscriptions stay on graphql-js's
 * `subscribe`: their per-event execution is cheap and graphql-sse's error handling is proven on it.
 */
function jitPlugin(): Plugin {
  const jit = useGraphQlJit({}, { enableIf: (args) => hasNoSubscription(args.document) });
  return { onExecute: jit.onExecute } as Plugin;
}
function hasNoSubscription(document: { definitions: readonly { kind: string; operation?: string }[] }): boolean {
  return !document.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && d.operation === 'subscription');
}

/**
 * The limits over a whole batched request (limits.ts, batchLimitError), bound to this app's configuration and the
 * schema: the HTTP mount calls it with a JSON array body before Yoga runs any of its operations.
 */
export function createBatchCheck(ctx: AppContext): (operations: readonly unknown[]) => GraphQLError | undefined {
  const limits = limitsFromConfig(ctx.config);
  return (operations) => batchLimitError(operations, limits, schema);
}

/**
 * One INTERNAL span per GraphQL operation (`graphql query viewer`…, OpenTelemetry GraphQL conventions: operation
 * type and name), a child of the HTTP request's span (or of nothing, over graphql-ws). Only while tracing is on.
 */
function tracingPlugin(): Plugin {
  const start = (document: DocumentNode, operationName: string | undefined | null) => {
    const op = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION) as
      | { operation: string; name?: { value: string } }
      | undefined;
    const type = op?.operation ?? 'unknown';
    const name = operationName ?? op?.name?.value ?? '';
    return tracer().startSpan(`graphql ${type}${name ? ` ${name}` : ''}`, {
      kind: SpanKind.INTERNAL,
      attributes: { 'graphql.operation.type': type, 'graphql.operation.name': name },
    });
  };
  const finish = (span: ReturnType<typeof start>, result: unknown) => {
    const errors = (result as { errors?: readonly unknown[] } | undefined)?.errors;
    if (errors && errors.length > 0) span.setStatus({ code: SpanStatusCode.ERROR, message: `${errors.length} errors` });
    span.end();
  };
  return {
    onExecute({ args }) {
      const span = start(args.document, args.operationName);
      return { onExecuteDone: ({ result }) => finish(span, result) };
    },
    onSubscribe({ args }) {
      const span = start(args.document, args.operationName);
      return { onSubscribeResult: ({ result }) => finish(span, result) };
    },
  };
}

/**
 * Yoga at /graphql: masked errors with our codes in `extensions`, request limits (limits.ts), graphql-jit,
 * GraphiQL from packaged assets, Yoga's SSE transport for subscriptions, and the graphql-sse protocol at
 * /graphql/stream (distinct and single-connection modes). Batched requests (a JSON array) up to GRAPHQL_MAX_BATCH.
 */
export function createGraphQLServer(ctx: AppContext) {
  const limits = limitsFromConfig(ctx.config);
  let graphiqlPage: Promise<string> | undefined;
  return createYoga<YogaServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    cors: false, // the host's @fastify/cors (CORS_ORIGINS) decides; Yoga's default echoes any origin
    maskedErrors: { maskError: createMaskError(ctx.log) },
    graphiql: {
      title: 'Switchboard GraphQL',
      defaultQuery:
        '# Save your API key in the bar above, then run:\n{\n  viewer {\n    accountId\n    scopes\n  }\n}\n',
    },
    renderGraphiQL: (opts) => {
      graphiqlPage ??= renderSwitchboardGraphiQL(opts);
      return graphiqlPage;
    },
    batching: limits.maxBatch > 1 ? { limit: limits.maxBatch } : false,
    plugins: [
      ...limitPlugins(limits),
      nulPlugin,
      streamTokenSubscribesOnly,
      refuseUnstorableText,
      ...(ctx.config.GRAPHQL_JIT ? [jitPlugin()] : []),
      ...(tracingEnabled() ? [tracingPlugin()] : []),
      subscribeErrorsWithData,
      useGraphQLSSE({ endpoint: '/graphql/stream' }),
    ],
    context: ({ req }): GraphQLContext => {
      if (!req.actor) throw new UnauthenticatedError();
      return { app: ctx, actor: req.actor, requestId: req.id };
    },
  });
}
