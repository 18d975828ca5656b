import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Http2SecureServer } from 'node:http2';
import type { Socket } from 'node:net';
import { createSecureContext } from 'node:tls';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ValidationError } from '../domain/errors.js';
import { badTextFields, jsonTextMayHoldBadText } from '../domain/validation.js';
import { mountGraphQL } from '../graphql/http.js';
import { markRequestBound, requestScope } from '../infra/logger.js';
import { tracingEnabled } from '../infra/tracing.js';
import { installAuth } from '../rest/auth.js';
import { installErrorHandling } from '../rest/errors.js';
import { installIdempotency } from '../rest/idempotency.js';
import { clientErrorHandler, frameworkErrorHandler, installInputRules, MAX_PARAM_LENGTH } from '../rest/inputs.js';
import { refuseQueryWithoutSchema } from '../rest/no-query.js';
import { adminRoutes } from '../rest/routes/admin.routes.js';
import { complianceRoutes } from '../rest/routes/compliance.routes.js';
import { contactsRoutes } from '../rest/routes/contacts.routes.js';
import { emailRoutes } from '../rest/routes/email.routes.js';
import { emailDomainRoutes } from '../rest/routes/email-domains.routes.js';
import { emailDraftRoutes } from '../rest/routes/email-drafts.routes.js';
import { emailSearchRoutes } from '../rest/routes/email-search.routes.js';
import { eventsRoutes } from '../rest/routes/events.routes.js';
import { roleMailRoutes } from '../rest/routes/role-mail.routes.js';
import { systemRoutes } from '../rest/routes/system.routes.js';
import { tcrWebhookRoutes } from '../rest/routes/tcr-webhook.routes.js';
import { webhooksRoutes } from '../rest/routes/webhooks.routes.js';
import { jsonSerializerCompiler, zodValidatorCompiler } from '../rest/zod.js';
import { registerCompression } from './compress.js';
import { registerCors } from './cors.js';
import { registerOpenApi } from './openapi.js';
import { installRateLimits } from './rate-limit.js';
import { LazyRequestLogger } from './request-logger.js';
import { installHttpSpans } from './tracing.js';

/** Logger serialisers that never print secrets: the URL loses its `token` query value, headers are not logged. */
function requestSerializer(req: { method: string; url: string; id: string }) {
  return { method: req.method, url: req.url.replace(/([?&]token=)[^&]*/g, '$1[redacted]'), id: req.id };
}

/** Whether a child logger's options set anything (Fastify passes `{}` unless a route sets a log level or serialisers). */
function hasOptions(opts: object): boolean {
  for (const _ in opts) return true;
  return false;
}

/** Fastify's trustProxy from TRUST_PROXY: `true`/`false`, a hop count, or comma-separated addresses/CIDRs. */
function trustProxy(value: string | undefined): boolean | string[] {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  // Fastify accepts a hop count at runtime (documented) though its type does not list number.
  if (/^\d+$/.test(value)) return Number(value) as unknown as boolean;
  return value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
}

/**
 * HTTP/2 streams one client connection may hold open at once (SETTINGS_MAX_CONCURRENT_STREAMS, RFC 9113 6.5.2,
 * which recommends at least 100). Each SSE or GraphQL stream holds one; a browser shares one connection per origin
 * across its tabs, so this bounds the streams a single client can have open. Node's own default is unbounded.
 */
export const HTTP2_MAX_CONCURRENT_STREAMS = 256;

/** The PEM certificate (chain) and key of the HTTP port (HTTP_TLS_CERT, HTTP_TLS_KEY). */
export interface HttpTls {
  cert: Buffer;
  key: Buffer;
}

/**
 * Reads HTTP_TLS_CERT and HTTP_TLS_KEY and checks that they make a TLS context (PEM that parses, a key that matches
 * the certificate); undefined when they are unset (plain HTTP/1.1). Called before anything is opened, so a bad file
 * stops the start at once. @throws the file system's error (ENOENT, EACCES) naming the path, or OpenSSL's.
 */
export function loadHttpTls(config: Pick<AppContext['config'], 'HTTP_TLS_CERT' | 'HTTP_TLS_KEY'>): HttpTls | undefined {
  if (!config.HTTP_TLS_CERT || !config.HTTP_TLS_KEY) return undefined;
  const pems = { cert: readFileSync(config.HTTP_TLS_CERT), key: readFileSync(config.HTTP_TLS_KEY) };
  createSecureContext(pems);
  return pems;
}

/**
 * Fastify's server options for the HTTP port: undefined (plain HTTP/1.1) without a certificate; with one, a
 * node:http2 secure server that also answers HTTP/1.1 (`allowHTTP1`, ALPN `h2` then `http/1.1`).
 */
function tlsServerOptions(tls: HttpTls | undefined) {
  if (!tls) return undefined;
  return {
    http2: true as const,
    https: {
      allowHTTP1: true,
      cert: tls.cert,
      key: tls.key,
      settings: { maxConcurrentStreams: HTTP2_MAX_CONCURRENT_STREAMS },
    },
    // Fastify then closes the HTTP/2 sessions (GOAWAY) on close; Node 22's server.close() does not.
    forceCloseConnections: true,
  };
}

/**
 * Gives an HTTP/2 secure server the `closeAllConnections()` of node:http's servers (the shutdown's last resort,
 * src/rest/routes/events.routes.ts): it destroys every TLS connection still open, HTTP/2 sessions and HTTP/1.1
 * fallbacks alike.
 */
function addCloseAllConnections(server: Http2SecureServer): void {
  const sockets = new Set<Socket>();
  server.on('secureConnection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  Object.assign(server, {
    closeAllConnections() {
      for (const socket of sockets) socket.destroy();
    },
  });
}

/**
 * The HTTP host, a front door: Fastify with the service's logger and request ids, the JSON body parser, error
 * envelope, auth, idempotency, the OpenAPI document, every REST route (src/rest/routes) and GraphQL (Yoga) at
 * `/graphql` and `/graphql/stream`. Built, not listening. With `httpTls` ({@link loadHttpTls}) it serves HTTPS with
 * HTTP/2 and HTTP/1.1 by ALPN (docs/events.md "HTTP/2"); without, plain HTTP/1.1.
 */
export async function createHttpServer(ctx: AppContext, httpTls?: HttpTls): Promise<FastifyInstance> {
  const tls = tlsServerOptions(httpTls);
  // Typed as the HTTP/1.1 instance: the routes use the request/reply API both servers share (Node's http2
  // compatibility layer), and reply.raw only for what both response classes have.
  const http = Fastify({
    ...(tls as unknown as { http2?: false }),
    loggerInstance: ctx.log as FastifyBaseLogger,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    // Over-long ids reach the routes' schemas (400 naming the parameter); router and HTTP-parser errors answer in
    // the error body with x-request-id (src/rest/inputs.ts).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    trustProxy: trustProxy(ctx.config.TRUST_PROXY),
  }) as unknown as FastifyInstance;
  if (tls) addCloseAllConnections(http.server as unknown as Http2SecureServer);
  // Per request only pino's cheapest child (bindings, no options): the request serialiser and the reqId mark live on
  // a base made once per parent logger, which each request's child inherits through pino's prototype chain. Passing
  // options (even `{}`) makes pino rebuild its formatters and copy the serialisers on every request.
  const requestBases = new WeakMap<FastifyBaseLogger, FastifyBaseLogger>();
  const requestBase = (logger: FastifyBaseLogger) => {
    let base = requestBases.get(logger);
    if (!base) {
      // Its children carry reqId in their bindings; the logger's mixin must not add a second one (src/infra/logger.ts).
      base = markRequestBound(logger.child({}, { serializers: { req: requestSerializer } }));
      requestBases.set(logger, base);
    }
    return base;
  };
  http.setChildLoggerFactory((logger, bindings, childOpts) => {
    if (!('reqId' in bindings))
      return logger.child(bindings, { ...childOpts, serializers: { req: requestSerializer } });
    const base = requestBase(logger);
    // The child itself only once a line is written (LazyRequestLogger): most requests write none.
    return hasOptions(childOpts) ? base.child(bindings, childOpts) : new LazyRequestLogger(base, bindings);
  });
  // One synchronous hook per request for the request id (header and log scope): no promise, no second hook.
  http.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    requestScope.run({ reqId: request.id }, done);
  });
  if (tracingEnabled()) installHttpSpans(http);
  // Per route pattern, never the raw URL (ids would make one series per resource). A hijacked SSE stream
  // (GET /api/events) never reaches onResponse: once its headers are written, hijackedStreamEstablished
  // (src/http/hijacked-stream.ts) counts the request with status 200 and the time to establish the stream, writes the
  // request log line, ends the span, and removes Fastify's finish/error listener from the response; the stream's life
  // is switchboard_open_streams, switchboard_streams_ended_total{reason} and the "event stream ended" line. A stream
  // request refused before that (401, 403, 400) is an ordinary request here. Callback hooks, not async ones (no
  // promise and no extra microtask per request): one per route, added as it is registered, that knows its pattern
  // (no `request.routeOptions`, a getter that builds a new object, per request), and the instance's own for
  // requests no route matched (the 404 handler runs only the instance's hooks).
  const countRequest = (request: FastifyRequest, reply: FastifyReply, route: string) =>
    ctx.metrics.httpRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  http.addHook('onResponse', (request, reply, done) => {
    if (request.is404) countRequest(request, reply, 'unmatched');
    done();
  });
  http.addHook('onRoute', (route) => {
    const pattern = route.url;
    const count = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      countRequest(request, reply, pattern);
      done();
    };
    const existing = route.onResponse;
    route.onResponse = existing ? [...(Array.isArray(existing) ? existing : [existing]), count] : [count];
  });
  // An empty body with `Content-Type: application/json` (curl -H on a DELETE, a body-less POST such as revet) is
  // "no body", not malformed JSON; anything else goes through Fastify's own (prototype-poisoning safe) parser.
  const defaultJsonParser = http.getDefaultJsonParser('error', 'error');
  http.removeContentTypeParser('application/json');
  http.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    return defaultJsonParser(request, body as string, (err, parsed) => {
      if (err) return done(err);
      // PostgreSQL cannot store U+0000 or lone surrogates faithfully: refuse them by field (badTextFields,
      // src/domain/validation.ts), walking the parsed body only when its text could hold one.
      if (!jsonTextMayHoldBadText(body as string)) return done(null, parsed);
      const bad = badTextFields(parsed);
      if (bad.length > 0) return done(new ValidationError(bad));
      return done(null, parsed);
    });
  });
  http.setValidatorCompiler(zodValidatorCompiler);
  http.setSerializerCompiler(jsonSerializerCompiler);
  installErrorHandling(http);
  installInputRules(http);
  await registerCors(http, ctx.config); // before auth: preflights need no key
  installAuth(http, ctx, await installRateLimits(http, ctx));
  installIdempotency(http, ctx);
  await registerCompression(http); // after idempotency (see there), before every route
  await registerOpenApi(http, ctx.config);

  refuseQueryWithoutSchema(http);
  await systemRoutes(http, ctx);
  await complianceRoutes(http, ctx);
  await eventsRoutes(http, ctx);
  await webhooksRoutes(http, ctx);
  await emailRoutes(http, ctx);
  await contactsRoutes(http, ctx);
  await emailDomainRoutes(http, ctx);
  await emailDraftRoutes(http, ctx);
  await emailSearchRoutes(http, ctx);
  await roleMailRoutes(http, ctx);
  await adminRoutes(http, ctx);
  await tcrWebhookRoutes(http, ctx);

  mountGraphQL(http, ctx);
  return http;
}
