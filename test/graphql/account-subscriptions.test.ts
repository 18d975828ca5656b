// Account-wide and newly typed subscriptions on one instance (issue 22, item 1): brandUpdated, emailIdentityUpdated,
// webhookUpdated without an id; campaignUpdated by brandId; carrierStatusChanged with the carrier row, its previous
// status and the campaign. The two-instance run is test/distributed/graphql-account-subscriptions.test.ts.
import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { activeBrand, campaignBody } from '../compliance/fixtures.js';
import { appTest } from '../helpers/fixture.js';
import { accountWideScenario } from './account-subscriptions.scenario.js';
import { collect, latestEventId } from './typed-subscriptions.scenario.js';

const clock = new ManualClock();
const it = appTest({ clock });

describe('account-wide typed subscriptions (one instance)', () => {
  it('brandUpdated, emailIdentityUpdated and webhookUpdated without an id follow the whole account', async ({
    t,
    a,
  }) => {
    const other = await t.newAccount();
    await accountWideScenario({ url: t.url, account: a }, { account: a }, other);
  });

  it('campaignUpdated(brandId) keeps to the brand; carrierStatusChanged carries the carrier, its previous status and the campaign', async ({
    t,
    a,
  }) => {
    const brand = await activeBrand(t, a);
    const otherBrand = await activeBrand(t, a);
    const cursor = await latestEventId(a);
    let campaignId = '';
    const byBrand = await collect(
      t.url,
      a.apiKey,
      'subscription ($brandId: ID, $lastEventId: String) { campaignUpdated(brandId: $brandId, lastEventId: $lastEventId) { eventType campaign { id brandId } } }',
      { brandId: brand.id, lastEventId: cursor },
      1,
      async () => {
        expect((await a.request('POST', '/compliance/campaigns', campaignBody(otherBrand.id))).status).toBe(201);
        const res = await a.request('POST', '/compliance/campaigns', campaignBody(brand.id));
        expect(res.status).toBe(201);
        campaignId = res.body.id;
      },
    );
    expect(byBrand[0].errors).toBeUndefined();
    expect(byBrand[0].data.campaignUpdated).toEqual({
      eventType: '10dlc.campaign.created',
      campaign: { id: campaignId, brandId: brand.id },
    });

    // Carrier decisions arrive as the sandbox carriers decide (the manual clock moves them).
    const carriers = await collect(
      t.url,
      a.apiKey,
      'subscription ($lastEventId: String) { carrierStatusChanged(lastEventId: $lastEventId) { eventId campaignId networkId previousStatus status carrier { carrier networkId status } campaign { id } } }',
      { lastEventId: cursor },
      1,
      async () => {
        clock.advance(7 * 24 * 60 * 60 * 1000);
        await t.drain();
      },
    );
    expect(carriers[0].errors).toBeUndefined();
    const change = carriers[0].data.carrierStatusChanged;
    expect(change.campaign).not.toBeNull();
    expect(change.carrier.networkId).toBe(change.networkId);
    expect(typeof change.status).toBe('string');
    expect(change).toHaveProperty('previousStatus');

    // Another account's campaign id: NOT_FOUND before anything streams.
    const stranger = await t.newAccount();
    const denied = await collect(
      t.url,
      stranger.apiKey,
      'subscription ($id: ID) { carrierStatusChanged(campaignId: $id) { eventId } }',
      { id: campaignId },
      1,
    );
    expect(denied[0].errors[0].extensions.code).toBe('NOT_FOUND');
  });
});
