import type { Emit } from '../events/event-log.js';
import type { EmailIdentity } from './identity.store.js';

/**
 * `{event: "email.agent.skipped", data: {identityId, agentId, threadId, messageId, reason}}`: the agent will not
 * answer this mail (`messageId` = the mail's Message-ID; `reason` as on the thread's `agent.reason`).
 */
export async function emitAgentSkipped(
  emit: Emit,
  identity: Pick<EmailIdentity, 'id' | 'accountId'>,
  m: { agentId: string; threadId: string; messageId: string; reason: string },
): Promise<void> {
  await emit(identity.accountId, 'email.agent.skipped', {
    event: 'email.agent.skipped',
    data: {
      identityId: identity.id,
      agentId: m.agentId,
      threadId: m.threadId,
      messageId: m.messageId,
      reason: m.reason,
    },
  });
}
