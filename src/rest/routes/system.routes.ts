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
        tags: ['operations'],
        summary: 'Readiness: the database answers and every migration is applied (503 otherwise).',
        response: {
          200: z.object({ status: z.literal('ready'), database: z.string() }),
          503: z.object({ status: z.literal('unavailable'), reason: z.string() }),
        },
      },
    },
    async (_request, reply) => {
      try {
        const pending = await pendingMigrations(ctx.database);
        if (pending.length > 0) {
          return reply
            .status(503)
            .send({ status: 'unavailable' as const, reason: `pending migrations: ${pending.join(', ')}` });
        }
        return { status: 'ready' as const, database: ctx.database.kind };
      } catch (err) {
        return reply
          .status(503)
          .send({ status: 'unavailable' as const, reason: `database: ${(err as Error).message}` });
      }
    },
  );
  app.get(
    '/metrics',
    {
      config: { metrics: true },
      schema: {
        tags: ['operations'],
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
