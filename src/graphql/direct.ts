// The direct path for a known query document (issue 24, GraphQL `brand(id)` ≥ 0.6x bare): a query text Yoga has
// parsed and validated once runs its graphql-jit compiled form straight from the Fastify handler, without Yoga's
// per-request pipeline (WHATWG Request, parameter hooks, parse/validate cache lookups, the envelop orchestrator and
// its promise helpers, the WHATWG Response). What Yoga's plugins do before execution is done here for the happy
// path only: any request one of them would refuse is handed back (undefined) and takes the Yoga path, which
// answers it exactly as before.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type DocumentNode, type ExecutionResult, type GraphQLError, getOperationAST } from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import { processRegularResult } from 'graphql-yoga';
import type { AppContext } from '../app-context.js';
import type { GraphQLContext } from './builder.js';
import { cachedOperationCost } from './limits.js';
import { schema } from './schema.js';
import { type createGraphQLServer, unstorableText } from './yoga.js';

type Yoga = ReturnType<typeof createGraphQLServer>;

/** A query text admitted to the direct path: its parsed document and compiled query, per operation name. */
interface Known {
  document: DocumentNode;
  compiled: CompiledQuery;
}

/** Most query texts (per operation name) kept, never evicted; past it, new texts take the Yoga path (its parse cache holds 1,000). */
const MAX_KNOWN = 256;

/**
 * How many of Yoga's plugins have an onExecute hook when the direct path reproduces them all: Yoga's engine
 * (graphql-js, replaced by graphql-jit), the cost limit (limits.ts), the stream-token refusal, the unstorable-text
 * refusal, graphql-jit (yoga.ts) and Yoga's error masking.
 */
const EXPECTED_ON_EXECUTE = 6;

/**
 * The body of a POST the direct path may take: `query` a string, `variables` absent or a JSON object,
 * `operationName` absent or a string, nothing else (no `extensions`: Yoga's parameter checks and any extension
 * handling stay on its path).
 */
function directParams(body: Record<string, unknown>): boolean {
  for (const key in body) {
    if (key !== 'query' && key !== 'variables' && key !== 'operationName') return false;
  }
  if (typeof body.query !== 'string') return false;
  const v = body.variables;
  if (v !== undefined && (typeof v !== 'object' || v === null || Array.isArray(v))) return false;
  const op = body.operationName;
  return op === undefined || typeof op === 'string';
}

/**
 * Queries (never mutations or subscriptions) Yoga's path has already run once ({@link DirectQueries.learn}: parsed
 * and validated by its enveloped `parse` and `validate`, with the limit rules, the NUL rule and its caches), keyed
 * by operation name and text, each with a
 * graphql-jit compiled query (the options of the jit plugin: none). Per request it checks, in the order of Yoga's
 * onExecute plugins, what those would refuse: the cost budget (the same cached cost, limits.ts), a stream token
 * (queries refused), NUL or lone surrogates in variables or literals; any of them hands the request back to Yoga.
 * The compiled query runs with a context of the same fields resolvers read (`app`, `actor`, `requestId`, plus `req`,
 * `reply`, `params` as Yoga's has). Errors in the result are masked by Yoga's own `maskError` (its `maskedErrors`
 * options, so our codes and logging) and answered by Yoga's `processRegularResult`, as on its path; a result
 * without errors is written as `JSON.stringify` of it, which is what Yoga's stringifier does then.
 *
 * Used only when graphql-jit is on, tracing is off (the tracing plugin's spans), Yoga has no `onExecutionResult`
 * hook, and Yoga's onExecute plugins are the {@link EXPECTED_ON_EXECUTE} known ones: a new plugin turns
 * the direct path off until it is taught here (test/graphql/transport.test.ts asserts it is on).
 */
export class DirectQueries {
  private readonly known = new Map<string, Known | null>();
  private readonly maxCost: number;

  private constructor(
    private readonly yoga: Yoga,
    private readonly app: AppContext,
    maxCost: number,
  ) {
    this.maxCost = maxCost;
  }

  /** The direct path for `yoga`, or undefined when it must not be used (see the class). */
  static create(yoga: Yoga, app: AppContext, opts: { jit: boolean; tracing: boolean }): DirectQueries | undefined {
    if (!opts.jit || opts.tracing) return undefined;
    const y = yoga as unknown as {
      onExecutionResultHooks?: unknown[];
      plugins?: { onExecute?: unknown }[];
      maskedErrorsOpts?: unknown;
    };
    if (!Array.isArray(y.onExecutionResultHooks) || y.onExecutionResultHooks.length !== 0) return undefined;
    const onExecute = (y.plugins ?? []).filter((p) => p.onExecute).length;
    if (onExecute !== EXPECTED_ON_EXECUTE || !y.maskedErrorsOpts) return undefined;
    return new DirectQueries(yoga, app, app.config.GRAPHQL_MAX_COST);
  }

  private static key(query: string, operationName: string | undefined): string {
    return operationName === undefined ? query : `${operationName}\u0000${query}`;
  }

  /**
   * Admits a query text after Yoga's path ran it: only when its answer came from execution (a `data` key), i.e.
   * the text parsed and validated, so Yoga's enveloped `parse` and `validate` called here are hits of its caches
   * (its parse cache also keeps parse errors, and a text that failed must reach them only through Yoga's path).
   * Mutations, subscriptions, an operation name that selects nothing, and texts past {@link MAX_KNOWN} are
   * remembered as not admitted.
   * @param body the request body Yoga answered (the shape {@link directParams} accepts).
   */
  learn(body: unknown, result: unknown, context: object): void {
    if (typeof result !== 'object' || result === null || !('data' in result)) return;
    const params = body as { query: string; operationName?: string };
    if (!directParams(params as Record<string, unknown>)) return;
    const key = DirectQueries.key(params.query, params.operationName);
    if (this.known.has(key) || this.known.size >= MAX_KNOWN) return;
    let entry: Known | null = null;
    try {
      const enveloped = this.yoga.getEnveloped(context);
      const document = enveloped.parse(params.query);
      const errors = enveloped.validate(enveloped.schema, document);
      const operation = errors.length === 0 ? getOperationAST(document, params.operationName) : null;
      if (operation?.operation === 'query' && enveloped.schema === schema) {
        const compiled = compileQuery(schema, document, params.operationName);
        if (isCompiledQuery(compiled)) entry = { document, compiled };
      }
    } catch {
      entry = null;
    }
    this.known.set(key, entry);
  }

  /**
   * Answers one JSON POST to /graphql directly, or returns undefined (nothing sent, nothing run) for Yoga's path.
   * @param mediaType the media type Yoga would answer in for the request's `Accept` (src/graphql/http.ts).
   * @param send writes a WHATWG Response as the Yoga path does (errors only).
   */
  run(
    req: FastifyRequest,
    reply: FastifyReply,
    mediaType: string,
    send: (reply: FastifyReply, response: Response) => Promise<unknown>,
  ): Promise<unknown> | undefined {
    const body = req.body as Record<string, unknown>;
    const actor = req.actor;
    // A stream token opens subscriptions only; Yoga's path refuses its queries (yoga.ts streamTokenSubscribesOnly).
    if (!actor || actor.expiresAt || !directParams(body)) return undefined;
    const params = body as { query: string; variables?: Record<string, unknown>; operationName?: string };
    const context: GraphQLContext & Record<string, unknown> = {
      req,
      reply,
      params,
      app: this.app,
      actor,
      requestId: req.id,
    };
    const known = this.known.get(DirectQueries.key(params.query, params.operationName));
    if (!known) return undefined;
    const variables = params.variables;
    const cost = cachedOperationCost(known.document, params.operationName, schema as never, variables, context);
    if (cost !== undefined && cost > this.maxCost) return undefined;
    if (unstorableText(known.document, variables)) return undefined;
    return Promise.resolve(known.compiled.query(undefined, context, variables)).then((result) =>
      this.answer(reply, result as ExecutionResult, mediaType, send),
    );
  }

  private answer(
    reply: FastifyReply,
    result: ExecutionResult,
    mediaType: string,
    send: (reply: FastifyReply, response: Response) => Promise<unknown>,
  ): unknown {
    if (result.errors?.length || result.extensions) {
      const opts = (
        this.yoga as unknown as {
          maskedErrorsOpts: { maskError: (e: GraphQLError, m: string) => GraphQLError; errorMessage: string };
        }
      ).maskedErrorsOpts;
      const masked = result.errors?.length
        ? { ...result, errors: result.errors.map((e) => opts.maskError(e, opts.errorMessage)) }
        : result;
      return Promise.resolve(processRegularResult(masked, this.yoga.fetchAPI, mediaType)).then((r) => send(reply, r));
    }
    const text = JSON.stringify(result);
    return reply
      .header('content-type', `${mediaType}; charset=utf-8`)
      .header('content-length', Buffer.byteLength(text))
      .status(200)
      .send(text);
  }
}
