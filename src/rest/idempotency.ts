import { createHash } from 'node:crypto';
import type {
  FastifyInstance,
  onSendAsyncHookHandler,
  onSendHookHandler,
  preHandlerAsyncHookHandler,
  preHandlerHookHandler,
} from 'fastify';
import type { AppContext } from '../app-context.js';
import { BadRequestError, ConflictError, UnprocessableError } from '../domain/errors.js';
import { decryptSecret, encryptSecret } from '../infra/secrets.js';
import { PRUNE_INTERVAL_MS, periodicWorker, type Worker } from '../infra/workers.js';

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: { accountId: string; key: string };
  }
}

/** How long a key's stored response is replayed, in ms (24 h, as Stripe). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a first request holds its key before a retry may take over (the first one crashed), in ms. */
export const IDEMPOTENCY_LOCK_MS = 60 * 1000;

/**
 * `Idempotency-Key` on every authenticated POST (README "Idempotency"): the first request with a key runs and its
 * response (status and body, 4xx included) is stored; a retry with the same key, the same body and the same API key
 * gets that response again with `Idempotent-Replayed: true` and creates nothing. The same key with another method,
 * path, body or API key answers 422 IDEMPOTENCY_KEY_REUSED; a retry while the first is still running answers 409
 * IDEMPOTENCY_KEY_IN_USE. A 5xx releases the key so the retry runs again. Keys are per account, 1–255 characters,
 * kept {@link IDEMPOTENCY_TTL_MS}. Stored bodies are encrypted with the secrets key (they may hold a secret shown
 * once, such as a new webhook secret or API key).
 */
export function installIdempotency(app: FastifyInstance, ctx: AppContext): void {
  const claimKey: preHandlerAsyncHookHandler = async (request, reply) => {
    if (request.method !== 'POST' || !request.actor) return;
    const raw = request.headers['idempotency-key'];
    if (raw === undefined) return;
    const key = Array.isArray(raw) ? raw[0] : raw;
    if (!key || key.length > 255) {
      throw new BadRequestError(
        'INVALID_IDEMPOTENCY_KEY',
        'Idempotency-Key must be 1 to 255 characters.',
        'Idempotency-Key',
      );
    }
    const accountId = request.actor.accountId;
    const path = request.url.split('?')[0] ?? request.url;
    const requestHash = createHash('sha256')
      // The key id is part of the request: a stored response (which may hold a secret) is only ever replayed to
      // the API key that caused it, never to another key of the account with other scopes.
      .update(`${request.actor.keyId} ${request.method} ${path}\n${JSON.stringify(request.body ?? null)}`)
      .digest('hex');
    const now = ctx.clock.now();
    const lockedUntil = new Date(now.getTime() + IDEMPOTENCY_LOCK_MS);
    const created = await ctx.db.idempotencyRecord.createMany({
      data: [{ accountId, key, method: request.method, path, requestHash, lockedUntil, createdAt: now }],
      skipDuplicates: true,
    });
    if (created.count === 1) {
      request.idempotency = { accountId, key };
      return;
    }
    const existing = await ctx.db.idempotencyRecord.findUnique({ where: { accountId_key: { accountId, key } } });
    if (!existing) throw new ConflictError('IDEMPOTENCY_KEY_IN_USE', 'Retry this request.', 'Idempotency-Key');
    if (existing.requestHash !== requestHash) {
      throw new UnprocessableError(
        'IDEMPOTENCY_KEY_REUSED',
        'This Idempotency-Key was used with a different request; use a new key for a new request.',
        'Idempotency-Key',
      );
    }
    if (existing.statusCode !== null) {
      let body: string;
      try {
        body = existing.responseBody ? decryptSecret(ctx.secretsKey, existing.responseBody, `${accountId}:${key}`) : '';
      } catch {
        throw new UnprocessableError(
          'IDEMPOTENCY_RECORD_UNREADABLE',
          'The stored response for this Idempotency-Key was encrypted with another SECRETS_KEY; use a new key.',
          'Idempotency-Key',
        );
      }
      reply
        .status(existing.statusCode)
        .header('content-type', 'application/json; charset=utf-8')
        .header('idempotent-replayed', 'true')
        .send(body);
      return reply;
    }
    if (existing.lockedUntil && existing.lockedUntil > now) {
      throw new ConflictError(
        'IDEMPOTENCY_KEY_IN_USE',
        'A request with this Idempotency-Key is still being processed; retry later.',
        'Idempotency-Key',
      );
    }
    // The first request died mid-way: take the key over.
    const taken = await ctx.db.idempotencyRecord.updateMany({
      where: { accountId, key, statusCode: null, lockedUntil: existing.lockedUntil },
      data: { lockedUntil },
    });
    if (taken.count !== 1) {
      throw new ConflictError('IDEMPOTENCY_KEY_IN_USE', 'Retry this request.', 'Idempotency-Key');
    }
    request.idempotency = { accountId, key };
  };

  const settleKey: onSendAsyncHookHandler = async (request, reply, payload) => {
    const claim = request.idempotency;
    if (!claim) return payload;
    request.idempotency = undefined;
    const where = { accountId_key: { accountId: claim.accountId, key: claim.key } };
    if (reply.statusCode >= 500 || typeof payload !== 'string') {
      await ctx.db.idempotencyRecord.delete({ where }).catch(() => undefined);
    } else {
      await ctx.db.idempotencyRecord.update({
        where,
        // Encrypted: responses may carry a secret shown once (a webhook secret, an API key).
        data: {
          statusCode: reply.statusCode,
          responseBody: encryptSecret(ctx.secretsKey, payload, `${claim.accountId}:${claim.key}`),
          lockedUntil: null,
        },
      });
    }
    return payload;
  };

  // Callback hooks that answer a request without a key (nearly all) at once: no promise and no microtask per POST
  // (every GraphQL read is one). With a key they return the async path's promise, which Fastify's hook runners wait
  // on exactly as on an async hook's.
  const claim: preHandlerHookHandler = (request, reply, done) => {
    if (request.headers['idempotency-key'] === undefined) return done();
    return claimKey.call(app, request, reply);
  };
  const settle: onSendHookHandler = (request, reply, payload, done) => {
    if (!request.idempotency) return done(null, payload);
    return settleKey.call(app, request, reply, payload);
  };

  // Only POST routes can carry an idempotent request: the hooks go on those routes alone, so reads pay nothing
  // for them (issue 9). Routes registered after this call are covered (all of them: see src/http/server.ts).
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('POST')) return;
    route.preHandler = [...asArray(route.preHandler), claim];
    route.onSend = [...asArray(route.onSend), settle];
  });
}

function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** Deletes idempotency records older than {@link IDEMPOTENCY_TTL_MS}; once a minute at most (PRUNE_INTERVAL_MS). */
export function idempotencyPruner(ctx: AppContext): Worker {
  return periodicWorker('idempotency-pruner', ctx.clock, PRUNE_INTERVAL_MS, async () => {
    const cutoff = new Date(ctx.clock.now().getTime() - IDEMPOTENCY_TTL_MS);
    await ctx.db.idempotencyRecord.deleteMany({ where: { createdAt: { lt: cutoff } } });
    return 0; // pruning never counts as pending work, so drain() settles
  });
}
