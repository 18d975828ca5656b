import type { AppContext } from '../../app-context.js';
import type { AreaModule } from '../../infra/area-module.js';
import { agentResponder } from './agent.responder.js';
import { identityPurger } from './identity.service.js';
import { closeRelay, outboundDispatcher } from './outbound.service.js';
import { type SmtpListener, startSmtpListener } from './smtp.listener.js';

const listeners = new WeakMap<AppContext, SmtpListener>();

/** The port the inbound SMTP listener of this app is bound to (SMTP_PORT 0 picks one); undefined when disabled. */
export function smtpPortOf(ctx: AppContext): number | undefined {
  return listeners.get(ctx)?.port;
}

/**
 * Sets up the email area: workers (agent responder, outbound dispatcher, identity purger) and, on start, the
 * inbound SMTP listener on SMTP_PORT (-1 disables it).
 */
export async function setupEmail(ctx: AppContext): Promise<AreaModule> {
  ctx.workers.add(agentResponder(ctx));
  ctx.workers.add(outboundDispatcher(ctx));
  ctx.workers.add(identityPurger(ctx));
  return {
    name: 'email',
    async start() {
      if (ctx.config.SMTP_PORT < 0) return;
      const listener = await startSmtpListener(ctx, ctx.config.SMTP_PORT);
      listeners.set(ctx, listener);
      ctx.log.info({ port: listener.port }, `inbound SMTP listening on ${ctx.config.HOST}:${listener.port}`);
    },
    async stop() {
      await listeners.get(ctx)?.close();
      listeners.delete(ctx);
      closeRelay(ctx);
    },
  };
}
