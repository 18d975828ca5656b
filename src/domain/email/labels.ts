import { type Actor, requireScope } from '../accounts/account.service.js';
import { UnprocessableError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import type { LabelsPatchInput } from './email.schemas.js';
import { findIdentity } from './identity.service.js';
import {
  getMessageRow,
  getThread,
  getThreadRow,
  type MessageView,
  messageView,
  type ThreadSummary,
} from './thread.service.js';
import {
  inTransaction,
  messageById,
  threadById,
  writeMessageLabelsDetailed,
  writeThreadLabels,
} from './thread.store.js';

/**
 * Labels (issue 21 item 4). System labels (`received`, `sent`, `spam`, `unauthenticated`, `bounced`) are set by
 * the service only; custom labels (lower-case, at most 50 characters; the schema refuses system ones) by clients.
 * A thread's labels are the labels its messages got (merged in as they arrive) plus those added on the thread;
 * removing a label from a message leaves the thread's, removing it from the thread leaves the messages'.
 */

/** Most labels one thread or message may carry. */
export const MAX_LABELS = 100;

function applyPatch(current: string[], patch: LabelsPatchInput): string[] {
  const remove = new Set(patch.removeLabels ?? []);
  const out = current.filter((l) => !remove.has(l));
  for (const l of patch.addLabels ?? []) if (!out.includes(l) && !remove.has(l)) out.push(l);
  if (out.length > MAX_LABELS) {
    throw new UnprocessableError('TOO_MANY_LABELS', `at most ${MAX_LABELS} labels per thread or message`, 'addLabels');
  }
  return out;
}

/**
 * PATCH /api/email/identities/{id}/threads/{threadId} `{addLabels, removeLabels}`. @returns the thread detail.
 * @throws NotFoundError (field `threadId`); UnprocessableError TOO_MANY_LABELS.
 */
export async function patchThreadLabels(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  threadId: string,
  patch: LabelsPatchInput,
): Promise<ThreadSummary & { messages: MessageView[] }> {
  requireScope(actor, 'email');
  const thread = await getThreadRow(ctx, actor, identityId, threadId);
  await inTransaction(ctx.db, async (tx) => {
    const row = await threadById(tx, thread.id);
    await writeThreadLabels(tx, thread.id, applyPatch(row.labels, patch));
  });
  return getThread(ctx, actor, identityId, threadId);
}

/**
 * PATCH /api/email/identities/{id}/messages/{messageId} `{addLabels, removeLabels}`; added labels are merged into
 * the thread's too. @returns the message. @throws NotFoundError (field `messageId`); UnprocessableError TOO_MANY_LABELS.
 */
export async function patchMessageLabels(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  messageId: string,
  patch: LabelsPatchInput,
): Promise<MessageView> {
  requireScope(actor, 'email');
  await findIdentity(ctx, actor.accountId, identityId);
  const message = await getMessageRow(ctx, actor, identityId, messageId);
  const updated = await inTransaction(ctx.db, async (tx) => {
    const row = await messageById(tx, message.id);
    const labels = applyPatch(row.labels, patch);
    const thread = await threadById(tx, row.threadId);
    const threadLabels = [...new Set([...thread.labels, ...(patch.addLabels ?? [])])];
    if (threadLabels.length !== thread.labels.length) await writeThreadLabels(tx, thread.id, threadLabels);
    return writeMessageLabelsDetailed(tx, row.id, labels);
  });
  return messageView(updated);
}
