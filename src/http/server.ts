import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ValidationError } from '../domain/errors.js';
import { mountGraphQL } from '../graphql/http.js';
import { requestScope } from '../infra/logger.js';
import { installAuth } from '../rest/auth.js';
import { installErrorHandling } from '../rest/errors.js';
import { installIdempotency } from '../rest/idempotency.js';
import { complianceRoutes } from '../rest/routes/compliance.routes.js';
import { emailRoutes } from '../rest/routes/email.routes.js';
import { eventsRoutes } from '../rest/routes/events.routes.js';
import { systemRoutes } from '../rest/routes/system.routes.js';
import { webhooksRoutes } from '../rest/routes/webhooks.routes.js';
import { jsonSerializerCompiler, zodValidatorCompiler } from '../rest/zod.js';
import { registerCors } from './cors.js';
import { registerOpenApi } from './openapi.js';

/** Dotted paths of every string (or key) in a parsed JSON body that contains U+0000, at most 20. */
function fieldsWithNul(value: unknown, path: string[] = [], out: string[] = []): string[] {
  if (out.length >= 20) return out;
  if (typeof value === 'string') {
    if (value.includes('\u0000')) out.push(path.join('.') || '(body)');
  } else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) fieldsWithNul(v, [...path, String(i)], out);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) out.push([...path, k.replaceAll('\u0000', '\\u0000')].join('.'));
      else fieldsWithNul(v, [...path, k], out);
    }
  }
  return out;
}

/** Logger serialisers that never print secrets: the URL loses its `token` query value, headers are not logged. */
function requestSerializer(req: { method: string; url: string; id: string }) {
  return { method: req.method, url: req.url.replace(/([?&]token=)[^&]*/g, '$1[redacted]'), id: req.id };
}

/**
 * The HTTP host, a front door: Fastify with the service's logger and request ids, the JSON body parser, error
 * envelope, auth, idempotency, the OpenAPI document, every REST route (src/rest/routes) and GraphQL (Yoga) at
 * `/graphql` and `/graphql/stream`. Built, not listening.
 */
export async function createHttpServer(ctx: AppContext): Promise<FastifyInstance> {
  const http = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
  });
  http.setChildLoggerFactory((logger, bindings, childOpts) =>
    logger.child(bindings, { ...childOpts, serializers: { req: requestSerializer } }),
  );
  // One synchronous hook per request for the request id (header and log scope): no promise, no second hook.
  http.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    requestScope.run({ reqId: request.id }, done);
  });
  // An empty body with `Content-Type: application/json` (curl -H on a DELETE, a body-less POST such as revet) is
  // "no body", not malformed JSON; anything else goes through Fastify's own (prototype-poisoning safe) parser.
  const defaultJsonParser = http.getDefaultJsonParser('error', 'error');
  http.removeContentTypeParser('application/json');
  http.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    return defaultJsonParser(request, body as string, (err, parsed) => {
      if (err) return done(err);
      // PostgreSQL text and jsonb cannot hold U+0000: refuse it by field instead of failing later with a 500.
      const fields = fieldsWithNul(parsed);
      if (fields.length > 0) {
        return done(
          new ValidationError(
            fields.map((field) => ({ code: 'INVALID_CHARACTER', field, message: 'must not contain U+0000 (NUL)' })),
          ),
        );
      }
      return done(null, parsed);
    });
  });
  http.setValidatorCompiler(zodValidatorCompiler);
  http.setSerializerCompiler(jsonSerializerCompiler);
  installErrorHandling(http);
  await registerCors(http, ctx.config); // before auth: preflights need no key
  installAuth(http, ctx);
  installIdempotency(http, ctx);
  await registerOpenApi(http, ctx.config);

  await systemRoutes(http, ctx);
  await complianceRoutes(http, ctx);
  await eventsRoutes(http, ctx);
  await webhooksRoutes(http, ctx);
  await emailRoutes(http, ctx);

  mountGraphQL(http, ctx);
  return http;
}
