import type { AreaModule } from '../kernel/area-module.js';
import type { DomainContext } from '../kernel/context.js';
import { fanOutHook, webhookJobKind } from './webhook.dispatcher.js';
import { countForeignKeyWebhooks } from './webhook.store.js';

/**
 * Sets up the webhooks area for one app: loads the secrets key (SECRETS_KEY, or DATA_DIR/secrets.key), adds the
 * outbox fan-out hook to the event log and the delivery job kind to the job queue.
 * @throws Error when SECRETS_KEY or the key file is malformed (the app does not start).
 */
export async function setupWebhooks(ctx: DomainContext): Promise<AreaModule> {
  if (!ctx.config.SECRETS_KEY && ctx.config.DATABASE_URL && !ctx.config.DATA_DIR.startsWith('memory://')) {
    ctx.log.warn('SECRETS_KEY is not set: webhook secrets use DATA_DIR/secrets.key; every instance needs the same key');
  }
  const keyId = ctx.secretsKeyId;
  const foreign = await countForeignKeyWebhooks(ctx.db, keyId);
  if (foreign > 0) {
    ctx.log.warn(
      { webhooks: foreign },
      'webhooks whose secret another SECRETS_KEY encrypted: this instance does not deliver for them',
    );
  }
  ctx.events.addHook(fanOutHook(ctx));
  ctx.jobs.register(webhookJobKind(ctx));
  return {
    name: 'webhooks',
    async stop() {
      await ctx.webhookTransport.close();
    },
  };
}
