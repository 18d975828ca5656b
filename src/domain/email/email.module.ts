import type { AreaModule } from '../kernel/area-module.js';
import type { DomainContext } from '../kernel/context.js';
import { agentJobKind } from './agent.responder.js';
import { identityPurger } from './identity.service.js';
import { deliverInbound } from './inbound.service.js';
import { outboundJobKind } from './outbound.service.js';

/**
 * Sets up the email area: the agent and outbound mail job kinds (src/infra/jobs) and the identity purger worker. The inbound SMTP
 * listener is a front door (src/smtp/listener.ts) that the composition root starts on listen (SMTP_PORT; -1
 * disables it).
 */
export async function setupEmail(ctx: DomainContext): Promise<AreaModule> {
  ctx.jobs.register(agentJobKind(ctx));
  // Local delivery (mail to identities hosted here) through a port, so outbound does not import inbound.
  ctx.jobs.register(outboundJobKind(ctx, deliverInbound));
  ctx.workers.add(identityPurger(ctx));
  return { name: 'email' };
}
