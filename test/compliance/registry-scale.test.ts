import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { appTest } from '../helpers/fixture.js';
import { brandBody, campaignBody } from './fixtures.js';

const clock = new ManualClock();
const it = appTest({ clock, env: { REGISTRY_TIME_SCALE: '10' } });

describe('REGISTRY_TIME_SCALE divides every sandbox delay', () => {
  it('decides a brand after 0.5 s and carriers after 1–4 s at scale 10', async ({ t, a }) => {
    const brand = (await a.request('POST', '/compliance/brands', brandBody())).body;
    clock.advance(499);
    await t.drain();
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).body.status).toBe('PENDING');
    clock.advance(1);
    await t.drain();
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).body.status).toBe('ACTIVE');
    const campaign = (await a.request('POST', '/compliance/campaigns', campaignBody(brand.id))).body;
    const start = clock.now().getTime();
    expect(
      campaign.carriers.map((c: { estimatedDecisionAt: string }) => Date.parse(c.estimatedDecisionAt) - start),
    ).toEqual([1_000, 2_000, 4_000, 3_000]);
    clock.advance(4_000);
    await t.drain();
    expect((await a.request('GET', `/compliance/campaigns/${campaign.id}`)).body.status).toBe('APPROVED');
  });
});
