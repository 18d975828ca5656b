import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import type { TestAccount, TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { activeBrand, brandBody, campaignBody, freshNumbers } from './fixtures.js';

const clock = new ManualClock(new Date('2026-11-21T06:00:00.000Z'));
const it = appTest({ clock });

/** The sandbox registry's lifecycle under a manual clock (README "Sandbox registry"). */
describe('sandbox campaign registry lifecycle', () => {
  /** The file's app, for the helpers below (tests get it as the `t` fixture). */
  let t: TestApp;
  it.beforeAll(({ t: app }) => {
    t = app;
  });
  const advance = async (ms: number) => {
    clock.advance(ms);
    await t.drain();
  };
  const carriers = async (a: TestAccount, id: string) =>
    Object.fromEntries(
      (await a.request('GET', `/compliance/campaigns/${id}/carriers`)).body.carriers.map(
        (c: { networkId: number; status: string }) => [c.networkId, c.status],
      ),
    );

  it('decides a brand 5 s after registration, not before, and records the events', async ({ t, a }) => {
    const brand = (await a.request('POST', '/compliance/brands', brandBody())).body;
    await advance(4_999);
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).body.status).toBe('PENDING');
    await advance(1);
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).body).toMatchObject({
      status: 'ACTIVE',
      identityStatus: 'VERIFIED',
    });
    const events = await t.app.ctx.db.event.findMany({ where: { accountId: a.accountId }, orderBy: { id: 'asc' } });
    expect(events.map((e) => [e.channel, e.eventType])).toEqual([
      ['10dlc', '10dlc.brand.registered'],
      ['10dlc', '10dlc.brand.status_changed'],
    ]);
    expect(events[1]!.payload).toMatchObject({ brandId: brand.id, previousStatus: 'PENDING', status: 'ACTIVE' });
  });

  it('approves a campaign carrier by carrier at different times, then it is sendable once a number is assigned', async ({
    t,
    a,
  }) => {
    const brand = await activeBrand(t, a);
    const created = await a.request('POST', '/compliance/campaigns', campaignBody(brand.id));
    const id = created.body.id as string;
    const start = clock.now().getTime();
    expect(
      created.body.carriers.map((c: { estimatedDecisionAt: string }) => Date.parse(c.estimatedDecisionAt) - start),
    ).toEqual([10_000, 20_000, 40_000, 30_000]);
    await advance(10_000);
    expect(await carriers(a, id)).toEqual({ 10017: 'APPROVED', 10035: 'PENDING', 10037: 'PENDING', 10038: 'PENDING' });
    expect((await a.request('GET', `/compliance/campaigns/${id}`)).body.status).toBe('PENDING');
    await advance(10_000);
    expect(await carriers(a, id)).toEqual({ 10017: 'APPROVED', 10035: 'APPROVED', 10037: 'PENDING', 10038: 'PENDING' });
    await advance(10_000);
    expect((await carriers(a, id))[10038]).toBe('APPROVED');
    await advance(10_000);
    const detail = (await a.request('GET', `/compliance/campaigns/${id}`)).body;
    expect(detail.status).toBe('APPROVED');
    const approvedAt = detail.carriers.map((c: { approvedAt: string }) => c.approvedAt);
    expect(new Set(approvedAt).size).toBe(4);
    expect(detail.sendable).toBe(false);
    expect(detail.blockingReasons).toEqual([
      { code: 'NO_NUMBERS_ASSIGNED', message: expect.any(String), networkId: null },
    ]);
    const numbers = freshNumbers(1);
    await a.request('POST', '/api/numbers', { numbers });
    await a.request('POST', `/compliance/campaigns/${id}/numbers/assign`, { numbers });
    const ready = (await a.request('GET', `/compliance/campaigns/${id}`)).body;
    expect(ready).toMatchObject({ sendable: true, blockingReasons: [], numberCount: 1 });
    expect((await a.request('GET', '/compliance/did-mapping')).body).toEqual([
      {
        number: numbers[0],
        campaignId: id,
        campaignStatus: 'APPROVED',
        state: 'warming',
        assignmentStatus: 'ASSIGNED',
      },
    ]);
    const events = await t.app.ctx.db.event.findMany({
      where: {
        accountId: a.accountId,
        eventType: { in: ['10dlc.carrier.status_changed', '10dlc.campaign.status_changed'] },
      },
      orderBy: { id: 'asc' },
    });
    expect(events.map((e) => `${e.eventType}:${(e.payload as { status: string }).status}`)).toEqual([
      '10dlc.carrier.status_changed:APPROVED',
      '10dlc.carrier.status_changed:APPROVED',
      '10dlc.carrier.status_changed:APPROVED',
      '10dlc.carrier.status_changed:APPROVED',
      '10dlc.campaign.status_changed:APPROVED',
    ]);
  });

  it('SANDBOX:REJECT:10035 makes T-Mobile reject; an appeal re-reviews it; removing the marker approves it', async ({
    t,
    a,
  }) => {
    const brand = await activeBrand(t, a);
    const description = 'Customer care conversations for Acme. SANDBOX:REJECT:10035';
    const id = (await a.request('POST', '/compliance/campaigns', campaignBody(brand.id, { description }))).body.id;
    await advance(40_000);
    const detail = (await a.request('GET', `/compliance/campaigns/${id}`)).body;
    expect(await carriers(a, id)).toEqual({
      10017: 'APPROVED',
      10035: 'REJECTED',
      10037: 'APPROVED',
      10038: 'APPROVED',
    });
    expect(detail.status).toBe('APPROVED');
    expect(detail.blockingReasons).toContainEqual({
      code: 'CARRIER_REJECTED',
      message: expect.stringContaining('T-Mobile'),
      networkId: 10035,
    });
    const nothing = await a.request('POST', `/compliance/campaigns/${id}/nudge`, { nudgeIntent: 'REVIEW' });
    expect(nothing.status).toBe(422);
    expect(nothing.body.error.code).toBe('NOTHING_TO_NUDGE');
    const appeal = await a.request('POST', `/compliance/campaigns/${id}/nudge`, {
      nudgeIntent: 'APPEAL_REJECTION',
      description: 'We fixed the opt-in flow.',
    });
    expect(appeal.status).toBe(200);
    const tmo = appeal.body.carriers.find((c: { networkId: number }) => c.networkId === 10035);
    expect(tmo.status).toBe('PENDING');
    expect(Date.parse(tmo.estimatedDecisionAt) - clock.now().getTime()).toBe(15_000);
    await advance(15_000);
    expect((await carriers(a, id))[10035]).toBe('REJECTED');
    await a.request('PUT', `/compliance/campaigns/${id}`, {
      description: 'Customer care conversations for Acme customers.',
    });
    expect((await a.request('GET', `/compliance/campaigns/${id}`)).body.status).toBe('PENDING');
    await advance(40_000);
    expect(await carriers(a, id)).toEqual({
      10017: 'APPROVED',
      10035: 'APPROVED',
      10037: 'APPROVED',
      10038: 'APPROVED',
    });
    const nudged = await t.app.ctx.db.event.findMany({
      where: { accountId: a.accountId, eventType: '10dlc.campaign.nudged' },
    });
    expect(nudged.map((e) => e.payload)).toEqual([
      {
        campaignId: id,
        nudgeIntent: 'APPEAL_REJECTION',
        description: 'We fixed the opt-in flow.',
        networkIds: [10035],
      },
    ]);
  });

  it('rejects everywhere without opt-in (REJECTED) and suspends on SANDBOX:SUSPEND:ALL (SUSPENDED)', async ({
    t,
    a,
  }) => {
    const brand = await activeBrand(t, a);
    const noOptIn = (
      await a.request('POST', '/compliance/campaigns', campaignBody(brand.id, { subscriberOptIn: false }))
    ).body;
    const suspend = (
      await a.request(
        'POST',
        '/compliance/campaigns',
        campaignBody(brand.id, { description: 'Customer care conversations for Acme. SANDBOX:SUSPEND:ALL' }),
      )
    ).body;
    await advance(40_000);
    const rejected = (await a.request('GET', `/compliance/campaigns/${noOptIn.id}`)).body;
    expect(rejected.status).toBe('REJECTED');
    expect(rejected.carriers[0].rejectionReason).toContain('subscriberOptIn');
    expect((await a.request('GET', `/compliance/campaigns/${suspend.id}`)).body.status).toBe('SUSPENDED');
  });

  it('nudge REVIEW halves the pending carriers’ remaining time', async ({ t, a }) => {
    const brand = await activeBrand(t, a);
    const id = (await a.request('POST', '/compliance/campaigns', campaignBody(brand.id))).body.id;
    const start = clock.now().getTime();
    const res = await a.request('POST', `/compliance/campaigns/${id}/nudge`, { nudgeIntent: 'REVIEW' });
    expect(res.status).toBe(200);
    expect(
      res.body.carriers.map((c: { estimatedDecisionAt: string }) => Date.parse(c.estimatedDecisionAt) - start),
    ).toEqual([5_000, 10_000, 20_000, 15_000]);
    await advance(10_000);
    expect(await carriers(a, id)).toEqual({ 10017: 'APPROVED', 10035: 'APPROVED', 10037: 'PENDING', 10038: 'PENDING' });
    const appeal = await a.request('POST', `/compliance/campaigns/${id}/nudge`, { nudgeIntent: 'APPEAL_REJECTION' });
    expect(appeal.body.error.code).toBe('NOTHING_TO_APPEAL');
  });

  it('expedite decides every pending carrier 1 s apart and marks the campaign expedited', async ({ t, a }) => {
    const brand = await activeBrand(t, a);
    const id = (await a.request('POST', '/compliance/campaigns', campaignBody(brand.id))).body.id;
    const start = clock.now().getTime();
    const res = await a.request('POST', `/compliance/campaigns/${id}/expedite`);
    expect(res.status).toBe(200);
    expect(res.body.expedited).toBe(true);
    expect(
      res.body.carriers.map((c: { estimatedDecisionAt: string }) => Date.parse(c.estimatedDecisionAt) - start),
    ).toEqual([1_000, 2_000, 3_000, 4_000]);
    await advance(4_000);
    expect((await a.request('GET', `/compliance/campaigns/${id}`)).body.status).toBe('APPROVED');
    const again = await a.request('POST', `/compliance/campaigns/${id}/expedite`);
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe('NOTHING_TO_EXPEDITE');
  });

  it('a brand that goes back to PENDING blocks its campaigns (BRAND_NOT_ACTIVE) until it is decided again', async ({
    t,
    a,
  }) => {
    const brand = await activeBrand(t, a);
    const id = (await a.request('POST', '/compliance/campaigns', campaignBody(brand.id))).body.id;
    await a.request('PUT', `/compliance/brands/${brand.id}`, brandBody({ ein: '12-7654321' }));
    const blocked = (await a.request('GET', `/compliance/campaigns/${id}`)).body;
    expect(blocked.blockingReasons[0]).toMatchObject({ code: 'BRAND_NOT_ACTIVE' });
    await advance(5_000);
    const after = (await a.request('GET', `/compliance/campaigns/${id}`)).body;
    expect(after.blockingReasons.map((r: { code: string }) => r.code)).not.toContain('BRAND_NOT_ACTIVE');
  });

  it('records every 10dlc event type of a full lifecycle on channel 10dlc', async ({ t, a }) => {
    const brand = await activeBrand(t, a);
    await a.request('POST', `/compliance/brands/${brand.id}/vetting/apply`);
    await advance(30_000);
    const id = (await a.request('POST', '/compliance/campaigns', campaignBody(brand.id))).body.id;
    await a.request('POST', `/compliance/campaigns/${id}/nudge`, { nudgeIntent: 'REVIEW' });
    await a.request('PUT', `/compliance/campaigns/${id}`, { numberPool: true });
    const numbers = freshNumbers(1);
    await a.request('POST', '/api/numbers', { numbers });
    await a.request('POST', `/compliance/campaigns/${id}/numbers/assign`, { numbers });
    await a.request('POST', `/compliance/campaigns/${id}/numbers/remove`, { numbers });
    await advance(40_000);
    await a.request('PUT', `/compliance/brands/${brand.id}`, brandBody({ website: 'https://acme.example/new' }));
    await a.request('DELETE', `/compliance/campaigns/${id}`);
    await a.request('DELETE', `/compliance/brands/${brand.id}`);
    const rows = await t.app.ctx.db.event.findMany({ where: { accountId: a.accountId, channel: '10dlc' } });
    expect(new Set(rows.map((r) => r.eventType))).toEqual(
      new Set([
        '10dlc.brand.registered',
        '10dlc.brand.updated',
        '10dlc.brand.status_changed',
        '10dlc.brand.deleted',
        '10dlc.vetting.requested',
        '10dlc.vetting.completed',
        '10dlc.campaign.created',
        '10dlc.campaign.updated',
        '10dlc.campaign.status_changed',
        '10dlc.campaign.deleted',
        '10dlc.campaign.nudged',
        '10dlc.carrier.status_changed',
        '10dlc.numbers.assigned',
        '10dlc.numbers.removed',
      ]),
    );
    expect(rows.every((r) => r.createdAt.getTime() <= clock.now().getTime())).toBe(true);
  });
});
