import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import type { AppContext } from '../app-context.js';
import type { Actor } from '../domain/accounts/account.service.js';
import type PrismaTypes from '../generated/pothos-types.js';
import { getDatamodel } from '../generated/pothos-types.js';

/** The read-only GraphQL context: the app, the authenticated caller, and the request id for logs. */
export interface GraphQLContext {
  app: AppContext;
  actor: Actor;
  requestId: string;
}

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
  plugins: [PrismaPlugin, RelayPlugin],
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

builder.scalarType('DateTime', {
  description: 'ISO 8601 UTC timestamp with milliseconds, e.g. 2026-11-21T05:01:46.123Z.',
  serialize: (value) => (value instanceof Date ? value.toISOString() : new Date(value).toISOString()),
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
