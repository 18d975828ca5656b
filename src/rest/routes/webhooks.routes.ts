import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.js';

/** REST routes of the webhooks area (filled by its issue). */
export async function webhooksRoutes(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}
