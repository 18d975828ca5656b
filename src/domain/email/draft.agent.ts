import { DomainError } from '../errors.js';
import type { Emit } from '../events/event-log.js';
import type { DomainContext } from '../kernel/context.js';
import type { Tx } from '../kernel/db.js';
import { assertNotBlocked } from './blocklist.service.js';
import { writeDraft } from './draft.service.js';
import type { DraftRecord } from './draft.store.js';
import type { EmailIdentity } from './identity.store.js';
import { normalizeAddress } from './mail.rules.js';
import { assertNotSuppressed } from './suppressions.service.js';
import type { EmailMessage, EmailThread } from './thread.store.js';

/*
 * The agent's side of drafts (issue 21 item 3): the answer of an identity in replyMode `draft` becomes a draft a
 * person reviews, and an answer never goes to (nor is drafted for) an address the account suppressed or blocked.
 */

/**
 * Why the agent must not answer `recipient` from `identity`: `RECIPIENT_SUPPRESSED` (it bounced permanently,
 * GET /api/email/suppressions) or `RECIPIENT_BLOCKED` (an outbound block-list entry); undefined when it may.
 * The agent job is then `skipped` with that reason and `email.agent.skipped` says so.
 */
export async function answerRefusal(
  db: Tx,
  identity: Pick<EmailIdentity, 'id' | 'accountId'>,
  recipient: string,
): Promise<'RECIPIENT_SUPPRESSED' | 'RECIPIENT_BLOCKED' | undefined> {
  try {
    await assertNotSuppressed(db, identity.accountId, [recipient]);
    await assertNotBlocked(db, identity, [recipient]);
    return undefined;
  } catch (err) {
    if (err instanceof DomainError && (err.code === 'RECIPIENT_SUPPRESSED' || err.code === 'RECIPIENT_BLOCKED')) {
      return err.code;
    }
    throw err;
  }
}

/**
 * Writes the agent's answer `text` to `inbound` as a reply draft on `thread` (createdBy `agent`; To the sender,
 * `Re:` subject, In-Reply-To/References of the reply `plan`) and emits `email.draft.created`. `unauthenticated`
 * sets `reviewReason` SENDER_NOT_AUTHENTICATED, so the reviewer knows the sender may not be who it claims.
 */
export function writeAgentDraft(
  tx: Tx,
  emit: Emit,
  ctx: DomainContext,
  identity: Pick<EmailIdentity, 'id' | 'accountId'>,
  thread: EmailThread,
  plan: { subject: string; inReplyTo: string; references: string[] },
  inbound: Pick<EmailMessage, 'from'>,
  text: string,
  unauthenticated: boolean,
): Promise<DraftRecord> {
  return writeDraft(
    tx,
    emit,
    ctx,
    identity,
    {
      threadId: thread.id,
      to: [normalizeAddress(inbound.from)],
      cc: [],
      bcc: [],
      replyTo: null,
      subject: plan.subject,
      body: text,
      html: null,
      labels: [],
      inReplyTo: plan.inReplyTo,
      references: plan.references,
      sendAt: null,
    },
    { createdBy: 'agent', reviewReason: unauthenticated ? 'SENDER_NOT_AUTHENTICATED' : null },
  );
}
