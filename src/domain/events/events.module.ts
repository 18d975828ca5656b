import type { AreaModule } from '../kernel/area-module.js';
import type { DomainContext } from '../kernel/context.js';
import { endAllChangeFeeds } from './change-feed.js';
import { eventPruner } from './event-retention.js';
import { endAllStreams } from './event-stream.js';

/**
 * Sets up the events area for one app: the retention Worker, and on stop the end of every open stream (SSE and
 * GraphQL subscriptions end cleanly; the REST routes also end them in Fastify's `preClose`, before the server
 * waits for connections to close).
 */
export async function setupEvents(ctx: DomainContext): Promise<AreaModule> {
  ctx.workers.add(eventPruner(ctx));
  return {
    name: 'events',
    async stop() {
      endAllStreams(ctx);
      endAllChangeFeeds(ctx);
    },
  };
}
