import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.js';

/** REST routes of the email area (filled by its issue). */
export async function emailRoutes(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}
