import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import { RateLimitedError } from '../domain/errors.js';

/** What the auth hook tells the failed-authentication limiter (src/rest/auth.ts). */
export interface AuthFailureGuard {
  /**
   * Counts one failed authentication for the client address.
   * @throws RateLimitedError (429 AUTH_RATE_LIMITED, `Retry-After`) once the address is past its failures: the
   *   failing request is answered 429 instead of 401. A valid credential never reaches here.
   */
  fail(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

/**
 * A batched GraphQL request (a JSON array of N operations POSTed to /graphql) counts N against its key, not 1
 * (issue 26): the per-key hook counts the request once and this counts the other N - 1 in the same counter
 * (`createRateLimit()` without options is the global limiter: the same store, key and maximum). A batch over
 * `maxBatch` is refused whole by Yoga (413) and counts once.
 * An instance hook, so it runs before the per-key hook (a route hook) and that hook's `ratelimit-remaining` already
 * counts the batch; a callback hook that calls `done` at once for anything but a batch, so every other request
 * (every REST read) pays no promise and no microtask for it (issue 24).
 * @throws RateLimitedError (429 RATE_LIMITED, with `Retry-After`) once the key's budget is spent.
 */
function countBatchedOperations(http: FastifyInstance, maxBatch: number): void {
  const sameCounter = http.createRateLimit();
  const countRest = async (request: FastifyRequest, reply: FastifyReply, operations: number): Promise<void> => {
    for (let i = 1; i < operations; i++) {
      const state = await sameCounter(request);
      if (state.isAllowed || !state.isExceeded) continue;
      const retryAfter = Math.max(1, state.ttlInSeconds);
      reply.header('ratelimit-limit', state.max).header('ratelimit-remaining', 0).header('ratelimit-reset', retryAfter);
      reply.header('retry-after', retryAfter);
      throw new RateLimitedError(
        'RATE_LIMITED',
        `This API key made more than ${state.max} GraphQL operations and requests in ${Math.round(state.timeWindow / 1000)} s (a batch counts each operation); retry in ${retryAfter} s.`,
        retryAfter,
      );
    }
  };
  http.addHook('preValidation', (request, reply, done) => {
    const body = request.body;
    if (!Array.isArray(body) || body.length < 2 || body.length > maxBatch) return done();
    if (request.method !== 'POST' || request.routeOptions.url !== '/graphql') return done();
    countRest(request, reply, body.length).then(() => done(), done);
  });
}

/**
 * Rate limits with @fastify/rate-limit (docs/operations.md "Rate limits"), counted in Redis when REDIS_URL is set
 * (shared by every instance; keys under REDIS_KEY_PREFIX + "ratelimit:") and in memory otherwise:
 * - per API key: RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW_MS for every authenticated request, counted after
 *   the key is verified (so nobody can spend another key's budget with its id and a wrong secret); each operation
 *   of a batched GraphQL request counts as one request (countBatchedOperations);
 * - per client address: AUTH_FAILURE_LIMIT failed authentications (API key or admin token) per
 *   AUTH_FAILURE_WINDOW_MS; past it every FAILING credential from that address answers 429 (with `Retry-After`)
 *   instead of 401 until the window ends, while a valid key from the same address keeps working (issue 26: one
 *   client behind a NAT or proxy sending garbage locked out every customer there). Keys carry 256 random bits, so
 *   the limit does not guard them from guessing; it slows a failing client down and bounds what its noise costs.
 * Answers carry the IETF draft headers `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds), and a
 * 429 carries `Retry-After` (seconds) and the one error body with code RATE_LIMITED or AUTH_RATE_LIMITED.
 * @returns the guard the auth hook uses (undefined when AUTH_FAILURE_LIMIT is 0).
 */
export async function installRateLimits(http: FastifyInstance, ctx: AppContext): Promise<AuthFailureGuard | undefined> {
  const { config } = ctx;
  let redis: import('ioredis').Redis | undefined;
  if (config.REDIS_URL && (config.RATE_LIMIT_MAX > 0 || config.AUTH_FAILURE_LIMIT > 0)) {
    const { Redis } = await import('ioredis');
    redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
    redis.on('error', (err) => ctx.log.warn({ err: err.message }, 'rate-limit Redis connection error'));
  }
  http.addHook('onClose', async () => {
    if (redis) await redis.quit().catch(() => redis?.disconnect());
  });
  await http.register(fastifyRateLimit, {
    global: config.RATE_LIMIT_MAX > 0,
    hook: 'preValidation',
    max: config.RATE_LIMIT_MAX || 1,
    timeWindow: config.RATE_LIMIT_WINDOW_MS,
    enableDraftSpec: true,
    ...(redis ? { redis, nameSpace: `${config.REDIS_KEY_PREFIX}ratelimit:` } : {}),
    // A store that cannot answer (Redis down) does not take the API down with it.
    skipOnError: true,
    keyGenerator: (request) => `key:${request.actor?.keyId ?? ''}`,
    // Only authenticated requests count against a key; public routes, admin calls and failures do not.
    allowList: (request) => !request.actor,
    errorResponseBuilder: (_request, context) =>
      new RateLimitedError(
        'RATE_LIMITED',
        `This API key made more than ${context.max} requests in ${Math.round(config.RATE_LIMIT_WINDOW_MS / 1000)} s; retry in ${context.after}.`,
        Math.ceil(context.ttl / 1000),
      ),
  });
  if (config.RATE_LIMIT_MAX > 0) countBatchedOperations(http, config.GRAPHQL_MAX_BATCH);
  if (config.AUTH_FAILURE_LIMIT <= 0) return undefined;

  const failures = http.createRateLimit({
    max: config.AUTH_FAILURE_LIMIT,
    timeWindow: config.AUTH_FAILURE_WINDOW_MS,
    keyGenerator: (request) => `authfail:${request.ip}`,
    // Every request counts here, authenticated or not (the per-key allowList does not apply).
    allowList: () => false,
    skipOnError: true,
  });
  return {
    async fail(request, reply) {
      const state = await failures(request);
      if (state.isAllowed || !state.isExceeded) return;
      const retryAfter = Math.max(1, state.ttlInSeconds);
      reply.header('ratelimit-limit', state.max).header('ratelimit-remaining', 0).header('ratelimit-reset', retryAfter);
      throw new RateLimitedError(
        'AUTH_RATE_LIMITED',
        `Too many failed authentications from this address; retry in ${retryAfter} s.`,
        retryAfter,
      );
    },
  };
}
