import { describe, expect, it } from 'vitest';
import { type NewThreadMessage, SendWriteQueue } from '../../src/domain/email/outbound.store.js';
import type { EmailMessage } from '../../src/domain/email/thread.store.js';

/** A send's write with a message row good enough for the statement builder (the fake database runs nothing). */
function send(i: number): NewThreadMessage {
  const at = new Date('2026-11-27T00:00:00Z');
  const message = {
    id: `m${i}`,
    accountId: 'acc',
    identityId: 'idn',
    messageId: `<m${i}@x.example>`,
    direction: 'outbound',
    from: 'a@x.example',
    to: ['b@y.example'],
    cc: [],
    bcc: [],
    replyTo: null,
    subject: 's',
    body: 'b',
    html: null,
    extractedText: 'b',
    labels: ['sent'],
    size: 3,
    inReplyTo: null,
    references: [],
    autoSubmitted: null,
    status: 'queued',
    statusDetail: null,
    attempts: 1,
    nextAttemptAt: at,
    lockedBy: 't',
    lockedUntil: at,
    sentAt: at,
    threadId: `t${i}`,
    rawBlobId: `b${i}`,
    authentication: null,
    authenticationResults: null,
  } as unknown as EmailMessage;
  return {
    raw: Buffer.from('raw'),
    thread: { id: `t${i}`, subject: 's', participants: [], labels: ['sent'] },
    message,
    recipients: { candidates: ['b@y.example', 'y.example'], addresses: ['b@y.example'] },
  };
}

/** A database whose statements wait until released; records how many sends each statement carried. */
function fakeDatabase(fail?: (sends: number) => Error | undefined) {
  const statements: number[] = [];
  const pending: (() => void)[] = [];
  return {
    statements,
    release: () => {
      for (const r of pending.splice(0)) r();
    },
    preparedWrite: (text: string) => {
      const sends = (text.match(/INSERT INTO email_messages/g) ?? []).length;
      statements.push(sends);
      return new Promise<Record<string, unknown>[]>((resolve, reject) =>
        pending.push(() => {
          const err = fail?.(sends);
          if (err) return reject(err);
          const row: Record<string, unknown> = {};
          for (let i = 0; i < sends; i++)
            Object.assign(row, { [`n_${i}`]: 1, [`active_${i}`]: 1, [`holds_${i}`]: null });
          resolve([row]);
        }),
      );
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('SendWriteQueue (group commit of the send path, issue 24)', () => {
  it('sends that come while a statement runs go together in the next one', async () => {
    const db = fakeDatabase();
    const q = new SendWriteQueue();
    const first = q.write(db, send(0));
    const rest = [1, 2, 3].map((i) => q.write(db, send(i)));
    await tick();
    expect(db.statements).toEqual([1]);
    db.release();
    await first;
    await tick();
    expect(db.statements).toEqual([1, 3]);
    db.release();
    expect((await Promise.all(rest)).map((r) => r.written)).toEqual([true, true, true]);
  });

  it('a batch the database refused is written again send by send; a lost connection fails the batch', async () => {
    const refused = Object.assign(new Error('refused'), { code: '23505' });
    const db = fakeDatabase((sends) => (sends > 1 ? refused : undefined));
    const q = new SendWriteQueue();
    const first = q.write(db, send(0));
    const rest = [1, 2].map((i) => q.write(db, send(i)));
    db.release();
    await first;
    for (let i = 0; i < 5; i++) {
      await tick();
      db.release();
    }
    expect((await Promise.all(rest)).map((r) => r.written)).toEqual([true, true]);
    expect(db.statements).toEqual([1, 2, 1, 1]);

    const lost = Object.assign(new Error('lost'), { code: '08006' });
    const db2 = fakeDatabase((sends) => (sends > 1 ? lost : undefined));
    const q2 = new SendWriteQueue();
    const a = q2.write(db2, send(0));
    const b = [1, 2].map((i) => q2.write(db2, send(i)).catch((e: Error) => e.message));
    db2.release();
    await a;
    await tick();
    db2.release();
    expect(await Promise.all(b)).toEqual(['lost', 'lost']);
  });
});
