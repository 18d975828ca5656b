import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { appTest } from '../helpers/fixture.js';
import { activeBrand, campaignBody } from './fixtures.js';

type Limit = {
  networkId: number;
  dailyCap: number | null;
  messagesPerMinute: number | null;
  messageClass: string | null;
};
const att = (carriers: Limit[]) => carriers.find((c) => c.networkId === 10017)!;
const tmo = (carriers: Limit[]) => carriers.find((c) => c.networkId === 10035)!;

const clock = new ManualClock();
const it = appTest({ clock });

describe('qualification per use case and carrier, and throughput tiers (issue 14)', () => {
  it('answers TCR campaign-builder data per use case and carrier, and one use case with ?usecase=', async ({
    t,
    a,
  }) => {
    const brand = await activeBrand(t, a);
    const all = await a.request('GET', `/compliance/brands/${brand.id}/qualify`);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ qualified: true, throughputTier: 'LOW' });
    const mixed = await a.request('GET', `/compliance/brands/${brand.id}/qualify?usecase=MIXED`);
    expect(mixed.body.usecases).toHaveLength(1);
    expect(mixed.body.usecases[0]).toMatchObject({
      usecase: 'MIXED',
      usecaseClass: 'STANDARD',
      qualifies: true,
      minSubUsecases: 2,
      maxSubUsecases: 5,
      vettingRequired: false,
      messageRequirements: {
        optinMessage: expect.arrayContaining([
          'MESSAGE_FREQUENCY',
          'MSG_AND_DATA_RATES_MAY_APPLY',
          'STOP_INSTRUCTIONS',
        ]),
      },
    });
    expect(tmo(mixed.body.usecases[0].carriers)).toMatchObject({
      carrier: 'T-Mobile',
      qualifies: true,
      carrierReviewRequired: true,
      minMsgSamples: 3,
      subscriberOptInRequired: true,
      subscriberOptOutRequired: true,
      subscriberHelpRequired: true,
      dailyCap: 2000,
    });
    expect(att(mixed.body.usecases[0].carriers)).toMatchObject({
      minMsgSamples: 2,
      messageClass: 'T',
      messagesPerMinute: 75,
    });
    const political = await a.request('GET', `/compliance/brands/${brand.id}/qualify?usecase=POLITICAL`);
    expect(political.body.usecases[0]).toMatchObject({
      qualifies: false,
      vettingRequired: true,
      usecaseClass: 'SPECIAL',
      reason: expect.stringContaining('VETTED_VERIFIED'),
    });
    const alias = await a.request('GET', `/compliance/brands/${brand.id}/qualify?usecase=DELIVERY_NOTIFICATION`);
    expect(alias.body.usecases.map((u: { usecase: string }) => u.usecase)).toEqual(['DELIVERY_NOTIFICATIONS']);
    const bad = await a.request('GET', `/compliance/brands/${brand.id}/qualify?usecase=SPAM`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0]).toMatchObject({ code: 'INVALID_ENUM_VALUE' });
  });

  it('limits a sole proprietor to its use case and class (T-Mobile 1,000/day, AT&T 15/min)', async ({ t, a }) => {
    const brand = await activeBrand(t, a, {
      entityType: 'SOLE_PROPRIETOR',
      firstName: 'Jane',
      lastName: 'Doe',
      mobilePhone: '+14155550123',
      referenceId: 'jane',
    });
    const q = await a.request('GET', `/compliance/brands/${brand.id}/qualify`);
    expect(
      q.body.usecases.filter((u: { qualifies: boolean }) => u.qualifies).map((u: { usecase: string }) => u.usecase),
    ).toEqual(['SOLE_PROPRIETOR']);
    const got = await a.request('GET', `/compliance/brands/${brand.id}`);
    expect(got.body.throughput.tier).toBe('SOLE_PROPRIETOR');
    expect(tmo(got.body.throughput.carriers).dailyCap).toBe(1000);
    const sp = q.body.usecases.find((u: { usecase: string }) => u.usecase === 'SOLE_PROPRIETOR');
    expect(att(sp.carriers)).toMatchObject({ messageClass: 'SP', messagesPerMinute: 15 });
    expect(sp.carriers[0]).toMatchObject({ embeddedLinksAllowed: false, embeddedPhoneAllowed: false });
  });

  it('a completed vetting raises the tier: brand and campaign limits change (T-Mobile cap, AT&T class and TPM)', async ({
    t,
    a,
  }) => {
    // Sandbox vetting score = 50 + (last two EIN digits mod 51): 89 → 88 (TOP); 20 → 70 (HIGH_MID).
    const brand = await activeBrand(t, a, { ein: '12-3456789' });
    const created = await a.request('POST', '/compliance/campaigns', campaignBody(brand.id));
    const mixed = await a.request(
      'POST',
      '/compliance/campaigns',
      campaignBody(brand.id, { usecase: 'MIXED', subUsecases: ['CUSTOMER_CARE', 'MARKETING'] }),
    );
    const before = (await a.request('GET', `/compliance/campaigns/${created.body.id}`)).body;
    expect(before.throughput).toMatchObject({ tier: 'LOW', messageClass: 'T' });
    expect(att(before.throughput.carriers).messagesPerMinute).toBe(75);
    expect(tmo(before.throughput.carriers).dailyCap).toBe(2000);
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).body).toMatchObject({
      vettingScore: null,
      throughput: { tier: 'LOW' },
    });

    expect((await a.request('POST', `/compliance/brands/${brand.id}/vetting/apply`)).status).toBeLessThan(300);
    clock.advance(30_000);
    await t.drain();
    const vetted = (await a.request('GET', `/compliance/brands/${brand.id}`)).body;
    expect(vetted).toMatchObject({ identityStatus: 'VETTED_VERIFIED', vettingScore: 88, throughput: { tier: 'TOP' } });
    expect(tmo(vetted.throughput.carriers).dailyCap).toBe(200_000);
    const after = (await a.request('GET', `/compliance/campaigns/${created.body.id}`)).body;
    expect(after.throughput).toMatchObject({ tier: 'TOP', messageClass: 'A' });
    expect(att(after.throughput.carriers).messagesPerMinute).toBe(4500);
    expect(tmo(after.throughput.carriers).dailyCap).toBe(200_000);
    const mixedAfter = (await a.request('GET', `/compliance/campaigns/${mixed.body.id}`)).body;
    expect(mixedAfter.throughput.messageClass).toBe('B');
    const events = await a.request('GET', '/api/events/history?channels=10dlc');
    const completed = events.body.events.find((e: { eventType: string }) => e.eventType === '10dlc.vetting.completed');
    expect(completed.payload).toMatchObject({ vettingScore: 88, throughputTier: 'TOP' });

    const mid = await activeBrand(t, a, { ein: '12-3456720' });
    await a.request('POST', `/compliance/brands/${mid.id}/vetting/apply`);
    clock.advance(30_000);
    await t.drain();
    const midBrand = (await a.request('GET', `/compliance/brands/${mid.id}`)).body;
    expect(midBrand).toMatchObject({ vettingScore: 70, throughput: { tier: 'HIGH_MID' } });
    expect(tmo(midBrand.throughput.carriers).dailyCap).toBe(40_000);
  });
});
