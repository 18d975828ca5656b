// The Yoga mount in the Fastify host: /graphql (queries, mutations, GraphiQL, Yoga SSE) and /graphql/stream
// (graphql-sse). Errors raised before Yoga runs (no or bad API key, a body the JSON parser refuses) answer in
// GraphQL's shape, `{"errors": [{"message", "extensions": {"code", …}}]}`, so GraphQL clients and GraphiQL can show
// them; REST keeps its `{"error": …}` body.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getSSEProcessor, isAsyncIterable, processRegularResult } from 'graphql-yoga';
import type { AppContext } from '../app-context.js';
import { DomainError } from '../domain/errors.js';
import { tracingEnabled } from '../infra/tracing.js';
import { DirectQueries } from './direct.js';
import { BAD_USER_INPUT } from './errors.js';
import { mountGraphQLWs } from './ws.js';
import { createBatchCheck, createGraphQLServer } from './yoga.js';

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
 * The status of a JSON result (GraphQL over HTTP, "Status Codes"). A request that failed as a whole (an `errors`
 * list and no `data`) answers:
 * - with `application/graphql-response+json`: a 4xx, the highest client status among the errors, else 400;
 * - with `application/json` (the legacy media type): 200 when the document failed parsing, validation or variable
 *   coercion (Yoga's GRAPHQL_PARSE_FAILED / GRAPHQL_VALIDATION_FAILED, and graphql-js's `Variable "$x" got invalid
 *   value …` that src/graphql/errors.ts codes BAD_USER_INPUT), as the spec's SHOULDs and
 *   graphql-http's audit ask (test/graphql/http-audit.test.ts); the error's `extensions.status` still says 400.
 *   Errors outside the document (no query, a missing scope, limits, rate limits) keep their 4xx.
 */
function requestErrorStatus(status: number, text: string, contentType: string): number {
  if (!text.startsWith('{"errors"')) return status;
  let body: {
    errors?: { message?: string; extensions?: { status?: unknown; code?: unknown } }[];
    data?: unknown;
  };
  try {
    body = JSON.parse(text);
  } catch {
    return status;
  }
  if (!Array.isArray(body.errors) || body.errors.length === 0 || 'data' in body) return status;
  if (contentType.startsWith('application/json')) {
    const documentErrors = body.errors.every(
      (e) =>
        e.extensions?.code === 'GRAPHQL_PARSE_FAILED' ||
        e.extensions?.code === 'GRAPHQL_VALIDATION_FAILED' ||
        (e.extensions?.code === BAD_USER_INPUT && /^Variable "\$/.test(e.message ?? '')),
    );
    if (documentErrors) return 200;
  }
  if (status !== 200) return status;
  const statuses = body.errors
    .map((e) => e.extensions?.status)
    .filter((s): s is number => typeof s === 'number' && s >= 400 && s < 500);
  return statuses.length > 0 ? Math.max(...statuses) : 400;
}

/**
 * `Accept` values the fast path serves, with the media type Yoga answers a single result in. Yoga prefers the first
 * listed type; `*\/*` (and no header) also admits its SSE processor, which it picks for a subscription's stream.
 */
const SIMPLE_ACCEPT: Record<string, { mediaType: string; sse: boolean }> = {
  '': { mediaType: 'application/json', sse: true },
  '*/*': { mediaType: 'application/json', sse: true },
  'application/json': { mediaType: 'application/json', sse: false },
  'application/graphql-response+json': { mediaType: 'application/graphql-response+json', sse: false },
};

type Yoga = ReturnType<typeof createGraphQLServer>;

/**
 * The common request, one JSON operation POSTed to /graphql, without Yoga's HTTP layer: Fastify has already parsed
 * and checked the body, so the WHATWG Request/Response adapter (@whatwg-node/server), the request parsers and the
 * result-processor negotiation are skipped, and the parameters go straight to `getResultForParams` (the same
 * envelop pipeline: parameter checks, parse/validate cache, limits, masked errors, graphql-jit) and the result to
 * Yoga's own result processors (`processRegularResult`: its status rules and JSON; `getSSEProcessor` for a
 * subscription POSTed with `Accept: *\/*`). Anything else (GET, batches, other `Accept` values, GraphiQL,
 * /graphql/stream) returns undefined and takes Yoga's full path.
 *
 * A parameter check that throws (`{"query": 1}`, unknown keys) does so before anything runs; the request is then
 * answered by the full path, so those errors read exactly as before. Used only while Yoga has no
 * `onExecutionResult` hook (none of our plugins adds one), the one stage that could throw after execution.
 */
function plainJsonResponse(
  yoga: Yoga,
  req: FastifyRequest,
  reply: FastifyReply,
  onResult?: (result: unknown, context: object) => void,
): Promise<Response | undefined> | undefined {
  const body = req.body;
  if (req.method !== 'POST' || typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const accept = SIMPLE_ACCEPT[req.headers.accept ?? ''];
  if (!accept || !req.headers['content-type']?.startsWith('application/json')) return undefined;
  const request = new yoga.fetchAPI.Request(`http://localhost${req.url}`, {
    method: 'POST',
    headers: req.headers as Record<string, string>,
  });
  const context = { req, reply };
  // A promise around the call: a parameter check may throw synchronously as well as reject.
  const result = new Promise<Awaited<ReturnType<Yoga['getResultForParams']>>>((resolve) =>
    resolve(yoga.getResultForParams({ params: body as { query?: string }, request }, context)),
  );
  return result.then(
    async (r) => {
      if (r === undefined) throw new Error('GraphQL execution gave no result');
      if (!isAsyncIterable(r)) {
        onResult?.(r, context);
        return processRegularResult(r, yoga.fetchAPI, accept.mediaType);
      }
      // A subscription's stream: Yoga's SSE processor where `Accept` admits it, else its 406 naming that type.
      if (accept.sse) return getSSEProcessor()(r, yoga.fetchAPI, 'text/event-stream');
      await r[Symbol.asyncIterator]().return?.();
      return new yoga.fetchAPI.Response(null, {
        status: 406,
        statusText: 'Not Acceptable',
        headers: { accept: 'text/event-stream' },
      });
    },
    () => undefined,
  );
}

/** Whether {@link plainJsonResponse} may be used: Yoga has no `onExecutionResult` hook (see there). */
function fastPathIsSafe(yoga: Yoga): boolean {
  const hooks = (yoga as unknown as { onExecutionResultHooks?: unknown[] }).onExecutionResultHooks;
  return Array.isArray(hooks) && hooks.length === 0;
}

/** Query parameters of a GraphQL GET that Yoga reads as JSON (GraphQL over HTTP 6.1.1; graphql-sse). */
const JSON_GET_PARAMS = ['variables', 'extensions'] as const;

/**
 * The GraphQL error body for a GET whose `variables` or `extensions` is not JSON, or undefined when both are absent
 * or parse. Yoga's own `JSON.parse` of them threw a SyntaxError that it answered as a masked `INTERNAL_ERROR`
 * (`status: 500`) and logged as a server error (issue 26: every query parameter parsed and refused as a client
 * error). The shape is Yoga's other request errors' (`BAD_REQUEST`), with the parameter in `field`.
 */
function badJsonGetParam(req: FastifyRequest): { errors: { message: string; extensions: object }[] } | undefined {
  if (req.method !== 'GET') return undefined;
  const query = (req.query ?? {}) as Record<string, unknown>;
  for (const name of JSON_GET_PARAMS) {
    for (const value of [query[name]].flat()) {
      if (typeof value !== 'string' || value === '') continue;
      try {
        JSON.parse(value);
      } catch {
        const message = `The "${name}" query parameter must be JSON (an object, URL-encoded).`;
        return { errors: [{ message, extensions: { code: 'BAD_REQUEST', status: 400, field: name } }] };
      }
    }
  }
  return undefined;
}

/** Connection-specific header fields (RFC 9113 8.2.2), never sent on an HTTP/2 response. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/** Whether the direct path for known query documents (direct.ts) is on, per host (tests assert it is). */
export const directPathOn = new WeakMap<FastifyInstance, boolean>();

/**
 * Mounts Yoga on `http` at /graphql and /graphql/stream. Authentication stays with the host's onRequest hook
 * (src/rest/auth.ts); its 401 is answered here in GraphQL's shape.
 */
export function mountGraphQL(http: FastifyInstance, ctx: AppContext): void {
  const yoga = createGraphQLServer(ctx);
  const fastPath = fastPathIsSafe(yoga);
  const direct = fastPath
    ? DirectQueries.create(yoga, ctx, { jit: ctx.config.GRAPHQL_JIT, tracing: tracingEnabled() })
    : undefined;
  directPathOn.set(http, direct !== undefined);
  const send = async (reply: FastifyReply, response: Response) => {
    const http1 = reply.request.raw.httpVersionMajor === 1;
    response.headers.forEach((value, key) => {
      // Yoga's and graphql-sse's streams say `Connection: keep-alive`, which HTTP/2 forbids (RFC 9113 8.2.2).
      if (http1 || !CONNECTION_HEADERS.has(key)) reply.header(key, value);
    });
    const type = response.headers.get('content-type') ?? '';
    const streaming = type.includes('text/event-stream') || type.includes('multipart/');
    // A stream's connection is not reused: closing it when the stream ends lets shutdown finish at once.
    if (streaming) {
      // HTTP/2 forbids connection-specific headers (RFC 9113 8.2.2); there the stream alone ends.
      if (http1) reply.header('connection', 'close');
      return reply.status(response.status).send(response.body);
    }
    // Plain results go out as a string so hooks (idempotency) see the exact body; streams stay streams.
    const text = await response.text();
    return reply.status(requestErrorStatus(response.status, text, type)).send(text);
  };
  const yogaHandler = async (req: FastifyRequest, reply: FastifyReply) => {
    const bad = badJsonGetParam(req);
    if (bad) return reply.status(400).type('application/json; charset=utf-8').send(bad);
    return send(reply, await yoga.handleNodeRequestAndResponse(req, reply, { req, reply }));
  };
  const batchCheck = createBatchCheck(ctx);
  const graphqlHandler = async (req: FastifyRequest, reply: FastifyReply) => {
    // A batch is held to the limits as a whole before any of its operations runs (limits.ts, batchLimitError).
    const refusal = Array.isArray(req.body) ? batchCheck(req.body) : undefined;
    if (refusal) {
      const { http: _http, ...extensions } = refusal.extensions as Record<string, unknown>;
      return reply
        .status(400)
        .type('application/json; charset=utf-8')
        .send({ errors: [{ message: refusal.message, extensions: { ...extensions, status: 400 } }] });
    }
    // A known query document with a simple Accept: straight to its compiled form (direct.ts), else the fast path.
    if (
      direct &&
      req.method === 'POST' &&
      typeof req.body === 'object' &&
      req.body !== null &&
      !Array.isArray(req.body)
    ) {
      const accept = SIMPLE_ACCEPT[req.headers.accept ?? ''];
      if (accept && req.headers['content-type']?.startsWith('application/json')) {
        const answered = direct.run(req, reply, accept.mediaType, send);
        if (answered) return answered;
      }
    }
    const learn = direct ? (result: unknown, context: object) => direct.learn(req.body, result, context) : undefined;
    const response = fastPath ? await plainJsonResponse(yoga, req, reply, learn) : undefined;
    return response ? send(reply, response) : yogaHandler(req, reply);
  };
  http.route({
    url: '/graphql',
    method: ['GET', 'POST', 'OPTIONS'],
    // Stream tokens (src/domain/accounts/stream-token.ts) open subscriptions here, as `?token=` or Bearer.
    config: { allowStreamToken: true },
    schema: { hide: true },
    errorHandler: graphqlErrorHandler,
    handler: graphqlHandler,
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
  // graphql-ws on the same path, through the HTTP server's upgrade (src/graphql/ws.ts).
  mountGraphQLWs(http, ctx, yoga);
}
