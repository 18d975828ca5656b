import { PothosValidationError } from '@pothos/core';
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { DomainError } from '../domain/errors.js';

/**
 * Yoga's `maskError`: a {@link DomainError} reaches the client with the REST codes in `extensions`
 * (`code`, `field`, `details`, `status`); anything else is masked as INTERNAL_ERROR and logged with the request id.
 */
export function createMaskError(log: Logger) {
  return (error: unknown, message: string): Error => {
    const original = error instanceof GraphQLError ? error.originalError : error;
    if (original instanceof DomainError) {
      const gqlError = error instanceof GraphQLError ? error : undefined;
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
        },
      });
    }
    // Pothos refuses bad connection arguments at run time (a `before`/`after` that is not a cursor it issued, a
    // negative `first`): the client's input, answered as such (issue 13 fuzzing found these masked).
    if (original instanceof PothosValidationError) {
      const gqlError = error instanceof GraphQLError ? error : undefined;
      return new GraphQLError(original.message, {
        nodes: gqlError?.nodes,
        positions: gqlError?.positions,
        path: gqlError?.path,
        extensions: { code: /cursor/i.test(original.message) ? 'INVALID_CURSOR' : 'VALIDATION_FAILED', status: 400 },
      });
    }
    if (error instanceof GraphQLError && !error.originalError) return error; // parse/validation errors of GraphQL itself
    // A variable that does not coerce to its type (`$id: ID!` given 6e-323, `$limit: Int` given "x"): graphql-js wraps
    // the scalar's own GraphQLError, so it has an originalError but is the client's input, not a server failure
    // (issue 13 fuzzing found these masked as INTERNAL_ERROR).
    if (error instanceof GraphQLError && !error.path && error.originalError instanceof GraphQLError) {
      return new GraphQLError(error.message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        extensions: { code: 'VALIDATION_FAILED', status: 400 },
      });
    }
    log.error({ err: original }, 'unexpected error in GraphQL resolver');
    return new GraphQLError(message, {
      path: error instanceof GraphQLError ? error.path : undefined,
      extensions: { code: 'INTERNAL_ERROR', status: 500 },
    });
  };
}
