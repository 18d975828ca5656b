import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.js';

/** REST routes of the events area (filled by its issue). */
export async function eventsRoutes(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}
