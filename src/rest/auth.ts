import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import type { Actor } from '../domain/accounts/account.service.js';
import { authenticateStreamToken, isStreamToken } from '../domain/accounts/stream-token.js';
import { UnauthenticatedError } from '../domain/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set on every route that is not `public`. */
    actor?: Actor;
  }
  interface FastifyContextConfig {
    /** No API key needed (health, readiness, OpenAPI). */
    public?: boolean;
    /** Also accept the key as `?token=` (spec 5.2: stream connections cannot send headers). */
    allowQueryToken?: boolean;
    /**
     * A stream route: a short-lived stream token (`sbst_…`, stream-token.ts) is accepted here, as `?token=` or
     * `Authorization: Bearer`. Everywhere else a stream token answers 401.
     */
    allowStreamToken?: boolean;
  }
}

/** The authenticated caller of a route that is not public. @throws UnauthenticatedError if absent. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new UnauthenticatedError();
  return request.actor;
}

function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Spec 5.1: every request carries `Authorization: Bearer <API_KEY>`; routes marked `allowQueryToken` also accept
 * `?token=` (5.2); routes marked `allowStreamToken` accept a stream token (stream-token.ts), in the query or as
 * Bearer, and a stream token is refused on every other route. Public routes and the GraphiQL page (GET /graphql asking for HTML) need no key.
 * Failures answer 401 UNAUTHENTICATED with `WWW-Authenticate: Bearer`.
 */
export function installAuth(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('onRequest', async (request) => {
    // `routeOptions` is a getter that builds and freezes a new object on every access: read it once.
    const route = request.routeOptions;
    const config = route.config;
    if (config?.public) return;
    if (!route.url) return; // unknown route: the 404 handler answers
    if (request.method === 'GET' && route.url === '/graphql' && (request.headers.accept ?? '').includes('text/html')) {
      return; // GraphiQL page; its queries carry the key
    }
    let key = bearer(request.headers.authorization);
    const query = (request.query as Record<string, unknown> | undefined)?.token;
    if (!key && typeof query === 'string') {
      // An API key in the URL only where spec 5.2 puts it; stream routes (GraphQL too) take a stream token there.
      if (config?.allowQueryToken || (config?.allowStreamToken && isStreamToken(query))) key = query;
    }
    if (key && isStreamToken(key)) {
      if (!config?.allowStreamToken) throw new UnauthenticatedError('A stream token only opens event streams.');
      request.actor = await authenticateStreamToken(ctx, key);
      return;
    }
    request.actor = await ctx.auth.authenticate(key);
  });
}
