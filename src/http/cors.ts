// CORS for the whole service (REST, GraphQL, SSE) through @fastify/cors. Origins come from CORS_ORIGINS (default:
// none, so no Access-Control-* headers at all). Preflights (OPTIONS with Access-Control-Request-Method) are
// answered by the plugin's onRequest hook before authentication, so they need no API key.
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';

/** Headers a browser may read from responses (request id, paging and SSE resume hints). */
const EXPOSED_HEADERS = ['x-request-id', 'www-authenticate', 'retry-after', 'location', 'idempotent-replayed'];

/**
 * Registers @fastify/cors on `http` when CORS_ORIGINS lists any origin; must run before the auth hook is added so
 * preflights are answered first. Credentials (cookies) are not allowed: the API authenticates with a bearer key.
 */
export async function registerCors(http: FastifyInstance, config: Pick<Config, 'CORS_ORIGINS'>): Promise<void> {
  const origins = config.CORS_ORIGINS;
  if (origins.length === 0) return;
  await http.register(cors, {
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['authorization', 'content-type', 'idempotency-key', 'last-event-id', 'x-request-id', 'accept'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    strictPreflight: false,
  });
}
