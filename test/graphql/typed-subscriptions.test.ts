// Typed subscriptions on one instance (embedded database, in-process bus) over graphql-sse, both connection modes.
import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { activeBrand, campaignBody, freshNumbers } from '../compliance/fixtures.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { brandUpdatedScenario, collect, latestEventId } from './typed-subscriptions.scenario.js';

const it = appTest({ clock: new ManualClock() });

describe('typed subscriptions (one instance)', () => {
  let a: TestAccount;
  let b: TestAccount;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
    b = await t.newAccount();
  });

  for (const single of [false, true]) {
    it(`brandUpdated: live, resumable, tenancy-scoped (${single ? 'single' : 'distinct'} connection)`, async ({
      t,
    }) => {
      await brandUpdatedScenario({ url: t.url, account: a }, { account: a }, { url: t.url, account: b }, single);
    });
  }

  it('campaignUpdated and numberAssignmentChanged yield the typed objects re-read after each change', async ({ t }) => {
    const brand = await activeBrand(t, a);
    const campaign = await a.request('POST', '/compliance/campaigns', campaignBody(brand.id));
    expect(campaign.status).toBe(201);
    const id = campaign.body.id as string;
    const numbers = freshNumbers(2);
    expect((await a.request('POST', '/api/numbers', { numbers })).status).toBe(201);

    const cursor = await latestEventId(a);
    const [campaignChanges, numberChanges] = await Promise.all([
      collect(
        t.url,
        a.apiKey,
        `subscription ($id: ID!, $lastEventId: String) { campaignUpdated(id: $id, lastEventId: $lastEventId) { eventType campaign { id expedited numberCount sendable carriers { carrier status } } } }`,
        { id, lastEventId: cursor },
        2,
        async () => {
          expect((await a.request('POST', `/compliance/campaigns/${id}/expedite`)).status).toBe(200);
          const assigned = await a.request('POST', `/compliance/campaigns/${id}/numbers/assign`, { numbers });
          expect(assigned.status).toBe(200);
        },
      ),
      collect(
        t.url,
        a.apiKey,
        `subscription ($id: ID, $lastEventId: String) { numberAssignmentChanged(campaignId: $id, lastEventId: $lastEventId) { eventType campaignId changed numbers } }`,
        { id, lastEventId: cursor },
        1,
      ),
    ]);
    expect(campaignChanges.map((r) => r.errors)).toEqual([undefined, undefined]);
    const updates = campaignChanges.map((r) => r.data.campaignUpdated);
    expect(updates[0]).toMatchObject({ eventType: '10dlc.campaign.updated', campaign: { id, expedited: true } });
    expect(updates[1]).toMatchObject({ eventType: '10dlc.numbers.assigned', campaign: { id, numberCount: 2 } });
    const change = numberChanges[0].data.numberAssignmentChanged;
    expect(change).toMatchObject({ eventType: 'ASSIGNED', campaignId: id });
    expect([...change.changed].sort()).toEqual([...numbers].sort());
    expect(change.numbers).toEqual([...numbers].sort());
  });
});
