import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { pendingMigrations } from '../../infra/migrate.js';

/**
 * GET /healthz (alive), GET /readyz (database reachable and migrations applied), GET /metrics (Prometheus,
 * docs/operations.md), GET /openapi.json.
 */
export async function systemRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/healthz',
    {
      config: { public: true },
      schema: {
        operationId: 'getHealth',
        tags: ['operations'],
        summary: 'Liveness: the process answers.',
        response: { 200: z.object({ status: z.literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  r.get(
    '/readyz',
    {
      config: { public: true },
      schema: {
        operationId: 'getReadiness',
        tags: ['operations'],
        summary:
          'Readiness: the database answers with every migration applied, and the event bus (Redis with REDIS_URL) is ' +
          'connected; 503 naming what is not.',
        response: {
          200: z.object({
            status: z.literal('ready'),
            database: z.string().describe('`pglite` or `postgres`'),
            bus: z.string().describe('`in-process` or `redis`'),
          }),
          503: z.object({
            status: z.literal('unavailable'),
            reason: z.string().describe('What is not ready, e.g. `event bus (REDIS_URL): not connected`.'),
            database: z.enum(['up', 'down']),
            bus: z.enum(['up', 'down']),
          }),
        },
      },
    },
    async (_request, reply) => {
      const reasons: string[] = [];
      let database: 'up' | 'down' = 'up';
      try {
        const pending = await pendingMigrations(ctx.database);
        if (pending.length > 0) {
          database = 'down';
          reasons.push(`pending migrations: ${pending.join(', ')}`);
        }
      } catch (err) {
        database = 'down';
        reasons.push(`database${ctx.database.kind === 'postgres' ? ' (DATABASE_URL)' : ''}: ${(err as Error).message}`);
      }
      const busHealth = ctx.bus.health();
      if (!busHealth.up) reasons.push('event bus (REDIS_URL): not connected');
      if (reasons.length > 0) {
        return reply.status(503).send({
          status: 'unavailable' as const,
          reason: reasons.join('; '),
          database,
          bus: busHealth.up ? ('up' as const) : ('down' as const),
        });
      }
      return { status: 'ready' as const, database: ctx.database.kind, bus: busHealth.kind };
    },
  );
  r.get(
    '/metrics',
    {
      config: { metrics: true },
      schema: {
        operationId: 'getMetrics',
        tags: ['operations'],
        response: {
          200: {
            description: 'Prometheus text exposition format 0.0.4.',
            content: { 'text/plain': { schema: z.string().describe('Metric families, one sample per line.') } },
          },
        },
        summary:
          'Prometheus metrics (text format 0.0.4). Needs METRICS_TOKEN or an admin token unless METRICS_PUBLIC=true.',
      },
    },
    async (_request, reply) => {
      const { contentType, body } = await ctx.metrics.render();
      return reply.type(contentType).send(body);
    },
  );
  app.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
}
