import type { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { BadRequestError, NotFoundError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import { keysetPage } from '../paging.js';
import { attachmentView } from './attachment.view.js';
import type { ListThreadsInput } from './email.schemas.js';
import type { agentAnswerShape, messageShape, threadSummaryShape } from './email.shapes.js';
import { findIdentity } from './identity.service.js';
import { authenticationView } from './sender-auth.js';
import {
  type EmailMessage,
  type EmailThread,
  findMessageOfIdentity,
  type MessageWithDetails,
  threadOfIdentity,
  threadRowSelected,
  threadWindow,
  threadWithMessages,
} from './thread.store.js';

/** Spec 2.7 thread summary. */
export type ThreadSummary = z.output<typeof threadSummaryShape>;

/** State of the agent's answer to an inbound message (README "Agents"); null on outbound messages or without agent. */
export type AgentAnswerView = z.output<typeof agentAnswerShape>;

/** Spec 2.7 message plus `direction`, delivery `status`/`statusDetail` and `agent` (README "Message status"). */
export type MessageView = z.output<typeof messageShape>;

/** Converts a row. */
export function threadSummary(t: EmailThread): ThreadSummary {
  return {
    threadId: t.id,
    subject: t.subject,
    participants: t.participants,
    messageCount: t.messageCount,
    lastMessageAt: t.lastMessageAt.toISOString(),
    labels: t.labels,
  };
}

/** Converts a row (with its agent job, if any). */
export function messageView(m: MessageWithDetails): MessageView {
  const j = m.agentJob;
  return {
    messageId: m.messageId,
    threadId: m.threadId,
    from: m.from,
    to: m.to,
    subject: m.subject,
    body: m.body,
    sentAt: m.sentAt.toISOString(),
    direction: m.direction as MessageView['direction'],
    inReplyTo: m.inReplyTo,
    references: m.references,
    status: m.status,
    statusDetail: m.statusDetail,
    agent: j
      ? {
          status: j.status,
          reason: j.reason,
          attempts: j.attempts,
          lastError: j.lastError,
          replyMessageId: j.replyMessageId,
        }
      : null,
    authentication: authenticationView(m.authentication),
    cc: m.cc,
    bcc: m.direction === 'outbound' ? m.bcc : [],
    replyTo: m.replyTo,
    html: m.html,
    extractedText: m.extractedText ?? m.body,
    attachments: (m.attachments ?? []).map(attachmentView),
    labels: m.labels,
    size: m.size,
  };
}

/** Opaque cursor of a thread in the newest-activity-first order: its (lastMessageAt, id), base64url JSON. */
export function threadCursor(t: EmailThread): string {
  return Buffer.from(JSON.stringify([t.lastMessageAt.toISOString(), t.id])).toString('base64url');
}

function decodeCursor(cursor: string): { at: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const date = new Date(at);
    if (typeof id !== 'string' || Number.isNaN(date.getTime())) throw new Error('bad cursor');
    return { at: date, id };
  } catch {
    throw new BadRequestError('INVALID_CURSOR', 'cursor is not one this endpoint returned', 'cursor');
  }
}

/**
 * A keyset window over an identity's threads in the order newest activity first (lastMessageAt descending, then
 * id descending): rows after `after` and before `before` (cursors of {@link threadCursor}), at most `limit`;
 * `inverted` reads from the `before` end (Relay `last`), returning rows in the reversed order. This is the shape
 * Pothos' `resolveCursorConnection` asks for.
 */
export interface ThreadWindow {
  /** Only threads carrying this label. */
  label?: string;
  after?: string;
  before?: string;
  limit: number;
  inverted: boolean;
}

/**
 * One keyset window of the identity's threads (see {@link ThreadWindow}); the one paging rule of REST
 * {@link listThreads} and the GraphQL `EmailIdentity.threads` connection. Keyed on (lastMessageAt, id), so a thread
 * that gets new activity while a client pages moves ahead of the cursor and is never repeated on a later page.
 * @throws NotFoundError; BadRequestError INVALID_CURSOR.
 */
export async function pageThreads(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  window: ThreadWindow,
): Promise<EmailThread[]> {
  requireScope(actor, 'email');
  const identity = await findIdentity(ctx, actor.accountId, identityId);
  const after = window.after ? decodeCursor(window.after) : undefined;
  const before = window.before ? decodeCursor(window.before) : undefined;
  return threadWindow(ctx.db, identity.id, {
    label: window.label,
    after,
    before,
    limit: window.limit,
    inverted: window.inverted,
  });
}

/**
 * GET /api/email/identities/{id}/threads (spec 4.4): the identity's threads, newest activity first (lastMessageAt
 * descending, then threadId descending), keyset-paged by {@link pageThreads}. `limit` default 20, max 100.
 * `nextCursor` is an opaque string; on the last page it is the empty string "" (the spec types it as a string).
 * `query` is parsed at the door by `listThreadsInput`. @throws NotFoundError; BadRequestError INVALID_CURSOR.
 */
export async function listThreads(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  query: ListThreadsInput,
): Promise<{ threads: ThreadSummary[]; nextCursor: string }> {
  requireScope(actor, 'email');
  const { limit, cursor, label } = query;
  const page = await keysetPage(limit, (take) =>
    pageThreads(ctx, actor, identityId, { after: cursor, limit: take, inverted: false, label }),
  );
  return { threads: page.items.map(threadSummary), nextCursor: page.last ? threadCursor(page.last) : '' };
}

/**
 * GET /api/email/identities/{id}/threads/{threadId} (spec 2.7): the summary plus every message, oldest first.
 * @throws NotFoundError for an unknown identity or a thread of another identity.
 */
export async function getThread(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  threadId: string,
): Promise<ThreadSummary & { messages: MessageView[] }> {
  requireScope(actor, 'email');
  const identity = await findIdentity(ctx, actor.accountId, identityId);
  const thread = await threadWithMessages(ctx.db, identity.id, threadId);
  if (!thread) throw new NotFoundError('Thread', threadId, 'threadId');
  return { ...threadSummary(thread), messages: thread.messages.map(messageView) };
}

/**
 * The account's thread row (any identity of the account) with the adapter's `selection` (GraphQL's plugin-prisma).
 * Requires scope `email`. @throws NotFoundError when unknown or another account's.
 */
export async function findThreadRow(
  ctx: DomainContext,
  actor: Actor,
  threadId: string,
  selection: Record<string, unknown> = {},
): Promise<EmailThread> {
  requireScope(actor, 'email');
  const row = await threadRowSelected(ctx.db, actor.accountId, threadId, selection);
  if (!row) throw new NotFoundError('Thread', threadId, 'threadId');
  return row;
}

/**
 * The thread row of one identity of the account. Requires scope `email`.
 * @throws NotFoundError for an unknown identity or thread, or one of another account or identity.
 */
export async function getThreadRow(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  threadId: string,
): Promise<EmailThread> {
  requireScope(actor, 'email');
  const identity = await findIdentity(ctx, actor.accountId, identityId);
  const thread = await threadOfIdentity(ctx.db, identity.id, threadId);
  if (!thread) throw new NotFoundError('Thread', threadId, 'threadId');
  return thread;
}

/**
 * The message row of one identity of the account by its RFC 5322 Message-ID (angle brackets included). Requires
 * scope `email`. @throws NotFoundError for an unknown identity or message.
 */
export async function getMessageRow(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  messageId: string,
): Promise<EmailMessage> {
  requireScope(actor, 'email');
  const identity = await findIdentity(ctx, actor.accountId, identityId);
  const message = await findMessageOfIdentity(ctx.db, identity.id, messageId);
  if (!message) throw new NotFoundError('Message', messageId, 'messageId');
  return message;
}
