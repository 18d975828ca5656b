import { PothosValidationError } from '@pothos/core';
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { DomainError } from '../domain/errors.js';

/** Code of a request the client got wrong that is not a domain rule (bad variables, bad paging arguments). */
export const BAD_USER_INPUT = 'BAD_USER_INPUT';

/** A coded client error: HTTP 400 when it fails the whole request (Yoga reads `extensions.http.status`). */
function clientError(error: GraphQLError | undefined, message: string, code: string): GraphQLError {
  return new GraphQLError(message, {
    nodes: error?.nodes,
    source: error?.source,
    positions: error?.positions,
    path: error?.path,
    extensions: { ...error?.extensions, code, status: 400, ...(error?.path ? {} : { http: { status: 400 } }) },
  });
}

/**
 * Yoga's `maskError`, applied to every error of a result:
 * - a {@link DomainError} keeps the REST codes in `extensions` (`code`, `field`, `details`, `status`);
 * - GraphQL's own request errors (syntax, validation, variable coercion such as `{"n": "abc"}` for `Int`) and
 *   Pothos argument checks (`first: -1`) are client mistakes: `BAD_USER_INPUT` (or the code they already carry,
 *   e.g. QUERY_TOO_COMPLEX), HTTP 400 when they fail the request as a whole;
 * - anything else is masked as INTERNAL_ERROR (500) and logged with the request id.
 */
export function createMaskError(log: Logger) {
  return (error: unknown, message: string): Error => {
    const gqlError = error instanceof GraphQLError ? error : undefined;
    const original = gqlError ? gqlError.originalError : error;
    if (original instanceof DomainError) {
      return new GraphQLError(original.message, {
        nodes: gqlError?.nodes,
        source: gqlError?.source,
        positions: gqlError?.positions,
        path: gqlError?.path,
        extensions: {
          code: original.code,
          status: original.status,
          ...(original.field ? { field: original.field } : {}),
          ...(original.details ? { details: original.details } : {}),
          ...(gqlError?.path || original.status >= 500 ? {} : { http: { status: original.status } }),
        },
      });
    }
    if (original instanceof PothosValidationError) return clientError(gqlError, original.message, BAD_USER_INPUT);
    if (gqlError && typeof gqlError.extensions?.code === 'string' && !original) return gqlError; // already coded
    // GraphQL's own errors before execution (parse, validate, coerce variables) carry no path: the client's mistake.
    if (
      gqlError &&
      !gqlError.path &&
      (!original || original instanceof GraphQLError || original instanceof TypeError)
    ) {
      return clientError(gqlError, gqlError.message, BAD_USER_INPUT);
    }
    log.error({ err: original }, 'unexpected error in GraphQL resolver');
    return new GraphQLError(message, {
      path: gqlError?.path,
      extensions: { code: 'INTERNAL_ERROR', status: 500 },
    });
  };
}
