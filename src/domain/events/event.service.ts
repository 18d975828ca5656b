import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { parseInput } from '../validation.js';
import { isEventType } from './event-catalog.js';
import type { StoredEvent } from './event-log.js';

/** Body of POST /api/events and input of the `publishEvent` mutation. */
export const publishEventInput = z
  .object({
    eventType: z
      .string()
      .refine(isEventType, {
        message: 'unknown event type (see GET /api/events/catalog)',
        params: { code: 'UNKNOWN_EVENT_TYPE' },
      })
      .describe('A catalog event type; its channel is derived from it.'),
    payload: z.record(z.string(), z.unknown()).default({}).describe('Event-specific JSON object.'),
  })
  .strict();

/**
 * Ingest (issue 3): records one event from the telephony side of the platform in the caller's account log and
 * publishes it after commit. Requires the `events:write` scope.
 * @returns the stored event (id = log id, the SSE `id:`).
 * @throws ForbiddenError without `events:write`; ValidationError for an unknown type or a non-object payload.
 */
export async function publishEvent(ctx: AppContext, actor: Actor, input: unknown): Promise<StoredEvent> {
  requireScope(actor, 'events:write');
  const { eventType, payload } = parseInput(publishEventInput, input);
  const [event] = await ctx.events.append([{ accountId: actor.accountId, eventType, payload }]);
  return event!;
}
