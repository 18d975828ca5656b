import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.js';

/** REST routes of the compliance area (filled by its issue). */
export async function complianceRoutes(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}
