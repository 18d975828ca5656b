import type { FastifyError, FastifyInstance } from 'fastify';
import { DomainError, RateLimitedError } from '../domain/errors.js';

/** The one REST error body: `{"error": {code, message, field?, details?}}` (README "Errors"). */
export interface ErrorBody {
  error: {
    code: string;
    message: string;
    field?: string;
    details?: { code: string; field: string; message: string }[];
  };
}

/** Body of a {@link DomainError}; `field` overrides the error's own (see {@link notFoundField}). */
export function errorBody(err: DomainError, field: string | undefined = err.field): ErrorBody {
  return {
    error: {
      code: err.code,
      message: err.message,
      ...(field ? { field } : {}),
      ...(err.details ? { details: err.details } : {}),
    },
  };
}

/**
 * The `field` of a REST 404 (issue 22): always the name of the path parameter that was not found, whatever name the
 * domain gave it (`agentId` for the `{id}` of /api/agents/{id}/knowledge). The domain's field is kept when it is a
 * path parameter of the route (`threadId`, `documentId`, `deliveryId`) or a top-level body field (a referenced
 * object that does not exist, e.g. `agentId` of PATCH /api/email/identities/{id}); otherwise it is the route's first
 * path parameter, the outermost resource, which the domain looks up first. Routes without path parameters keep it.
 */
export function notFoundField(err: DomainError, params: unknown, body: unknown): string | undefined {
  const names = params && typeof params === 'object' ? Object.keys(params) : [];
  if (names.length === 0) return err.field;
  if (err.field && names.includes(err.field)) return err.field;
  if (err.field && body && typeof body === 'object' && Object.hasOwn(body, err.field)) return err.field;
  return names[0];
}

/** Fastify's own request errors, mapped to stable codes. */
const FASTIFY_CODES: Record<string, { status: number; code: string; message?: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: {
    status: 400,
    code: 'MALFORMED_JSON',
    message: 'The request body is not valid JSON.',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: 'MALFORMED_JSON',
    message: 'The request has Content-Type application/json but an empty body.',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: 'Send request bodies as application/json.',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'BAD_REQUEST' },
};

/**
 * Maps every error to the one body shape and a status: DomainErrors by their own status and code, Fastify's body
 * parsing errors to MALFORMED_JSON / UNSUPPORTED_MEDIA_TYPE / PAYLOAD_TOO_LARGE, unknown routes to
 * ROUTE_NOT_FOUND, anything else to a masked 500 INTERNAL_ERROR logged with the request id.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | DomainError | Error, request, reply) => {
    if (err instanceof DomainError) {
      if (err.status === 401) reply.header('www-authenticate', 'Bearer');
      if (err instanceof RateLimitedError) reply.header('retry-after', String(err.retryAfterSeconds));
      const field = err.code === 'NOT_FOUND' ? notFoundField(err, request.params, request.body) : err.field;
      return reply.status(err.status).send(errorBody(err, field));
    }
    const fastifyErr = err as FastifyError;
    const known = fastifyErr.code ? FASTIFY_CODES[fastifyErr.code] : undefined;
    if (known) {
      return reply
        .status(known.status)
        .send({ error: { code: known.code, message: known.message ?? fastifyErr.message } } satisfies ErrorBody);
    }
    if (err instanceof SyntaxError && (fastifyErr.statusCode ?? 500) === 400) {
      return reply
        .status(400)
        .send({ error: { code: 'MALFORMED_JSON', message: 'The request body is not valid JSON.' } });
    }
    const status = fastifyErr.statusCode ?? 500;
    if (status < 500) {
      return reply.status(status).send({ error: { code: 'BAD_REQUEST', message: err.message } } satisfies ErrorBody);
    }
    request.log.error({ err }, 'unexpected error');
    return reply.status(500).send({
      error: { code: 'INTERNAL_ERROR', message: `Unexpected error; quote request id ${request.id} when reporting it.` },
    } satisfies ErrorBody);
  });

  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({
      error: { code: 'ROUTE_NOT_FOUND', message: `No route ${request.method} ${request.url.split('?')[0]}` },
    } satisfies ErrorBody),
  );
}
