import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import type { Actor } from '../domain/accounts/account.service.js';
import { authenticateStreamToken, isStreamToken } from '../domain/accounts/stream-token.js';
import { DomainError, UnauthenticatedError } from '../domain/errors.js';
import type { AuthFailureGuard } from '../http/rate-limit.js';

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
    /** Operator route (/admin/*): needs an admin token (ADMIN_TOKEN or the local token), not an API key. */
    admin?: boolean;
    /** GET /metrics: METRICS_TOKEN or an admin token, or nothing when METRICS_PUBLIC is true. */
    metrics?: boolean;
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
 * Bearer, and a stream token is refused on every other route. Public routes and the GraphiQL page (GET /graphql
 * asking for HTML) need no key. Routes marked `admin` take an admin token instead (docs/operations.md). Failures
 * answer 401 UNAUTHENTICATED with `WWW-Authenticate: Bearer` and count against the client address (`guard`,
 * src/http/rate-limit.ts): past its limit a failing credential answers 429 AUTH_RATE_LIMITED instead; a valid one
 * is never held back by its address's failures (issue 26).
 */
export function installAuth(app: FastifyInstance, ctx: AppContext, guard?: AuthFailureGuard): void {
  /** The rest of the check, for a credential that is not an API key verified in the last seconds. */
  const slowPath = async (request: FastifyRequest, reply: FastifyReply, config: FastifyContextConfig | undefined) => {
    try {
      if (config?.metrics) {
        ctx.admin.verify(bearer(request.headers.authorization), 'metrics');
        return;
      }
      if (config?.admin) {
        ctx.admin.verify(bearer(request.headers.authorization));
        return;
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
    } catch (err) {
      if (err instanceof DomainError && err.status === 401) await guard?.fail(request, reply);
      throw err;
    }
  };
  // One callback hook per route, added as the route is registered (first of its onRequest hooks, after the
  // instance's: request id, tracing, CORS). What the route's config asks for is worked out on its first request, not
  // through `request.routeOptions` (a getter that builds a new object) on every one; not at registration either,
  // since onRoute hooks registered later may still change the config (the API reference marks its routes public,
  // src/http/openapi.ts). Unknown routes get no hook (the 404 handler answers). An API key in the Authorization
  // header that was verified in the last seconds (the common request) is answered synchronously, with no promise;
  // everything else takes the slow path above.
  app.addHook('onRoute', (route) => {
    let plan: { skip: boolean; graphiql: boolean; apiKey: boolean; config?: FastifyContextConfig } | undefined;
    const authenticate = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
      if (plan === undefined) {
        const config = route.config as FastifyContextConfig | undefined;
        plan = {
          skip: !!config?.public || (!!config?.metrics && ctx.config.METRICS_PUBLIC),
          // GET asking for HTML: the GraphiQL page, whose queries carry the key.
          graphiql: route.url === '/graphql',
          apiKey: !config?.metrics && !config?.admin,
          config,
        };
      }
      if (plan.skip) return done();
      if (plan.graphiql && request.method === 'GET' && (request.headers.accept ?? '').includes('text/html')) {
        return done();
      }
      if (plan.apiKey) {
        const key = bearer(request.headers.authorization);
        const actor = key && !isStreamToken(key) ? ctx.auth.cached(key) : undefined;
        if (actor) {
          request.actor = actor;
          return done();
        }
      }
      slowPath(request, reply, plan.config).then(() => done(), done);
    };
    const existing = route.onRequest;
    route.onRequest = existing ? [authenticate, ...(Array.isArray(existing) ? existing : [existing])] : [authenticate];
  });
}
