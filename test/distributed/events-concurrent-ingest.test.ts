import { describe, expect, it } from 'vitest';
import { accountClient, type TestAccount } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';
import { useTwoInstances } from './two-instances.js';

const byId = (x: string, y: string) => (BigInt(x) < BigInt(y) ? -1 : 1);

/**
 * Event writes are ordered per account, not globally (docs/events.md): two instances on PostgreSQL + Redis ingest
 * concurrently for several accounts at once. Every accepted event reaches the account's live subscribers on both
 * instances once and in increasing id order, and a reader paging the account's history with its cursor while the
 * writes run never misses an id below one it has already seen.
 */
describe('concurrent ingest on two instances (PostgreSQL + Redis)', () => {
  const apps = useTwoInstances();

  it('keeps each account in order with nothing lost while both instances write many accounts at once', async () => {
    const { one, two } = apps;
    const accounts: { onOne: TestAccount; onTwo: TestAccount }[] = [];
    for (let i = 0; i < 4; i++) {
      const onOne = await one.newAccount();
      accounts.push({ onOne, onTwo: accountClient(two.url, onOne.accountId, onOne.apiKey) });
    }
    // A live subscriber per account on each instance; the first account's on instance two filters a channel.
    const streams = accounts.flatMap(({ onOne, onTwo }, i) => [
      { account: onOne.accountId, es: openSse(`${one.url}/api/events?token=${onOne.apiKey}`, ['sms.sent']) },
      {
        account: onOne.accountId,
        es: openSse(`${two.url}/api/events?token=${onTwo.apiKey}${i === 0 ? '&channels=sms' : ''}`, ['sms.sent']),
      },
    ]);
    await Promise.all(streams.map((s) => s.es.opened()));

    // A history reader per account, paging with its cursor on the other instance while the writes run.
    let writing = true;
    const seenByReader = new Map<string, string[]>();
    const readers = accounts.map(async ({ onOne, onTwo }, i) => {
      const seen: string[] = [];
      seenByReader.set(onOne.accountId, seen);
      const client = i % 2 === 0 ? onTwo : onOne;
      let cursor = '0';
      for (;;) {
        const last = !writing; // one more full read after the writes ended
        const page = await client.request('GET', `/api/events/history?after=${cursor}&limit=1000`);
        expect(page.status).toBe(200);
        for (const e of page.body.events as { id: string }[]) seen.push(e.id);
        cursor = page.body.nextCursor ?? cursor;
        if (last && !page.body.hasMore) return;
        await new Promise((r) => setTimeout(r, 5));
      }
    });

    // 10 concurrent writers per instance, each spreading its events over all accounts.
    const published = new Map<string, string[]>(accounts.map((a) => [a.onOne.accountId, []]));
    const perWriter = 12;
    const writer = async (instance: 'one' | 'two', w: number) => {
      for (let k = 0; k < perWriter; k++) {
        const account = accounts[(w + k) % accounts.length]!;
        const client = instance === 'one' ? account.onOne : account.onTwo;
        const res = await client.request('POST', '/api/events', {
          eventType: 'sms.sent',
          payload: { instance, w, k },
        });
        expect(res.status).toBe(202);
        published.get(account.onOne.accountId)!.push(res.body.id);
      }
    };
    await Promise.all([
      ...Array.from({ length: 10 }, (_, w) => writer('one', w)),
      ...Array.from({ length: 10 }, (_, w) => writer('two', w)),
    ]);
    writing = false;
    await Promise.all(readers);

    const all = [...published.values()].flat();
    expect(all).toHaveLength(2 * 10 * perWriter);
    expect(new Set(all).size).toBe(all.length); // ids stay globally unique
    for (const { account, es } of streams) {
      const expected = [...published.get(account)!].sort(byId);
      await es.waitFor((m) => m.length >= expected.length);
      // Exactly the account's events, each once, in increasing id order, on the first connection.
      expect(es.messages.map((m) => m.id)).toEqual(expected);
      expect(es.messages.every((m) => m.data.customerId === account)).toBe(true);
      expect(es.requests).toEqual([null]);
    }
    for (const [account, ids] of published) {
      // The cursor reader never skipped an id: what it collected is the whole account log, in order.
      expect(seenByReader.get(account)).toEqual([...ids].sort(byId));
    }
    for (const { es } of streams) es.close();
  });
});
