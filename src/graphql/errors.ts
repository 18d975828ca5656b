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
    if (error instanceof GraphQLError && !error.originalError) return error; // parse/validation errors of GraphQL itself
    log.error({ err: original }, 'unexpected error in GraphQL resolver');
    return new GraphQLError(message, {
      path: error instanceof GraphQLError ? error.path : undefined,
      extensions: { code: 'INTERNAL_ERROR', status: 500 },
    });
  };
}
