import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { publishEvent, publishEventInput } from '../../domain/events/event.service.js';
import { actorOf } from '../auth.js';

/** REST routes of the events area: ingest (POST /api/events); the stream and history join here. */
export async function eventsRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/api/events',
    {
      schema: {
        tags: ['events'],
        summary: 'Publish an event into the account log (scope events:write). Answers 202 with the stored id.',
        body: publishEventInput,
        response: {
          202: z.object({ id: z.string(), channel: z.string(), eventType: z.string(), timestamp: z.string() }),
        },
      },
    },
    async (request, reply) => {
      const event = await publishEvent(ctx, actorOf(request), request.body);
      return reply
        .status(202)
        .send({ id: event.id, channel: event.channel, eventType: event.eventType, timestamp: event.timestamp });
    },
  );
}
