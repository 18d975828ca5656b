// Request limits of the GraphQL endpoint. Each is checked before any resolver runs and answers HTTP 400 with
// `extensions.code: "QUERY_TOO_COMPLEX"` (docs/graphql.md, "Limits"). Parsing and rule checks come from
// @escape.tech/graphql-armor (tokens, depth, aliases, directives); the list-size-aware cost from
// @pothos/plugin-complexity's calculator, applied once per operation here so a refusal is one error, not one per
// root field.
import { maxAliasesPlugin, maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin, maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin, maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { complexityFromQuery } from '@pothos/plugin-complexity';
import {
  BREAK,
  type DocumentNode,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  Lexer,
  type OperationDefinitionNode,
  parse,
  Source,
  TokenKind,
  TypeInfo,
  type ValueNode,
  validate,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Config } from '../config.js';
import { defaultFieldComplexity, SIZE_ARGUMENTS } from './builder.js';

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
  schema: CostSchema,
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

type CostSchema = Parameters<typeof complexityFromQuery>[1]['schema'];

/** Costs already computed for one parsed document, by operation name and the values of {@link CostEntry.inputs}. */
interface CostEntry {
  /** The variables the cost can depend on, or null when it may depend on any (then nothing is reused). */
  inputs: string[] | null;
  costs: Map<string, number>;
}
/** Most costs kept per document (one per distinct page size, say); past it costs are computed each time. */
const MAX_COSTS_PER_DOCUMENT = 64;
const costEntries = new WeakMap<DocumentNode, CostEntry>();

function variablesIn(value: ValueNode, into: Set<string>): void {
  if (value.kind === Kind.VARIABLE) into.add(value.name.value);
  else if (value.kind === Kind.LIST) for (const v of value.values) variablesIn(v, into);
  else if (value.kind === Kind.OBJECT) for (const f of value.fields) variablesIn(f.value, into);
}

/**
 * The variables a document's cost can depend on, found once per parsed document (Yoga's parse cache hands back the
 * same document object for the same text). A field weighted by {@link defaultFieldComplexity} reads only its
 * {@link SIZE_ARGUMENTS}; a constant weight reads nothing; a field with its own complexity function (`nodes(ids:)`)
 * may read anything, so such a document's cost is computed on every request (null).
 */
function costInputs(document: DocumentNode, schema: CostSchema): string[] | null {
  const typeInfo = new TypeInfo(schema);
  const inputs = new Set<string>();
  let reusable = true;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const complexity = typeInfo.getFieldDef()?.extensions?.complexity;
        if (typeof complexity !== 'function') return undefined;
        if (complexity !== defaultFieldComplexity) {
          reusable = false;
          return BREAK;
        }
        for (const arg of node.arguments ?? []) {
          if (SIZE_ARGUMENTS.includes(arg.name.value)) variablesIn(arg.value, inputs);
        }
        return undefined;
      },
    }),
  );
  return reusable ? [...inputs] : null;
}

/**
 * {@link operationCost}, reused for the same document, operation and values of the variables the cost depends on
 * ({@link costInputs}): `brand(id: $id)` is costed once whatever the id, `brands(first: $first)` once per page size.
 * One difference: a request whose other variables do not coerce gets its cost from the cache (and a refusal when it
 * is over budget) where a fresh computation stops at the bad variable and leaves the error to execution; both are
 * 400s.
 */
export function cachedOperationCost(
  document: DocumentNode,
  operationName: string | null | undefined,
  schema: CostSchema,
  variables: Record<string, unknown> | undefined,
  ctx: object,
): number | undefined {
  let entry = costEntries.get(document);
  if (!entry) {
    entry = { inputs: costInputs(document, schema), costs: new Map() };
    costEntries.set(document, entry);
  }
  if (!entry.inputs) return operationCost(document, operationName, schema, variables, ctx);
  // [value] when given, [] when absent: an absent variable takes its default, an explicit null does not.
  const given = entry.inputs.map((name) => (variables && Object.hasOwn(variables, name) ? [variables[name]] : []));
  const key = `${operationName ?? ''}\u0000${JSON.stringify(given)}`;
  const cached = entry.costs.get(key);
  if (cached !== undefined) return cached;
  const cost = operationCost(document, operationName, schema, variables, ctx);
  // Only a computed cost is kept: undefined means this request's variables did not coerce, not that a later one's won't.
  if (cost !== undefined && entry.costs.size < MAX_COSTS_PER_DOCUMENT) entry.costs.set(key, cost);
  return cost;
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
      schema: CostSchema;
      variableValues?: Record<string, unknown> | null;
      contextValue: object;
    };
    setResultAndStopExecution: (result: { errors: GraphQLError[]; data: null }) => void;
  }) => {
    const cost = cachedOperationCost(
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

/** One operation of a batched request body, as clients send it. */
interface BatchedParams {
  query?: unknown;
  operationName?: unknown;
  variables?: unknown;
}

/** Lexical tokens of a document as graphql-js's `maxTokens` counts them (comments excluded). */
function tokenCount(query: string): number {
  const lexer = new Lexer(new Source(query));
  let n = 0;
  while (lexer.advance().kind !== TokenKind.EOF) n++;
  return n;
}

/**
 * The limits over a whole batched request (a JSON array of operations, issue 26): tokens, aliases, directives and
 * cost are summed over its operations and held to the same maxima as one operation, so a batch of 10 documents
 * with 30 aliased mutations each (300 in all) is refused like one document with 300, before any of them runs.
 * Depth is the deepest operation's: a batch's operations are siblings, not nested, and each is already held to
 * maxDepth. Counting is graphql-armor's (its rules with an unbounded `n`, reporting each operation's figure) and
 * the cost is {@link cachedOperationCost}. An operation that does not parse or has no query is skipped: Yoga
 * answers it with its own error.
 * @param operations the parsed JSON array body (length already within maxBatch, Yoga checks that).
 * @returns a QUERY_TOO_COMPLEX error naming the limit, its maximum and the batch's total, or undefined.
 */
export function batchLimitError(
  operations: readonly unknown[],
  limits: GraphQLLimits,
  schema: GraphQLSchema,
): GraphQLError | undefined {
  if (operations.length > limits.maxBatch) return undefined; // Yoga answers 413 for the batch size itself
  const totals = { tokens: 0, aliases: 0, directives: 0, cost: 0, depth: 0 };
  const unbounded = Number.MAX_SAFE_INTEGER;
  for (const op of operations) {
    const { query, operationName, variables } = (op ?? {}) as BatchedParams;
    if (typeof query !== 'string') continue;
    let document: DocumentNode;
    try {
      totals.tokens += tokenCount(query);
      if (totals.tokens > limits.maxTokens) break;
      document = parse(query);
    } catch {
      continue;
    }
    const count =
      (key: 'aliases' | 'directives' | 'depth') =>
      (_ctx: unknown, { n }: { n: number }) => {
        totals[key] = key === 'depth' ? Math.max(totals[key], n) : totals[key] + n;
      };
    validate(schema, document, [
      maxAliasesRule({ n: unbounded, onAccept: [count('aliases')] }),
      maxDirectivesRule({ n: unbounded, onAccept: [count('directives')] }),
      maxDepthRule({ n: unbounded, flattenFragments: true, onAccept: [count('depth')] }),
    ]);
    const cost = cachedOperationCost(
      document,
      typeof operationName === 'string' ? operationName : undefined,
      schema as CostSchema,
      variables && typeof variables === 'object' ? (variables as Record<string, unknown>) : undefined,
      {},
    );
    totals.cost += cost ?? 0;
  }
  const checks: [keyof typeof totals, number, string][] = [
    ['tokens', limits.maxTokens, 'Tokens'],
    ['aliases', limits.maxAliases, 'Aliases'],
    ['directives', limits.maxDirectives, 'Directives'],
    ['depth', limits.maxDepth, 'Depth'],
    ['cost', limits.maxCost, 'Query cost'],
  ];
  for (const [limit, max, label] of checks) {
    const found = totals[limit];
    if (found > max) {
      const over = limit === 'depth' ? `${found}` : `${found}, summed over the ${operations.length} operations,`;
      return tooComplex(`${label} of this batched request ${over} exceed the limit of ${max}.`, limit, max, found);
    }
  }
  return undefined;
}
