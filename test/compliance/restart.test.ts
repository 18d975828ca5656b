import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { accountClient, startApp, type TestApp, tempDir } from '../helpers/app.js';
import { brandBody, campaignBody, freshNumbers } from './fixtures.js';

describe('compliance state and the registry schedule survive a restart (PGlite in a data directory)', () => {
  let dir: { dir: string; cleanup: () => Promise<void> };
  let t: TestApp | undefined;
  afterAll(async () => {
    await t?.close();
    await dir?.cleanup();
  });

  it('keeps brands, campaigns, numbers and pending decisions, and completes the schedule after restart', async () => {
    dir = await tempDir();
    const start = new Date('2026-11-21T06:00:00.000Z');
    const env = { DATABASE_URL: '' };
    t = await startApp({ clock: new ManualClock(start), dataDir: dir.dir, env });
    const first = await t.newAccount();
    const brand = (await first.request('POST', '/compliance/brands', brandBody())).body;
    (t.clock as ManualClock).advance(5_000);
    await t.drain();
    const campaign = (await first.request('POST', '/compliance/campaigns', campaignBody(brand.id))).body;
    const numbers = freshNumbers(1);
    await first.request('POST', '/api/numbers', { numbers });
    await first.request('POST', `/compliance/campaigns/${campaign.id}/numbers/assign`, { numbers });
    (t.clock as ManualClock).advance(10_000);
    await t.drain();
    expect((await first.request('GET', `/compliance/campaigns/${campaign.id}/carriers`)).body.carriers[0].status).toBe(
      'APPROVED',
    );
    const pendingBrand = (await first.request('POST', '/compliance/brands', brandBody({ name: 'Later LLC' }))).body;
    await t.close();

    const clock = new ManualClock(new Date(start.getTime() + 15_000));
    t = await startApp({ clock, dataDir: dir.dir, env });
    const a = accountClient(t.url, first.accountId, first.apiKey);
    expect((await a.request('GET', '/compliance/brands')).body.brands.map((b: { id: string }) => b.id)).toEqual([
      brand.id,
      pendingBrand.id,
    ]);
    expect((await a.request('GET', `/compliance/brands/${pendingBrand.id}`)).body.status).toBe('PENDING');
    const before = (await a.request('GET', `/compliance/campaigns/${campaign.id}`)).body;
    expect(before.carriers.map((c: { status: string }) => c.status)).toEqual([
      'APPROVED',
      'PENDING',
      'PENDING',
      'PENDING',
    ]);
    expect(before.numberCount).toBe(1);
    expect(await t.app.ctx.db.registryTask.count({ where: { accountId: a.accountId } })).toBe(4);

    clock.advance(30_000);
    await t.drain();
    expect((await a.request('GET', `/compliance/brands/${pendingBrand.id}`)).body.status).toBe('ACTIVE');
    const after = (await a.request('GET', `/compliance/campaigns/${campaign.id}`)).body;
    expect(after).toMatchObject({ status: 'APPROVED', sendable: true });
    expect((await a.request('GET', '/compliance/did-mapping')).body).toMatchObject([
      { number: numbers[0], campaignId: campaign.id, campaignStatus: 'APPROVED', state: 'warming' },
    ]);
    expect(await t.app.ctx.db.registryTask.count({ where: { accountId: a.accountId } })).toBe(0);
  }, 120_000); // boots PGlite twice in one test (the hook timeout is 120 s for the same reason)
});
