// Request limits of the GraphQL endpoint. Each is checked before any resolver runs and answers HTTP 400 with
// `extensions.code: "QUERY_TOO_COMPLEX"` (docs/graphql.md, "Limits"). Parsing and rule checks come from
// @escape.tech/graphql-armor (tokens, depth, aliases, directives); the list-size-aware cost from
// @pothos/plugin-complexity's calculator, applied once per operation here so a refusal is one error, not one per
// root field.
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { complexityFromQuery } from '@pothos/plugin-complexity';
import { type DocumentNode, GraphQLError, Kind, type OperationDefinitionNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Config } from '../config.js';

/** The stable code of every refusal by a limit. */
export const QUERY_TOO_COMPLEX = 'QUERY_TOO_COMPLEX';

/** Limits of one GraphQL request (from {@link Config}: GRAPHQL_MAX_*). */
export interface GraphQLLimits {
  /** Most lexical tokens in the document (names, punctuation, literals). */
  maxTokens: number;
  /** Deepest field nesting, fragments followed. */
  maxDepth: number;
  /** Most aliased fields in one operation (`a1: brand(…) a2: brand(…)`), fragments followed. */
  maxAliases: number;
  /** Most directives in one operation. */
  maxDirectives: number;
  /** Cost budget: every field costs 1 and a list's selection counts `first`/`limit` times (default 10). */
  maxCost: number;
  /** Most operations in one batched (JSON array) request. */
  maxBatch: number;
}

/** The limits configured by GRAPHQL_MAX_TOKENS, _DEPTH, _ALIASES, _DIRECTIVES, _COST and _BATCH. */
export function limitsFromConfig(config: Config): GraphQLLimits {
  return {
    maxTokens: config.GRAPHQL_MAX_TOKENS,
    maxDepth: config.GRAPHQL_MAX_DEPTH,
    maxAliases: config.GRAPHQL_MAX_ALIASES,
    maxDirectives: config.GRAPHQL_MAX_DIRECTIVES,
    maxCost: config.GRAPHQL_MAX_COST,
    maxBatch: config.GRAPHQL_MAX_BATCH,
  };
}

/** A refusal by a limit: HTTP 400, `extensions: {code: QUERY_TOO_COMPLEX, limit, max, found?}`. */
export function tooComplex(message: string, limit: string, max: number, found?: number): GraphQLError {
  return new GraphQLError(message, {
    extensions: {
      code: QUERY_TOO_COMPLEX,
      limit,
      max,
      ...(found === undefined ? {} : { found }),
      http: { status: 400 },
    },
  });
}

/** armor's rejection messages end in "found N."; keep N for `extensions.found`. */
function foundIn(message: string): number | undefined {
  const match = /found (\d+)/.exec(message);
  return match ? Number(match[1]) : undefined;
}

/** armor rejects by throwing from its parser or rule; we throw our coded error instead of its bare one. */
function rejectAs(limit: string, max: number) {
  return [
    (_ctx: unknown, err: GraphQLError): never => {
      throw tooComplex(err.message.replace(/^Syntax Error: /, ''), limit, max, foundIn(err.message));
    },
  ];
}

/**
 * Cost of the selected operation with Pothos' calculator: each field costs its `complexity` (1 by default) and a
 * field's selection is multiplied by its multiplier (`first`/`last`/`limit` for lists, see builder.ts).
 * @returns the cost, or undefined when the operation cannot be found (execution reports that).
 */
function operationCost(
  document: DocumentNode,
  operationName: string | null | undefined,
  schema: Parameters<typeof complexityFromQuery>[1]['schema'],
  variables: Record<string, unknown> | undefined,
  ctx: object,
): number | undefined {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  if (!operation) return undefined;
  const fragments = document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
  try {
    return complexityFromQuery(
      { kind: Kind.DOCUMENT, definitions: [operation, ...fragments] },
      { schema, ctx, variables },
    ).complexity;
  } catch {
    return undefined; // bad variables: execution answers them with its own coded error
  }
}

/** The cost check, before execution (and before a subscription starts). */
function costLimitPlugin(maxCost: number): Plugin {
  const check = ({
    args,
    setResultAndStopExecution,
  }: {
    args: {
      document: DocumentNode;
      operationName?: string | null;
      schema: Parameters<typeof complexityFromQuery>[1]['schema'];
      variableValues?: Record<string, unknown> | null;
      contextValue: object;
    };
    setResultAndStopExecution: (result: { errors: GraphQLError[]; data: null }) => void;
  }) => {
    const cost = operationCost(
      args.document,
      args.operationName,
      args.schema,
      args.variableValues ?? undefined,
      args.contextValue,
    );
    if (cost !== undefined && cost > maxCost) {
      setResultAndStopExecution({
        data: null,
        errors: [tooComplex(`Query cost ${cost} exceeds the budget of ${maxCost}.`, 'cost', maxCost, cost)],
      });
    }
  };
  return { onExecute: check, onSubscribe: check } as Plugin;
}

/** Envelop/Yoga plugins enforcing every limit but the batch size (Yoga's own `batching.limit`). */
export function limitPlugins(limits: GraphQLLimits): Plugin[] {
  return [
    maxTokensPlugin({ n: limits.maxTokens, onReject: rejectAs('tokens', limits.maxTokens) }) as Plugin,
    maxDepthPlugin({
      n: limits.maxDepth,
      flattenFragments: true,
      onReject: rejectAs('depth', limits.maxDepth),
    }) as Plugin,
    maxAliasesPlugin({ n: limits.maxAliases, onReject: rejectAs('aliases', limits.maxAliases) }) as Plugin,
    maxDirectivesPlugin({ n: limits.maxDirectives, onReject: rejectAs('directives', limits.maxDirectives) }) as Plugin,
    costLimitPlugin(limits.maxCost),
  ];
}
