import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import './types/system.js';
import './types/compliance.js';
import './types/events.js';
import './types/webhooks.js';
import './types/email.js';

/** The executable schema, built once from every type file. */
export const schema = builder.toSchema();

/** The SDL committed as schema.graphql (sorted, so diffs stay small). */
export function printSortedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
