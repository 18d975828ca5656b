// threadUpdated / messageReceived over graphql-sse on one instance (embedded database, in-process PubSub): mail
// delivered over real SMTP reaches the identity's subscribers as the stored thread and message; another account's
// identity answers NOT_FOUND.
import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { smtpSend } from '../helpers/mail-peers.js';
import { collect, latestEventId } from './typed-subscriptions.scenario.js';

const THREAD_UPDATED = `subscription ($id: ID!, $lastEventId: String) {
  threadUpdated(identityId: $id, lastEventId: $lastEventId) { eventId eventType thread { threadId subject messageCount participants } }
}`;
const MESSAGE_RECEIVED = `subscription ($id: ID!, $lastEventId: String) {
  messageReceived(identityId: $id, lastEventId: $lastEventId) { eventId message { messageId from subject body direction status } }
}`;

const it = appTest({ env: { SMTP_PORT: '0' } });

describe('email subscriptions (one instance)', () => {
  let a: TestAccount;
  let b: TestAccount;
  let port: number;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
    b = await t.newAccount();
    port = t.app.smtpPort()!;
  });

  it('threadUpdated and messageReceived yield the stored thread and message, resumable, tenancy-scoped', async ({
    t,
  }) => {
    const created = await a.request('POST', '/api/email/identities', { localPart: `subs-${randomUUID().slice(0, 8)}` });
    expect(created.status).toBe(201);
    const box = created.body as { id: string; address: string };
    const cursor = await latestEventId(a);
    const send = (subject: string, text: string, inReplyTo?: string) =>
      smtpSend(port, { from: 'Alice <alice@example.com>', to: box.address, subject, text, inReplyTo });

    const [threads, messages] = await Promise.all([
      collect(t.url, a.apiKey, THREAD_UPDATED, { id: box.id, lastEventId: cursor }, 2, async () => {
        const first = await send('Hello subs', 'first');
        await send('Re: Hello subs', 'second', first.messageId);
      }),
      collect(t.url, a.apiKey, MESSAGE_RECEIVED, { id: box.id, lastEventId: cursor }, 2),
    ]);
    expect(threads.map((r) => r.errors)).toEqual([undefined, undefined]);
    const changes = threads.map((r) => r.data.threadUpdated);
    expect(changes.map((c) => c.eventType)).toEqual(['email.received', 'email.received']);
    expect(changes[0].thread.threadId).toBe(changes[1].thread.threadId);
    expect(changes[1].thread).toMatchObject({
      subject: 'Hello subs',
      participants: expect.arrayContaining(['alice@example.com']),
    });
    expect(changes[1].thread.messageCount).toBe(2);

    expect(messages.map((r) => r.errors)).toEqual([undefined, undefined]);
    const received = messages.map((r) => r.data.messageReceived.message);
    expect(received.map((m) => [m.subject, m.body.trim(), m.direction, m.status])).toEqual([
      ['Hello subs', 'first', 'inbound', 'received'],
      ['Re: Hello subs', 'second', 'inbound', 'received'],
    ]);

    // Resume after the first message: exactly the second one.
    const resumed = await collect(
      t.url,
      a.apiKey,
      MESSAGE_RECEIVED,
      {
        id: box.id,
        lastEventId: messages[0].data.messageReceived.eventId,
      },
      1,
    );
    expect(resumed[0].data.messageReceived.message.subject).toBe('Re: Hello subs');

    // Another account cannot watch this identity.
    for (const query of [THREAD_UPDATED, MESSAGE_RECEIVED]) {
      const denied = await collect(t.url, b.apiKey, query, { id: box.id }, 1);
      expect(denied[0].errors[0].extensions.code).toBe('NOT_FOUND');
    }
  });
});
