// The Yoga mount in the Fastify host: /graphql (queries, mutations, GraphiQL, Yoga SSE) and /graphql/stream
// (graphql-sse). Errors raised before Yoga runs (no or bad API key, a body the JSON parser refuses) answer in
// GraphQL's shape, `{"errors": [{"message", "extensions": {"code", …}}]}`, so GraphQL clients and GraphiQL can show
// them; REST keeps its `{"error": …}` body.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import { DomainError } from '../domain/errors.js';
import { createGraphQLServer } from './yoga.js';

/** Fastify's body errors on the GraphQL routes, as coded GraphQL errors. */
const FASTIFY_CODES: Record<string, { status: number; code: string; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: {
    status: 400,
    code: 'MALFORMED_JSON',
    message: 'The request body is not valid JSON.',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'MALFORMED_JSON', message: 'The request body is empty.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: 'Send GraphQL requests as application/json (or GET with query parameters).',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large.' },
};

/** Route error handler of the GraphQL routes: the one GraphQL error shape, 401 with `WWW-Authenticate: Bearer`. */
function graphqlErrorHandler(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  let status: number;
  let extensions: Record<string, unknown>;
  let message = err.message;
  if (err instanceof DomainError) {
    status = err.status;
    extensions = {
      code: err.code,
      ...(err.field ? { field: err.field } : {}),
      ...(err.details ? { details: err.details } : {}),
    };
    if (status === 401) reply.header('www-authenticate', 'Bearer');
  } else {
    const known = (err as FastifyError).code ? FASTIFY_CODES[(err as FastifyError).code] : undefined;
    const fastifyStatus = (err as FastifyError).statusCode ?? 500;
    if (known) {
      ({ status, message } = known);
      extensions = { code: known.code };
    } else if (fastifyStatus < 500) {
      status = fastifyStatus;
      extensions = { code: err instanceof SyntaxError ? 'MALFORMED_JSON' : 'BAD_REQUEST' };
    } else {
      request.log.error({ err }, 'unexpected error');
      status = 500;
      message = `Unexpected error; quote request id ${request.id} when reporting it.`;
      extensions = { code: 'INTERNAL_ERROR' };
    }
  }
  return reply
    .status(status)
    .type('application/json; charset=utf-8')
    .send({ errors: [{ message, extensions: { ...extensions, status } }] });
}

/**
 * The status of a JSON result. Yoga answers `application/json` requests whose document failed parsing or validation
 * with 200 (the legacy rule of GraphQL over HTTP); we answer every request that failed as a whole (an `errors` list
 * and no `data`: syntax, validation, limits, variables) with a 4xx, as GraphQL over HTTP does for
 * `application/graphql-response+json`: the highest client status among the errors, else 400.
 */
function requestErrorStatus(status: number, text: string): number {
  if (status !== 200 || !text.startsWith('{"errors"')) return status;
  let body: { errors?: { extensions?: { status?: unknown } }[]; data?: unknown };
  try {
    body = JSON.parse(text);
  } catch {
    return status;
  }
  if (!Array.isArray(body.errors) || 'data' in body) return status;
  const statuses = body.errors
    .map((e) => e.extensions?.status)
    .filter((s): s is number => typeof s === 'number' && s >= 400 && s < 500);
  return statuses.length > 0 ? Math.max(...statuses) : 400;
}

/**
 * Mounts Yoga on `http` at /graphql and /graphql/stream. Authentication stays with the host's onRequest hook
 * (src/rest/auth.ts); its 401 is answered here in GraphQL's shape.
 */
export function mountGraphQL(http: FastifyInstance, ctx: AppContext): void {
  const yoga = createGraphQLServer(ctx);
  const yogaHandler = async (req: FastifyRequest, reply: FastifyReply) => {
    const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
    response.headers.forEach((value, key) => {
      reply.header(key, value);
    });
    const type = response.headers.get('content-type') ?? '';
    const streaming = type.includes('text/event-stream') || type.includes('multipart/');
    // A stream's connection is not reused: closing it when the stream ends lets shutdown finish at once.
    if (streaming) {
      reply.header('connection', 'close');
      return reply.status(response.status).send(response.body);
    }
    // Plain results go out as a string so hooks (idempotency) see the exact body; streams stay streams.
    const text = await response.text();
    return reply.status(requestErrorStatus(response.status, text)).send(text);
  };
  http.route({
    url: '/graphql',
    method: ['GET', 'POST', 'OPTIONS'],
    // Stream tokens (src/domain/accounts/stream-token.ts) open subscriptions here, as `?token=` or Bearer.
    config: { allowStreamToken: true },
    schema: { hide: true },
    errorHandler: graphqlErrorHandler,
    handler: yogaHandler,
  });
  http.route({
    url: '/graphql/stream',
    method: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
    // Stream tokens (src/domain/accounts/stream-token.ts) open subscriptions here, as `?token=` or Bearer.
    config: { allowStreamToken: true },
    schema: { hide: true },
    errorHandler: graphqlErrorHandler,
    handler: yogaHandler,
  });
}
