import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../domain/errors.js';
import { isEmptyQuery } from './inputs.js';

/** Path prefixes of the REST API (GraphQL, docs and probes read their own query strings, or none). */
const API_PREFIXES = ['/api/', '/compliance/', '/admin/'];

/**
 * Unknown query parameters answer 400 on every route (issue 22, docs/conventions.md): a route that declares a
 * `querystring` schema refuses unknown names through it (`.strict()`); this hook gives every other REST route the
 * same answer, `400 VALIDATION_FAILED` with one `UNKNOWN_FIELD` detail per name (`query.<name>`), so
 * `GET /api/webhooks/{id}?limit=1` is refused instead of silently ignored. Install before the routes.
 */
export function refuseQueryWithoutSchema(http: FastifyInstance): void {
  http.addHook('onRoute', (route) => {
    const schema = route.schema as { querystring?: unknown } | undefined;
    if (schema?.querystring || !API_PREFIXES.some((p) => route.url.startsWith(p))) return;
    // A callback hook (no promise per request): most requests have no query string at all.
    const check = (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
      if (isEmptyQuery(request.query)) return done();
      const names = Object.keys(request.query as Record<string, unknown>);
      done(
        new ValidationError(
          names.map((name) => ({
            code: 'UNKNOWN_FIELD',
            field: `query.${name}`,
            message: 'is not a query parameter of this operation',
          })),
        ),
      );
    };
    const existing = route.preValidation;
    route.preValidation = existing ? [...(Array.isArray(existing) ? existing : [existing]), check] : [check];
  });
}
