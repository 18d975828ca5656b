import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import type { TestAccount, TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { activeBrand, campaignBody } from './fixtures.js';

/** A campaign that passes the lint: every TCR content field, consistent flags (research file §5.4). */
function goodCampaign(brandId: string, overrides: Record<string, unknown> = {}) {
  return campaignBody(brandId, {
    sampleMessages: [
      'Acme: your order #1234 has shipped, track it at https://acme.example/t/1234. Reply STOP to opt out.',
      'Acme support: we got your request and will answer within 1 hour. Reply HELP for help.',
    ],
    embeddedLink: true,
    messageFlow: 'Customers opt in by ticking an SMS box at checkout on https://acme.example/checkout.',
    optinMessage:
      'Acme: you are subscribed to order updates. Up to 4 msgs/month. Msg & data rates may apply. Reply HELP for help, STOP to cancel.',
    optoutMessage: 'Acme: you are unsubscribed and will get no more messages.',
    helpMessage: 'Acme: for help email help@acme.example. Reply STOP to opt out.',
    optoutKeywords: 'STOP,QUIT',
    helpKeywords: 'HELP',
    ...overrides,
  });
}

const codes = (findings: { code: string }[]) => [...new Set(findings.map((f) => f.code))].sort();

const clock = new ManualClock();
const it = appTest({ clock });

describe('pre-submission lint (issue 14) and the sandbox carriers that decide by it', () => {
  /** The file's app, for the helpers below (tests get it as the `t` fixture). */
  let t: TestApp;
  it.beforeAll(({ t: app }) => {
    t = app;
  });
  async function decideAll(a: TestAccount, id: string) {
    clock.advance(60_000);
    await t.drain();
    return (await a.request('GET', `/compliance/campaigns/${id}`)).body;
  }

  it('flags every listed cause on a crafted campaign, with code, field and fix, and writes nothing', async ({
    t,
    a,
  }) => {
    const brand = await activeBrand(t, a);
    const res = await a.request('POST', '/compliance/campaigns/lint', {
      brandId: brand.id,
      usecase: 'MIXED',
      subUsecases: [],
      description: 'Too short.',
      messageFlow: 'Web form.',
      sampleMessages: [
        'Hi there! Your code is ready at bit.ly/abc123 today',
        'Call us at 415-555-0100 for your appointment details',
      ],
      optinMessage: 'You are now subscribed to our updates list.',
      subscriberOptIn: true,
      subscriberHelp: true,
    });
    expect(res.status).toBe(200);
    expect(res.body.passes).toBe(false);
    expect(codes(res.body.findings.filter((f: { severity: string }) => f.severity === 'error'))).toEqual([
      'DESCRIPTION_TOO_SHORT',
      'EMBEDDED_LINK_FLAG_MISMATCH',
      'EMBEDDED_PHONE_FLAG_MISMATCH',
      'MESSAGE_FLOW_TOO_SHORT',
      'OPTIN_MESSAGE_MISSING_FREQUENCY',
      'OPTIN_MESSAGE_MISSING_HELP',
      'OPTIN_MESSAGE_MISSING_RATES',
      'OPTIN_MESSAGE_MISSING_STOP',
      'SAMPLE_COUNT_BELOW_CARRIER_MINIMUM',
      'SAMPLE_MISSING_BRAND_NAME',
      'SAMPLE_MISSING_OPT_OUT',
      'SAMPLE_PUBLIC_URL_SHORTENER',
      'SUBUSECASE_COUNT',
    ]);
    const byCode = Object.fromEntries(res.body.findings.map((f: { code: string }) => [f.code, f]));
    expect(byCode.SAMPLE_PUBLIC_URL_SHORTENER).toMatchObject({ field: 'sampleMessages.0', fix: expect.any(String) });
    expect(byCode.SAMPLE_COUNT_BELOW_CARRIER_MINIMUM).toMatchObject({ field: 'sampleMessages', networkIds: [10035] });
    expect(byCode.SUBUSECASE_COUNT).toMatchObject({ field: 'subUsecases', networkIds: [10017, 10035, 10037, 10038] });
    expect(byCode.SAMPLE_MISSING_HELP).toMatchObject({ severity: 'warning', networkIds: [] });
    expect(res.body.carriers.every((c: { wouldApprove: boolean }) => !c.wouldApprove)).toBe(true);

    const vetted = await a.request(
      'POST',
      '/compliance/campaigns/lint',
      goodCampaign(brand.id, { usecase: 'POLITICAL' }),
    );
    expect(codes(vetted.body.findings.filter((f: { severity: string }) => f.severity === 'error'))).toEqual([
      'SAMPLE_COUNT_BELOW_CARRIER_MINIMUM',
      'USECASE_NOT_QUALIFIED',
    ]);
    const unknown = await a.request('POST', '/compliance/campaigns/lint', { brandId: 'nope', description: 5 });
    expect(codes(unknown.body.findings)).toEqual(
      expect.arrayContaining(['BRAND_NOT_FOUND', 'INVALID_TYPE', 'REQUIRED']),
    );
    expect((await a.request('GET', '/compliance/campaigns')).body.campaigns).toEqual([]);
    const events = await a.request('GET', '/api/events/history?channels=10dlc');
    expect(
      (events.body.events ?? []).filter((e: { eventType: string }) => e.eventType.startsWith('10dlc.campaign')),
    ).toEqual([]);
  });

  it('a campaign that passes the lint is approved by every sandbox carrier', async ({ t, a }) => {
    const brand = await activeBrand(t, a);
    const lint = await a.request('POST', '/compliance/campaigns/lint', goodCampaign(brand.id));
    expect(lint.body).toMatchObject({ passes: true, errorCount: 0, warningCount: 0 });
    expect(lint.body.carriers.map((c: { wouldApprove: boolean }) => c.wouldApprove)).toEqual([true, true, true, true]);
    const created = await a.request('POST', '/compliance/campaigns', goodCampaign(brand.id));
    expect(created.status).toBe(201);
    const decided = await decideAll(a, created.body.id);
    expect(decided.status).toBe('APPROVED');
    expect(decided.carriers.map((c: { status: string }) => c.status)).toEqual([
      'APPROVED',
      'APPROVED',
      'APPROVED',
      'APPROVED',
    ]);
  });

  it('sandbox carriers reject for the lint’s causes with TCR’s reason and the lint’s code, carrier by carrier', async ({
    t,
    a,
  }) => {
    const brand = await activeBrand(t, a);
    const noOptOut = goodCampaign(brand.id, {
      sampleMessages: [
        'Acme: your order #1234 has shipped, see https://acme.example/t/1234 for details.',
        'Acme support: we got your request and will answer within 1 hour.',
      ],
    });
    const predicted = await a.request('POST', '/compliance/campaigns/lint', noOptOut);
    const created = await a.request('POST', '/compliance/campaigns', noOptOut);
    const decided = await decideAll(a, created.body.id);
    expect(decided.status).toBe('REJECTED');
    for (const c of decided.carriers) {
      expect(c).toMatchObject({ status: 'REJECTED', rejectionCode: 'SAMPLE_MISSING_OPT_OUT' });
      expect(c.rejectionReason).toContain('Opt-out language missing');
    }
    expect(predicted.body.carriers.map((c: { rejectionCode: string }) => c.rejectionCode)).toEqual(
      decided.carriers.map((c: { rejectionCode: string }) => c.rejectionCode),
    );

    // LOW_VOLUME: T-Mobile asks for 3 samples; the other carriers approve with 2.
    const lowVolume = goodCampaign(brand.id, { usecase: 'LOW_VOLUME', subUsecases: ['CUSTOMER_CARE'] });
    const lv = await a.request('POST', '/compliance/campaigns', lowVolume);
    const lvDecided = await decideAll(a, lv.body.id);
    expect(
      lvDecided.carriers.map((c: { status: string; rejectionCode: string | null }) => [c.status, c.rejectionCode]),
    ).toEqual([
      ['APPROVED', null],
      ['REJECTED', 'SAMPLE_COUNT_BELOW_CARRIER_MINIMUM'],
      ['APPROVED', null],
      ['APPROVED', null],
    ]);
    const flagged = goodCampaign(brand.id, { embeddedLink: false });
    const fl = await a.request('POST', '/compliance/campaigns', flagged);
    const flDecided = await decideAll(a, fl.body.id);
    expect(flDecided.carriers[0]).toMatchObject({
      rejectionCode: 'EMBEDDED_LINK_FLAG_MISMATCH',
      rejectionReason: 'Embedded link attribute does not match the sample messages.',
    });
  });

  it('dryRun on create and update answers the lint report and writes nothing', async ({ t, a }) => {
    const brand = await activeBrand(t, a);
    const dry = await a.request('POST', '/compliance/campaigns?dryRun=true', goodCampaign(brand.id));
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ passes: true });
    expect((await a.request('GET', '/compliance/campaigns')).body.campaigns).toEqual([]);
    const invalid = await a.request('POST', '/compliance/campaigns?dryRun=true', { brandId: brand.id });
    expect(invalid.status).toBe(400);

    const created = await a.request('POST', '/compliance/campaigns', goodCampaign(brand.id));
    const put = await a.request('PUT', `/compliance/campaigns/${created.body.id}?dryRun=true`, {
      sampleMessages: ['Your parcel is on its way to you today.', 'We have received your request, thank you.'],
      embeddedLink: false,
    });
    expect(put.status).toBe(200);
    expect(codes(put.body.findings)).toEqual([
      'SAMPLE_MISSING_BRAND_NAME',
      'SAMPLE_MISSING_HELP',
      'SAMPLE_MISSING_OPT_OUT',
    ]);
    const after = await a.request('GET', `/compliance/campaigns/${created.body.id}`);
    expect(after.body.sampleMessages).toEqual(created.body.sampleMessages);
    expect(after.body.updatedAt).toBe(created.body.updatedAt);
  });
});
