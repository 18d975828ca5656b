// Two replies to one thread committing one after the other while both statements are already running: the second
// must merge its participants and labels into the thread as the first left it, not into the copy it read before
// (a lost update). Made deterministic with a second session holding the account's event-order row, which every
// delivery's statement waits for after it has read the thread. PostgreSQL only: PGlite has one connection, so
// deliveries never overlap there.
import nodemailer from 'nodemailer';
import pg from 'pg';
import { expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { type TestAccount, type TestApp, testDatabaseUrl, usingPostgres } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

// A manual clock, so a test can give the reply that commits first the later time.
const clock = new ManualClock(new Date('2026-11-27T12:00:00.000Z'));
const it = appTest({ clock });

/** Polls `read` (every 10 ms) until it returns true. */
async function until(read: () => Promise<boolean>): Promise<void> {
  while (!(await read())) await new Promise((resolve) => setTimeout(resolve, 10));
}

/**
 * A new identity of `a` and a function that delivers a one-line mail to it over the app's SMTP port (optionally as a
 * reply to `inReplyTo`), resolving with nodemailer's answer.
 */
async function mailbox(t: Pick<TestApp, 'app'>, a: Pick<TestAccount, 'request'>, localPart: string, subject: string) {
  const box = await a.request('POST', '/api/email/identities', { localPart: `${localPart}${Date.now().toString(36)}` });
  expect(box.status).toBe(201);
  const smtp = nodemailer.createTransport({ host: '127.0.0.1', port: t.app.smtpPort()!, ignoreTLS: true });
  const send = (from: string, messageId: string, inReplyTo?: string) =>
    smtp.sendMail({
      envelope: { from, to: [box.body.address] },
      raw:
        `From: ${from}\r\nTo: ${box.body.address}\r\nSubject: ${subject}\r\nMessage-ID: ${messageId}\r\n` +
        (inReplyTo ? `In-Reply-To: ${inReplyTo}\r\n` : '') +
        '\r\nhello\r\n',
    });
  return { box, send };
}

it.skipIf(!usingPostgres)(
  'two replies to one thread that commit while both are in flight keep both senders as participants (PostgreSQL)',
  async ({ t, a }) => {
    const { box, send } = await mailbox(t, a, 'race', 'Plans');
    const first = `<first-${Date.now()}@race.example>`;
    expect(String((await send('alice@race.example', first)).response)).toMatch(/^250/);

    const url = await testDatabaseUrl();
    const holder = new pg.Client({ connectionString: url });
    const watch = new pg.Client({ connectionString: url });
    await Promise.all([holder.connect(), watch.connect()]);
    try {
      const holderPid = (await holder.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM event_account_seqs WHERE account_id = $1 FOR UPDATE', [a.accountId]);
      const replies = [
        send('bob@race.example', `<bob-${Date.now()}@race.example>`, first),
        send('carol@race.example', `<carol-${Date.now()}@race.example>`, first),
      ];
      // Both replies' statements have read the thread and wait for the account's row: the first on the holder, the
      // second on the first (PostgreSQL queues a row's waiters behind the first one's tuple lock).
      await until(async () => {
        const { rows } = await watch.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1
              AND cardinality(pg_blocking_pids(pid)) > 0`,
          [holderPid],
        );
        return (rows[0] as { n: number }).n >= 2;
      });
      await holder.query('ROLLBACK');
      for (const info of await Promise.all(replies)) expect(String(info.response)).toMatch(/^250/);
    } finally {
      await Promise.all([holder.end(), watch.end()]);
    }
    const list = await a.request('GET', `/api/email/identities/${box.body.id}/threads`);
    expect(list.status).toBe(200);
    expect(list.body.threads).toHaveLength(1);
    const [thread] = list.body.threads as { messageCount: number; participants: string[] }[];
    expect(thread!.messageCount).toBe(3);
    expect([...thread!.participants].sort()).toEqual(
      ['alice@race.example', 'bob@race.example', 'carol@race.example', box.body.address].sort(),
    );
  },
);

it.skipIf(!usingPostgres)(
  "the thread's lastMessageAt is the newest reply's time even when an older reply commits last (PostgreSQL)",
  async ({ t, a }) => {
    const { box, send } = await mailbox(t, a, 'late', 'Times');
    const t0 = Date.parse('2026-11-27T13:00:00.000Z');
    clock.set(new Date(t0));
    const first = `<first-${Date.now()}@late.example>`;
    expect(String((await send('alice@late.example', first)).response)).toMatch(/^250/);

    const url = await testDatabaseUrl();
    const holder = new pg.Client({ connectionString: url });
    const watch = new pg.Client({ connectionString: url });
    await Promise.all([holder.connect(), watch.connect()]);
    const waiting = async () => {
      const { rows } = await watch.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND cardinality(pg_blocking_pids(pid)) > 0`,
      );
      return (rows[0] as { n: number }).n;
    };
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM event_account_seqs WHERE account_id = $1 FOR UPDATE', [a.accountId]);
      // The newer reply is received first and so commits first; the older one commits after it.
      clock.set(new Date(t0 + 120_000));
      const newer = send('bob@late.example', `<bob-${Date.now()}@late.example>`, first);
      await until(async () => (await waiting()) >= 1);
      clock.set(new Date(t0 + 60_000));
      const older = send('carol@late.example', `<carol-${Date.now()}@late.example>`, first);
      await until(async () => (await waiting()) >= 2);
      await holder.query('ROLLBACK');
      for (const info of await Promise.all([newer, older])) expect(String(info.response)).toMatch(/^250/);
    } finally {
      await Promise.all([holder.end(), watch.end()]);
    }
    const list = await a.request('GET', `/api/email/identities/${box.body.id}/threads`);
    expect(list.status).toBe(200);
    const [thread] = list.body.threads as { messageCount: number; lastMessageAt: string }[];
    expect(thread!.messageCount).toBe(3);
    expect(thread!.lastMessageAt).toBe(new Date(t0 + 120_000).toISOString());
  },
);
