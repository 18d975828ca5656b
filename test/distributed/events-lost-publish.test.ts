import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountClient, startApp, type TestAccount, type TestApp } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';

async function publish(a: TestAccount, payload: Record<string, unknown> = {}): Promise<string> {
  const res = await a.request('POST', '/api/events', { eventType: 'sms.sent', payload });
  expect(res.status).toBe(202);
  return res.body.id;
}

const byId = (x: string, y: string) => (BigInt(x) < BigInt(y) ? -1 : 1);

/**
 * Two instances on PostgreSQL + Redis where instance A's Redis publish is lost for some events (A drops the
 * publish of events whose payload has `lost: true`) while B publishes later ones: a subscriber on B still gets
 * every id once, in increasing order, on the same connection.
 */
describe('lost Redis publishes across two instances', () => {
  let a: TestApp;
  let b: TestApp;
  const prefix = `sb-test-${randomUUID()}:`;
  beforeAll(async () => {
    a = await startApp({
      env: { REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_KEY_PREFIX: prefix },
      dropPublish: (event) => event.payload.lost === true,
    });
    b = await startApp({
      env: { REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_KEY_PREFIX: prefix, EVENT_TAIL_CHECK_MS: '200' },
    });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('fills the gap before a later event of the other instance, and delivers a lost tail', async () => {
    const onA = await a.newAccount();
    const onB = accountClient(b.url, onA.accountId, onA.apiKey);
    const es = openSse(`${b.url}/api/events?token=${onB.apiKey}`, ['sms.sent']);
    await es.opened();
    const first = await publish(onA);
    await es.waitFor((m) => m.length === 1);
    const lost = [await publish(onA, { lost: true }), await publish(onA, { lost: true })];
    const fromB = await publish(onB);
    await es.waitFor((m) => m.some((x) => x.id === fromB));
    const lostTail = await publish(onA, { lost: true }); // nothing follows it: the tail check on B finds it
    await es.waitFor((m) => m.some((x) => x.id === lostTail));
    const last = await publish(onB);
    await es.waitFor((m) => m.some((x) => x.id === last));
    expect(es.messages.map((m) => m.id)).toEqual([first, ...lost, fromB, lostTail, last]);
    expect(es.requests).toEqual([null]);
    es.close();
  });

  it('keeps every id once and increasing while both instances publish concurrently and A loses half', async () => {
    const onA = await a.newAccount();
    const onB = accountClient(b.url, onA.accountId, onA.apiKey);
    const es = openSse(`${b.url}/api/events?token=${onB.apiKey}&channels=sms`, ['sms.sent']);
    await es.opened();
    const published: string[] = [];
    await Promise.all([
      (async () => {
        for (let i = 0; i < 60; i++) published.push(await publish(onA, { i, lost: i % 2 === 0 }));
      })(),
      (async () => {
        for (let i = 0; i < 60; i++) published.push(await publish(onB, { i }));
      })(),
    ]);
    await es.waitFor((m) => m.length >= published.length);
    const last = await publish(onB); // anything doubled would come before it
    await es.waitFor((m) => m.some((x) => x.id === last));
    expect(es.messages.map((m) => m.id)).toEqual([...published.sort(byId), last]);
    expect(es.requests).toEqual([null]);
    es.close();
  });
});
