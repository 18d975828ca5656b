// The one paging rule on the webhook lists (issue 22, item 6): GET /api/webhooks and GET /api/webhooks/{id}/logs take
// `limit` (1–200, default 50) and `cursor`, answer `{<items>, nextCursor}` with nextCursor null on the last page,
// and refuse unknown query parameters; logs are newest first and every older entry is reachable.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { appTest } from '../helpers/fixture.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { publish, registerWebhook } from './helpers.js';

const clock = new ManualClock();
const it = appTest({ clock });

describe('webhook lists: limit and cursor', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver(() => clock.now());
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('pages GET /api/webhooks oldest first and refuses unknown parameters', async ({ a }) => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await registerWebhook(a, receiver, ['sms.*'])).id);
    const first = await a.request('GET', '/api/webhooks?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.webhooks.map((w: { id: string }) => w.id)).toEqual(ids.slice(0, 2));
    expect(typeof first.body.nextCursor).toBe('string');
    const second = await a.request('GET', `/api/webhooks?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ webhooks: [{ id: ids[2] }], nextCursor: null });
    expect((await a.request('GET', '/api/webhooks')).body.nextCursor).toBeNull();
    const unknown = await a.request('GET', '/api/webhooks?page=2');
    expect(unknown.status).toBe(400);
    expect((await a.request('GET', '/api/webhooks?limit=0')).status).toBe(400);
    expect((await a.request('GET', '/api/webhooks?limit=201')).status).toBe(400);
    const bad = await a.request('GET', '/api/webhooks?cursor=!!');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_CURSOR');
  });

  it('pages a webhook’s logs newest first; older entries are reachable through nextCursor', async ({ t, a }) => {
    const hook = await registerWebhook(a, receiver, ['sms.*']);
    const published: string[] = [];
    for (let i = 0; i < 5; i++) {
      published.push(await publish(a, 'sms.sent', { i }));
      clock.advance(1000);
      await t.drain();
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: { logs: { eventId: string }[]; nextCursor: string | null } } = await a.request(
        'GET',
        `/api/webhooks/${hook.id}/logs?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.logs.map((l) => l.eventId));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...published].reverse());
    expect((await a.request('GET', `/api/webhooks/${hook.id}/logs?since=1`)).status).toBe(400);
  });
});
