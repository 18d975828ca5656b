import { describe, expect } from 'vitest';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { openSse } from '../helpers/sse.js';

async function publish(a: TestAccount, payload: Record<string, unknown> = {}): Promise<string> {
  const res = await a.request('POST', '/api/events', { eventType: 'sms.sent', payload });
  expect(res.status).toBe(202);
  return res.body.id;
}

const it = appTest({
  env: { EVENT_TAIL_CHECK_MS: '60000' },
  dropPublish: (event) => event.payload.lost === true,
});

/**
 * Live delivery when a bus publish is lost (the app drops the publish of every event whose payload has
 * `lost: true`). The tail check is set to a minute, so what these tests see comes from the gap fill that the
 * next published event triggers, not from the periodic tail check (lost-publish-tail.test.ts covers that).
 */
describe('a lost bus publish (gap fill)', () => {
  it('still reaches a connected SSE client, in order, once, on the same connection', async ({ t, a }) => {
    const es = openSse(`${t.url}/api/events?token=${a.apiKey}`, ['sms.sent']);
    await es.opened();
    const first = await publish(a);
    await es.waitFor((m) => m.length === 1);
    const lost = [await publish(a, { lost: true }), await publish(a, { lost: true })];
    const next = await publish(a);
    await es.waitFor((m) => m.length === 4);
    const last = await publish(a); // anything doubled would come before it
    await es.waitFor((m) => m.some((x) => x.id === last));
    expect(es.messages.map((m) => m.id)).toEqual([first, ...lost, next, last]);
    expect(es.requests).toEqual([null]); // no reconnect: live delivery, not replay
    es.close();
  });

  it('keeps every id once and increasing under concurrent publishers losing a third of their publishes', async ({
    t,
    a,
  }) => {
    const other = await t.newAccount(); // another account's events fill the same gaps and must not leak
    const es = openSse(`${t.url}/api/events?token=${a.apiKey}`, ['sms.sent']);
    await es.opened();
    const published: string[] = [];
    let n = 0;
    await Promise.all(
      Array.from({ length: 4 }, async (_, worker) => {
        for (let i = 0; i < 40; i++) {
          const k = n++;
          published.push(await publish(a, { k, lost: k % 3 === 0 }));
          if (worker === 0) await publish(other, { lost: i % 2 === 0 });
        }
      }),
    );
    published.push(await publish(a)); // a delivered publish after the last lost one
    await es.waitFor((m) => m.length >= published.length);
    const sorted = [...published].sort((x, y) => (BigInt(x) < BigInt(y) ? -1 : 1));
    expect(es.messages.map((m) => m.id)).toEqual(sorted);
    expect(es.messages.every((m) => m.data.customerId === a.accountId)).toBe(true);
    expect(es.requests).toEqual([null]);
    es.close();
  });

  it('does not send again what a resuming client already has when the fill crosses its cursor', async ({ t, a }) => {
    await publish(a);
    const lost = await publish(a, { lost: true });
    // Resume after the lost event (as if received through another instance): the fill that the next event
    // triggers reads `lost` again, and the stream must not send it.
    const es = openSse(`${t.url}/api/events?token=${a.apiKey}`, ['sms.sent'], { 'last-event-id': lost });
    await es.opened();
    const next = await publish(a);
    await es.waitFor((m) => m.some((x) => x.id === next));
    expect(es.messages.map((m) => m.id)).toEqual([next]);
    es.close();
  });
});
