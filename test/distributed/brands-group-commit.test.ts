import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountClient } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { registerWebhook } from '../webhooks/helpers.js';
import { useTwoInstances } from './two-instances.js';

const byId = (x: string, y: string) => (BigInt(x) < BigInt(y) ? -1 : 1);
const BRAND = { name: 'Group Brand LLC', ein: '12-3456789', vertical: 'RETAIL', entityType: 'PRIVATE_PROFIT' };

/**
 * Brand registrations are single-statement writes, and concurrent ones of one account share a statement (group
 * commit, docs/events.md). Two instances on PostgreSQL + Redis register brands of ONE account at once: every brand
 * commits with exactly one `10dlc.brand.registered` event and one delivery per matching webhook, the account's
 * `seq` stays gapless with ids increasing with it, and live subscribers on both instances get every event once, in
 * id order.
 */
describe('group commit of brand registrations on two instances (PostgreSQL + Redis)', () => {
  const apps = useTwoInstances({ startWorkers: false });
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('keeps every brand, its event and its delivery together, in order and gapless, under concurrent writes', async () => {
    const { one, two } = apps;
    const a = await one.newAccount();
    const onTwo = accountClient(two.url, a.accountId, a.apiKey);
    // One webhook exists before the writes start; the other is added while they run (both instances must notice).
    const before = await registerWebhook(a, receiver, ['10dlc.brand.*']);
    const streams = [
      openSse(`${one.url}/api/events?token=${a.apiKey}`, ['10dlc.brand.registered']),
      openSse(`${two.url}/api/events?token=${a.apiKey}`, ['10dlc.brand.registered']),
    ];
    await Promise.all(streams.map((s) => s.opened()));

    const created: { id: string }[] = [];
    const after: string[] = [];
    let during: { id: string } | undefined;
    const writer = async (client: typeof a, w: number) => {
      for (let k = 0; k < 8; k++) {
        if (w === 0 && k === 4) during = await registerWebhook(a, receiver, ['*']);
        const res = await client.request('POST', '/compliance/brands', { ...BRAND, name: `Group ${w}-${k} LLC` });
        expect(res.status).toBe(201);
        created.push({ id: res.body.id });
        if (w === 0 && k >= 4) after.push(res.body.id);
      }
    };
    await Promise.all([
      ...Array.from({ length: 8 }, (_, w) => writer(a, w)),
      ...Array.from({ length: 8 }, (_, w) => writer(onTwo, w + 8)),
    ]);
    expect(created).toHaveLength(128);

    const rows = await one.app.ctx.db.event.findMany({
      where: { accountId: a.accountId, eventType: '10dlc.brand.registered' },
      orderBy: { seq: 'asc' },
    });
    // One event per brand, numbered 1..N without holes (the webhook registrations emit no 10dlc event), ids
    // increasing with seq.
    expect(rows.map((r) => (r.payload as { brandId: string }).brandId).sort()).toEqual(created.map((c) => c.id).sort());
    const all = await one.app.ctx.db.event.findMany({ where: { accountId: a.accountId }, orderBy: { seq: 'asc' } });
    expect(all.map((r) => Number(r.seq))).toEqual(all.map((_, i) => i + 1));
    for (let i = 1; i < all.length; i++) expect(all[i]!.id > all[i - 1]!.id).toBe(true);
    // Every brand row exists with its registry submission.
    expect(await one.app.ctx.db.brand.count({ where: { accountId: a.accountId } })).toBe(128);
    expect(await one.app.ctx.db.registryTask.count({ where: { accountId: a.accountId, kind: 'BRAND_DECISION' } })).toBe(
      128,
    );

    // Deliveries: the first webhook got one per brand; the one added mid-way one per event committed after it.
    const deliveries = await one.app.ctx.db.webhookDelivery.findMany({ where: { accountId: a.accountId } });
    const ofBefore = deliveries.filter((d) => d.webhookId === before.id);
    expect(ofBefore.map((d) => d.eventId!.toString()).sort(byId)).toEqual(rows.map((r) => r.id.toString()));
    // A brand requested after the mid-way webhook was registered has a delivery to it too (a write never goes
    // ahead with a stale list of webhooks); those requested before may or may not (they were concurrent).
    const ofDuring = new Set(deliveries.filter((d) => d.webhookId === during!.id).map((d) => d.eventId!.toString()));
    const eventOfBrand = new Map(rows.map((r) => [(r.payload as { brandId: string }).brandId, r.id.toString()]));
    expect(after.length).toBe(4);
    for (const brandId of after) expect(ofDuring.has(eventOfBrand.get(brandId)!)).toBe(true);

    // Live subscribers on both instances: every event once, in id order.
    const ids = rows.map((r) => r.id.toString());
    for (const es of streams) {
      await es.waitFor((m) => m.length >= ids.length);
      expect(es.messages.map((m) => m.id)).toEqual(ids);
      es.close();
    }
  });
});
