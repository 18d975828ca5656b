import type { FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';
import { ValidationError } from '../domain/errors.js';
import { detailsFromZod } from '../domain/validation.js';

/**
 * Validates request parts with the same zod schemas the domain uses, raising our {@link ValidationError} (all
 * violations at once) so the one error handler answers 400 VALIDATION_FAILED. Query-string and path fields are
 * reported as `query.<name>` and `params.<name>`; body fields by their own path.
 */
export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  const prefix =
    httpPart === 'querystring'
      ? 'query'
      : httpPart === 'params'
        ? 'params'
        : httpPart === 'headers'
          ? 'headers'
          : undefined;
  return (data: unknown) => {
    const result = schema.safeParse(data);
    if (result.success) return { value: result.data };
    return { error: new ValidationError(detailsFromZod(result.error, data, prefix)) };
  };
};

/** Responses are plain JSON; response schemas exist for the OpenAPI document, not for serialising. */
export const jsonSerializerCompiler = () => (data: unknown) => JSON.stringify(data);
