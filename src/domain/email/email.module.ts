import type { AppContext } from '../../app-context.js';
import type { AreaModule } from '../../infra/area-module.js';
import { agentResponder } from './agent.responder.js';
import { identityPurger } from './identity.service.js';
import { outboundDispatcher } from './outbound.service.js';

/**
 * Sets up the email area: workers (agent responder, outbound dispatcher, identity purger). The inbound SMTP
 * listener is a front door (src/smtp/listener.ts) that the composition root starts on listen (SMTP_PORT; -1
 * disables it).
 */
export async function setupEmail(ctx: AppContext): Promise<AreaModule> {
  ctx.workers.add(agentResponder(ctx));
  ctx.workers.add(outboundDispatcher(ctx));
  ctx.workers.add(identityPurger(ctx));
  return { name: 'email' };
}
