import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ErrorsPlugin from '@pothos/plugin-errors';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import { getNamedType, getNullableType, isListType } from 'graphql';
import type { AppContext } from '../app-context.js';
import type { Actor } from '../domain/accounts/account.service.js';
import { ConflictError, ForbiddenError, NotFoundError, UnprocessableError, ValidationError } from '../domain/errors.js';
import type PrismaTypes from '../generated/pothos-types.js';
import { getDatamodel } from '../generated/pothos-types.js';

/** The read-only GraphQL context: the app, the authenticated caller, and the request id for logs. */
export interface GraphQLContext {
  app: AppContext;
  actor: Actor;
  requestId: string;
}

/** Page size of a connection without `first`/`last` (Pothos relay's default, as resolveCursorConnection uses). */
export const DEFAULT_PAGE_SIZE = 20;
/** Largest `first`/`last` of a connection (Pothos relay's default maximum; larger values are clamped). */
export const MAX_PAGE_SIZE = 100;
/** Assumed size of a list field without a size argument, for the cost budget. */
const DEFAULT_LIST_SIZE = 10;

/**
 * Cost weighting of one field (docs/graphql.md, Limits): the field costs 1 and its selection counts as many times
 * as the list can be long: `first`/`last`/`limit` when given, a connection's default page otherwise, 10 for other
 * lists; a connection's `edges` list is already counted by the connection (multiplier 1).
 */
function listCost(args: Record<string, unknown>, type: Parameters<typeof getNamedType>[0]) {
  const size = SIZE_ARGUMENTS.map((name) => args[name]).find((v): v is number => typeof v === 'number' && v >= 0);
  const named = getNamedType(type)?.name ?? '';
  if (size !== undefined) return { field: 1, multiplier: Math.max(1, size) };
  if (named.endsWith('Connection')) return { field: 1, multiplier: DEFAULT_PAGE_SIZE };
  if (isListType(getNullableType(type)))
    return { field: 1, multiplier: named.endsWith('Edge') ? 1 : DEFAULT_LIST_SIZE };
  return 1;
}

/**
 * The domain errors a mutation answers as typed results (docs/graphql.md, Errors): the client can act on them
 * (fix the input, pick another id, wait for a state, use another key). Every other error stays a top-level GraphQL
 * error with `extensions.code` (src/graphql/errors.ts). Their object types are in src/graphql/types/errors.ts.
 */
export const EXPECTED_ERRORS = [ValidationError, NotFoundError, ConflictError, UnprocessableError, ForbiddenError];

/** `createBrand` → `CreateBrandResult`: the union a mutation answers (its payload or one of the expected errors). */
const resultName = ({ fieldName }: { fieldName: string }) =>
  `${fieldName[0]!.toUpperCase()}${fieldName.slice(1)}Result`;

/** The argument names the default cost weighting reads ({@link defaultFieldComplexity}). */
export const SIZE_ARGUMENTS: readonly string[] = ['first', 'last', 'limit'];

/**
 * The complexity of every field without its own `complexity` option: {@link listCost} of its arguments and type. It
 * reads only {@link SIZE_ARGUMENTS}; src/graphql/limits.ts relies on that to reuse a document's cost.
 */
export const defaultFieldComplexity = (
  args: Record<string, unknown>,
  _ctx: unknown,
  field: { type: Parameters<typeof getNamedType>[0] },
) => listCost(args, field.type);

/** The one Pothos builder. Type files under src/graphql/types import it; src/graphql/schema.ts builds the schema. */
export const builder = new SchemaBuilder<{
  PrismaTypes: PrismaTypes;
  Context: GraphQLContext;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  // Errors before Dataloader (the errors plugin's documentation asks for that order).
  plugins: [ComplexityPlugin, ErrorsPlugin, PrismaPlugin, RelayPlugin, DataloaderPlugin],
  errors: {
    defaultTypes: EXPECTED_ERRORS,
    // The union holds the payload type itself (`CreateBrandPayload | ValidationError | …`), not a wrapper.
    directResult: true,
    defaultUnionOptions: { name: resultName },
  },
  complexity: {
    // No limit here: src/graphql/limits.ts checks the whole operation once, before execution, with this weighting.
    fieldComplexity: defaultFieldComplexity,
  },
  defaultFieldNullability: false,
  prisma: {
    client: (ctx) => ctx.app.db,
    dmmf: getDatamodel(),
    exposeDescriptions: true,
    filterConnectionTotalCount: true,
    onUnusedQuery: process.env.NODE_ENV === 'production' ? null : 'error',
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
  },
});

/** The exact output of `Date.prototype.toISOString()` for years 0–9999. */
const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

builder.scalarType('DateTime', {
  description: 'ISO 8601 UTC timestamp with milliseconds, e.g. 2026-11-21T05:01:46.123Z.',
  // Domain DTOs already carry `toISOString()` text: that form is passed through instead of parsed and re-printed.
  serialize: (value) =>
    value instanceof Date
      ? value.toISOString()
      : typeof value === 'string' && ISO_UTC_MS.test(value)
        ? value
        : new Date(value).toISOString(),
  parseValue: (value) => {
    const d = new Date(String(value));
    if (Number.isNaN(d.getTime())) throw new TypeError('DateTime must be an ISO 8601 timestamp');
    return d;
  },
});

builder.scalarType('JSON', {
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
});

builder.queryType({ description: 'Reads. Every field is scoped to the API key’s account.' });
builder.mutationType({ description: 'Changes. Errors carry `extensions.code` (and `field`, `details`) as REST does.' });

/** The field builder of an input type of this schema, for field sets two input types share. */
export type InputFields = PothosSchemaTypes.InputFieldBuilder<
  typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never,
  'InputObject'
>;
