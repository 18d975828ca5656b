import type { AreaModule } from '../kernel/area-module.js';
import type { DomainContext } from '../kernel/context.js';
import { agentJobKind } from './agent.responder.js';
import { orphanBlobCleaner } from './blob-cleaner.js';
import { draftSendJobKind } from './draft.service.js';
import { identityPurger } from './identity.service.js';
import { deliverInbound } from './inbound.service.js';
import { outboundJobKind } from './outbound.service.js';
import { searchIndexer } from './search-index.js';

/**
 * Sets up the email area: the agent, outbound mail and scheduled-draft job kinds (src/infra/jobs) and the identity
 * purger, orphaned-blob cleaner and search indexer workers. The inbound SMTP
 * listener is a front door (src/smtp/listener.ts) that the composition root starts on listen (SMTP_PORT; -1
 * disables it).
 */
export async function setupEmail(ctx: DomainContext): Promise<AreaModule> {
  ctx.jobs.register(agentJobKind(ctx));
  // Local delivery (mail to identities hosted here) through a port, so outbound does not import inbound.
  ctx.jobs.register(outboundJobKind(ctx, deliverInbound));
  ctx.jobs.register(draftSendJobKind(ctx));
  ctx.workers.add(identityPurger(ctx));
  ctx.workers.add(orphanBlobCleaner(ctx));
  ctx.workers.add(searchIndexer(ctx));
  return { name: 'email' };
}
