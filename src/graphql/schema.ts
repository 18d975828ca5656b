import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import './types/errors.js';
import './types/node.js';
import './types/viewer.js';
import './types/brand.js';
import './types/campaign.js';
import './types/phone-number.js';
import './types/event.js';
import './types/webhook.js';
import './types/agent.js';
import './types/email-thread.js';
import './types/email-identity.js';
import './types/contact.js';
import './types/email-domain.js';
import './types/email-mailbox.js';
import './types/email-draft.js';
import './types/email-search.js';
import './types/role-mail.js';

/** The executable schema, built once from every type file. */
export const schema = builder.toSchema();

/** The SDL committed as schema.graphql (sorted, so diffs stay small). */
export function printSortedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
