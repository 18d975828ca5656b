import type { z } from 'zod';
import { requireScope, type Scope } from '../domain/accounts/account.service.js';
import { parseInput } from '../domain/validation.js';
import type { GraphQLContext } from './builder.js';
import { withoutNulls } from './types/compliance-enums.js';

/**
 * The GraphQL door's parse, as the route schema is REST's: turns a field's arguments into the typed input a domain
 * function takes, with the same zod schema REST validates the body with, so both doors answer a bad input with the
 * same 400 VALIDATION_FAILED, codes and fields (`ein`, `numbers.0`; no `input.` prefix).
 *
 * - `scope` is the one the domain function requires; it is checked first, so a key without it gets 403 FORBIDDEN
 *   before any 400, as when the domain parsed after its own check (the domain still checks it).
 * - Nulls: GraphQL gives `null` for omitted optional input fields, which the schemas expect absent, so they are
 *   dropped (`withoutNulls`, top-level fields only). `{ keepNulls: true }` passes `value` as it is, for inputs
 *   where `null` means something (`agentId: null` unassigns an agent) or that have no nullable field.
 * @throws ForbiddenError without `scope`; ValidationError listing every violation.
 */
export function parseArgs<S extends z.ZodType>(
  ctx: GraphQLContext,
  scope: Scope,
  schema: S,
  value: object | null | undefined,
  opts: { keepNulls?: boolean } = {},
): z.output<S> {
  requireScope(ctx.actor, scope);
  return parseInput(schema, opts.keepNulls ? value : withoutNulls(value));
}
