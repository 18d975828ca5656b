import { v7 as uuidv7 } from 'uuid';
import type { EmailIdentity, EmailThread } from '../../generated/prisma/client.js';
import type { Tx } from '../kernel/db.js';
import { mergeParticipants } from './mail.rules.js';

/*
 * The store of threads, messages, their attachments' metadata and labels: every Prisma call and SQL text about
 * them (issue 23). Functions take the transaction (`Tx`) or the client they run on, plain parameters, and return
 * rows.
 */

/**
 * The thread upsert of every stored message, inbound or outbound: `thread` gets one more message (count, last
 * activity, participants merged); with no thread, a new one is created with `subject`.
 * @returns the thread id.
 */
export async function addToThread(
  tx: Tx,
  identity: EmailIdentity,
  thread: Pick<EmailThread, 'id' | 'participants' | 'labels'> | null,
  m: { subject: string; participants: string[]; now: Date; labels?: string[] },
): Promise<string> {
  if (thread) {
    await tx.emailThread.update({
      where: { id: thread.id },
      data: {
        messageCount: { increment: 1 },
        lastMessageAt: m.now,
        participants: mergeParticipants(thread.participants, m.participants),
        labels: [...new Set([...thread.labels, ...(m.labels ?? [])])],
      },
    });
    return thread.id;
  }
  const id = uuidv7();
  await tx.emailThread.create({
    data: {
      id,
      accountId: identity.accountId,
      identityId: identity.id,
      subject: m.subject,
      participants: mergeParticipants([], m.participants),
      labels: [...new Set(m.labels ?? [])],
      messageCount: 1,
      lastMessageAt: m.now,
      createdAt: m.now,
    },
  });
  return id;
}

/**
 * The identity's thread holding any of `refs`, updated with one more message; otherwise a new thread.
 * @returns the thread id.
 */
export async function threadFor(
  tx: Tx,
  identity: EmailIdentity,
  refs: string[],
  m: { subject: string; participants: string[]; now: Date; labels?: string[] },
): Promise<string> {
  const parent =
    refs.length > 0
      ? await tx.emailMessage.findFirst({
          where: { identityId: identity.id, messageId: { in: refs } },
          orderBy: { sentAt: 'desc' },
          select: { threadId: true },
        })
      : null;
  const thread = parent ? await tx.emailThread.findUniqueOrThrow({ where: { id: parent.threadId } }) : null;
  return addToThread(tx, identity, thread, m);
}
