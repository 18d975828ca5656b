import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { appTest } from '../helpers/fixture.js';
import { activeBrand, brandBody, campaignBody, detailCodes, freshNumbers, newCampaign } from './fixtures.js';

const clock = new ManualClock();
const it = appTest({ clock });

describe('campaigns, numbers and DID mapping over REST (spec 4.2, 4.3, 7)', () => {
  it('creates a campaign in PENDING with one PENDING row per carrier, readable in detail, list and carriers', async ({
    t,
    a,
  }) => {
    const brand = await activeBrand(t, a);
    const res = await a.request('POST', '/compliance/campaigns', campaignBody(brand.id));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      brandId: brand.id,
      usecase: 'CUSTOMER_CARE',
      description: campaignBody(brand.id).description,
      status: 'PENDING',
      numberPool: false,
      sendable: false,
    });
    expect(res.body.id).toEqual(expect.any(String));
    expect(res.body.createdAt).toMatch(/\.\d{3}Z$/);
    const detail = await a.request('GET', `/compliance/campaigns/${res.body.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.carriers).toEqual([
      expect.objectContaining({ carrier: 'AT&T', networkId: 10017, status: 'PENDING', approvedAt: null }),
      expect.objectContaining({ carrier: 'T-Mobile', networkId: 10035, status: 'PENDING', approvedAt: null }),
      expect.objectContaining({ carrier: 'US Cellular', networkId: 10037, status: 'PENDING', approvedAt: null }),
      expect.objectContaining({ carrier: 'Verizon Wireless', networkId: 10038, status: 'PENDING', approvedAt: null }),
    ]);
    expect(detail.body.blockingReasons.map((r: { code: string }) => r.code)).toEqual([
      'CARRIER_PENDING',
      'CARRIER_PENDING',
      'CARRIER_PENDING',
      'CARRIER_PENDING',
      'NO_NUMBERS_ASSIGNED',
    ]);
    const carriers = await a.request('GET', `/compliance/campaigns/${res.body.id}/carriers`);
    expect(carriers.status).toBe(200);
    expect(carriers.body.campaignId).toBe(res.body.id);
    expect(carriers.body.carriers).toEqual(detail.body.carriers);
    const list = await a.request('GET', '/compliance/campaigns?limit=1');
    expect(list.body.campaigns.map((c: { id: string }) => c.id)).toEqual([res.body.id]);
    expect(list.body.nextCursor).toBeNull();
  });

  it('pages campaigns with limit and cursor', async ({ t, a }) => {
    const brand = await activeBrand(t, a);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await a.request('POST', '/compliance/campaigns', campaignBody(brand.id))).body.id);
    const first = await a.request('GET', '/compliance/campaigns?limit=2');
    const second = await a.request('GET', `/compliance/campaigns?limit=2&cursor=${first.body.nextCursor}`);
    expect([...first.body.campaigns, ...second.body.campaigns].map((c: { id: string }) => c.id)).toEqual(ids);
    expect(second.body.nextCursor).toBeNull();
    const otherBrand = await activeBrand(t, a);
    const otherId = (await a.request('POST', '/compliance/campaigns', campaignBody(otherBrand.id))).body.id;
    const filtered = await a.request('GET', `/compliance/campaigns?brandId=${otherBrand.id}`);
    expect(filtered.body.campaigns.map((c: { id: string }) => c.id)).toEqual([otherId]);
  });

  it('validates campaigns: every rule at once (usecase, description 40–4096, 2–5 samples of 20–1024, booleans)', async ({
    t,
    a,
  }) => {
    const res = await a.request('POST', '/compliance/campaigns', {
      usecase: 'SPAM',
      description: 'too short',
      sampleMessages: ['short', 'x'.repeat(1025)],
      subscriberOptIn: 'yes',
    });
    expect(res.status).toBe(400);
    expect(detailCodes(res.body)).toEqual([
      'brandId:REQUIRED',
      'description:TOO_SHORT',
      'sampleMessages.0:TOO_SHORT',
      'sampleMessages.1:TOO_LONG',
      'subscriberHelp:REQUIRED',
      'subscriberOptIn:INVALID_TYPE',
      'usecase:INVALID_ENUM_VALUE',
    ]);
    const counts = await a.request('POST', '/compliance/campaigns', {
      ...campaignBody('b'),
      description: 'x'.repeat(4097),
      sampleMessages: ['Only one sample message here.'],
    });
    expect(detailCodes(counts.body)).toEqual(['description:TOO_LONG', 'sampleMessages:TOO_FEW']);
    const many = await a.request('POST', '/compliance/campaigns', {
      ...campaignBody('b'),
      sampleMessages: Array.from({ length: 6 }, (_, i) => `Sample message number ${i} for the campaign.`),
    });
    expect(detailCodes(many.body)).toEqual(['sampleMessages:TOO_MANY']);
    expect(await t.app.ctx.db.campaign.count({ where: { accountId: a.accountId } })).toBe(0);
  });

  it('accepts TCR’s DELIVERY_NOTIFICATION spelling as DELIVERY_NOTIFICATIONS', async ({ t, a }) => {
    const brand = await activeBrand(t, a);
    const res = await a.request(
      'POST',
      '/compliance/campaigns',
      campaignBody(brand.id, { usecase: 'DELIVERY_NOTIFICATION' }),
    );
    expect(res.status).toBe(201);
    expect(res.body.usecase).toBe('DELIVERY_NOTIFICATIONS');
  });

  it('refuses campaigns for an unknown brand (404), a PENDING brand (422) and an unqualified use case (422)', async ({
    t,
    a,
  }) => {
    const unknown = await a.request('POST', '/compliance/campaigns', campaignBody('no-such-brand'));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'NOT_FOUND', field: 'brandId' });
    const pending = (await a.request('POST', '/compliance/brands', brandBody())).body;
    const notActive = await a.request('POST', '/compliance/campaigns', campaignBody(pending.id));
    expect(notActive.status).toBe(422);
    expect(notActive.body.error).toMatchObject({ code: 'BRAND_NOT_ACTIVE', field: 'brandId' });
    const brand = await activeBrand(t, a);
    const political = await a.request(
      'POST',
      '/compliance/campaigns',
      campaignBody(brand.id, { usecase: 'POLITICAL' }),
    );
    expect(political.status).toBe(422);
    expect(political.body.error).toMatchObject({ code: 'USECASE_NOT_QUALIFIED', field: 'usecase' });
  });

  it('provisions, lists and releases numbers; emits did.purchased and did.released', async ({ t, a }) => {
    const [n1, n2, n3] = freshNumbers(3) as [string, string, string];
    const res = await a.request('POST', '/api/numbers', { numbers: [n2, n1, n1] });
    expect(res.status).toBe(201);
    expect(res.body.numbers).toEqual(
      [n1, n2].sort().map((number) => ({
        number,
        campaignId: null,
        assignedAt: null,
        createdAt: expect.any(String),
        state: 'unassigned',
        assignmentStatus: null,
        failureReasons: [],
        stateChangedAt: null,
        nextStateAt: null,
      })),
    );
    await a.request('POST', '/api/numbers', { numbers: [n3] });
    const page = await a.request('GET', '/api/numbers?limit=2');
    expect(page.body.numbers.map((n: { number: string }) => n.number)).toEqual([n1, n2, n3].sort().slice(0, 2));
    const rest = await a.request('GET', `/api/numbers?limit=2&cursor=${page.body.nextCursor}`);
    expect(rest.body).toEqual({
      numbers: [expect.objectContaining({ number: [n1, n2, n3].sort()[2] })],
      nextCursor: null,
    });
    const again = await a.request('POST', '/api/numbers', { numbers: [freshNumbers(1)[0], n1] });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('NUMBER_UNAVAILABLE');
    expect(detailCodes(again.body)).toEqual(['numbers.1:ALREADY_PROVISIONED']);
    expect((await a.request('GET', '/api/numbers')).body.numbers).toHaveLength(3);
    const other = await t.newAccount();
    const taken = await other.request('POST', '/api/numbers', { numbers: [n1] });
    expect(detailCodes(taken.body)).toEqual(['numbers.0:NUMBER_UNAVAILABLE']);
    const del = await a.request('DELETE', `/api/numbers/${encodeURIComponent(n3)}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ number: n3, released: true });
    expect((await a.request('DELETE', `/api/numbers/${encodeURIComponent(n3)}`)).status).toBe(404);
    const events = await t.app.ctx.db.event.findMany({
      where: { accountId: a.accountId, channel: 'did' },
      orderBy: { id: 'asc' },
    });
    expect(events.map((e) => `${e.eventType} ${(e.payload as { number: string }).number}`)).toEqual([
      `did.purchased ${n2}`,
      `did.purchased ${n1}`,
      `did.purchased ${n3}`,
      `did.released ${n3}`,
    ]);
  });

  it('validates numbers as E.164 (libphonenumber-js) and requires the list', async ({ t, a }) => {
    const res = await a.request('POST', '/api/numbers', { numbers: ['4155550100', '+1555', '+14155550100x'] });
    expect(res.status).toBe(400);
    expect(detailCodes(res.body)).toEqual([
      'numbers.0:INVALID_FORMAT',
      'numbers.1:INVALID_FORMAT',
      'numbers.2:INVALID_FORMAT',
    ]);
    expect(detailCodes((await a.request('POST', '/api/numbers', {})).body)).toEqual(['numbers:REQUIRED']);
    expect(detailCodes((await a.request('POST', '/api/numbers', { numbers: [] })).body)).toEqual(['numbers:TOO_FEW']);
    const { campaign } = await newCampaign(t, a);
    const assign = await a.request('POST', `/compliance/campaigns/${campaign.id}/numbers/assign`, { numbers: ['12'] });
    expect(detailCodes(assign.body)).toEqual(['numbers.0:INVALID_FORMAT']);
  });

  it('assigns and removes numbers; lists them; did-mapping covers assigned and unassigned numbers', async ({
    t,
    a,
  }) => {
    const { campaign } = await newCampaign(t, a);
    const [n1, n2, n3] = freshNumbers(3).sort() as [string, string, string];
    await a.request('POST', '/api/numbers', { numbers: [n1, n2, n3] });
    const assign = await a.request('POST', `/compliance/campaigns/${campaign.id}/numbers/assign`, {
      numbers: [n1, n2],
    });
    expect(assign.status).toBe(200);
    expect(assign.body).toEqual({
      campaignId: campaign.id,
      assigned: [n1, n2],
      alreadyAssigned: [],
      numbers: [n1, n2],
    });
    const repeat = await a.request('POST', `/compliance/campaigns/${campaign.id}/numbers/assign`, { numbers: [n2] });
    expect(repeat.body).toMatchObject({ assigned: [], alreadyAssigned: [n2] });
    const list = await a.request('GET', `/compliance/campaigns/${campaign.id}/numbers`);
    expect(list.body).toMatchObject({
      campaignId: campaign.id,
      numbers: [
        { number: n1, assignedAt: expect.any(String) },
        { number: n2, assignedAt: expect.any(String) },
      ],
    });
    const mapping = await a.request('GET', '/compliance/did-mapping');
    expect(mapping.status).toBe(200);
    expect(mapping.body).toMatchObject([
      { number: n1, campaignId: campaign.id, campaignStatus: 'PENDING' },
      { number: n2, campaignId: campaign.id, campaignStatus: 'PENDING' },
      { number: n3, campaignId: null, campaignStatus: null },
    ]);
    const paged = await a.request('GET', '/compliance/did-mapping?limit=2');
    expect(paged.body).toHaveLength(2);
    const next = await a.request('GET', `/compliance/did-mapping?cursor=${paged.headers.get('x-next-cursor')}`);
    expect(next.body).toEqual([
      { number: n3, campaignId: null, campaignStatus: null, state: 'unassigned', assignmentStatus: null },
    ]);
    expect(next.headers.get('x-next-cursor')).toBeNull();
    const remove = await a.request('POST', `/compliance/campaigns/${campaign.id}/numbers/remove`, { numbers: [n1] });
    expect(remove.status).toBe(200);
    expect(remove.body).toEqual({ campaignId: campaign.id, removed: [n1], numbers: [n2] });
    const notLinked = await a.request('POST', `/compliance/campaigns/${campaign.id}/numbers/remove`, {
      numbers: [n2, n3],
    });
    expect(notLinked.status).toBe(422);
    expect(notLinked.body.error.code).toBe('NUMBERS_NOT_ASSIGNED');
    expect(detailCodes(notLinked.body)).toEqual(['numbers.1:NUMBER_NOT_ASSIGNED']);
    expect((await a.request('GET', `/compliance/campaigns/${campaign.id}/numbers`)).body.numbers).toHaveLength(1);
    const events = await t.app.ctx.db.event.findMany({
      where: { accountId: a.accountId, eventType: { startsWith: '10dlc.numbers' } },
      orderBy: { id: 'asc' },
    });
    expect(events.map((e) => [e.eventType, e.payload])).toEqual([
      ['10dlc.numbers.assigned', { campaignId: campaign.id, numbers: [n1, n2] }],
      ['10dlc.numbers.removed', { campaignId: campaign.id, numbers: [n1] }],
    ]);
  });

  it('section 7: a DID linked to another campaign answers 409 and nothing of the call is assigned', async ({
    t,
    a,
  }) => {
    const { campaign: first } = await newCampaign(t, a);
    const { campaign: second } = await newCampaign(t, a);
    const [n1, n2] = freshNumbers(2).sort() as [string, string];
    await a.request('POST', '/api/numbers', { numbers: [n1, n2] });
    await a.request('POST', `/compliance/campaigns/${first.id}/numbers/assign`, { numbers: [n1] });
    const res = await a.request('POST', `/compliance/campaigns/${second.id}/numbers/assign`, { numbers: [n2, n1] });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('NUMBER_ASSIGNED_ELSEWHERE');
    expect(detailCodes(res.body)).toEqual(['numbers.1:NUMBER_ASSIGNED_ELSEWHERE']);
    expect((await a.request('GET', `/compliance/campaigns/${second.id}/numbers`)).body.numbers).toEqual([]);
  });

  it('section 7: unprovisioned numbers are refused (422) and nothing of the call is assigned', async ({ t, a }) => {
    const other = await t.newAccount();
    const { campaign } = await newCampaign(t, a);
    const [mine, theirs, nobody] = freshNumbers(3) as [string, string, string];
    await a.request('POST', '/api/numbers', { numbers: [mine] });
    await other.request('POST', '/api/numbers', { numbers: [theirs] });
    for (const foreign of [theirs, nobody]) {
      const res = await a.request('POST', `/compliance/campaigns/${campaign.id}/numbers/assign`, {
        numbers: [mine, foreign],
      });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('NUMBERS_NOT_PROVISIONED');
      expect(detailCodes(res.body)).toEqual(['numbers.1:NUMBER_NOT_PROVISIONED']);
    }
    expect((await a.request('GET', `/compliance/campaigns/${campaign.id}/numbers`)).body.numbers).toEqual([]);
    expect(await t.app.ctx.db.phoneNumber.count({ where: { campaignId: campaign.id } })).toBe(0);
  });

  it('section 7: deleting a brand with campaigns answers 409 BRAND_HAS_CAMPAIGNS; after the campaign is gone it works', async ({
    t,
    a,
  }) => {
    const { brand, campaign } = await newCampaign(t, a);
    const res = await a.request('DELETE', `/compliance/brands/${brand.id}`);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('BRAND_HAS_CAMPAIGNS');
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).status).toBe(200);
    await a.request('DELETE', `/compliance/campaigns/${campaign.id}`);
    expect((await a.request('DELETE', `/compliance/brands/${brand.id}`)).status).toBe(200);
  });

  it('section 7: deleting a campaign unlinks its DIDs (they stay provisioned, unassigned in did-mapping)', async ({
    t,
    a,
  }) => {
    const { campaign } = await newCampaign(t, a);
    const numbers = freshNumbers(2).sort();
    await a.request('POST', '/api/numbers', { numbers });
    await a.request('POST', `/compliance/campaigns/${campaign.id}/numbers/assign`, { numbers });
    const res = await a.request('DELETE', `/compliance/campaigns/${campaign.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: campaign.id, deleted: true, unlinkedNumbers: numbers });
    expect((await a.request('GET', `/compliance/campaigns/${campaign.id}`)).status).toBe(404);
    expect((await a.request('GET', '/compliance/did-mapping')).body).toMatchObject(
      numbers.map((number) => ({ number, campaignId: null, campaignStatus: null })),
    );
    expect(await t.app.ctx.db.registryTask.count({ where: { campaignId: campaign.id } })).toBe(0);
    const released = await a.request('DELETE', `/api/numbers/${encodeURIComponent(numbers[0]!)}`);
    expect(released.status).toBe(200);
  });

  it('refuses to release an assigned number (409 NUMBER_ASSIGNED)', async ({ t, a }) => {
    const { campaign } = await newCampaign(t, a);
    const [n] = freshNumbers(1) as [string];
    await a.request('POST', '/api/numbers', { numbers: [n] });
    await a.request('POST', `/compliance/campaigns/${campaign.id}/numbers/assign`, { numbers: [n] });
    const res = await a.request('DELETE', `/api/numbers/${encodeURIComponent(n)}`);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('NUMBER_ASSIGNED');
    expect((await a.request('GET', '/api/numbers')).body.numbers).toHaveLength(1);
  });

  it('updates a campaign: numberPool alone keeps the review, content changes re-review; brandId/usecase are fixed', async ({
    t,
    a,
  }) => {
    const { campaign } = await newCampaign(t, a);
    clock.advance(40_000);
    await t.drain();
    expect((await a.request('GET', `/compliance/campaigns/${campaign.id}`)).body.status).toBe('APPROVED');
    const pool = await a.request('PUT', `/compliance/campaigns/${campaign.id}`, { numberPool: true });
    expect(pool.status).toBe(200);
    expect(pool.body).toMatchObject({ numberPool: true, status: 'APPROVED' });
    const description = 'Order updates, delivery windows and support conversations for Acme customers.';
    const content = await a.request('PUT', `/compliance/campaigns/${campaign.id}`, { description });
    expect(content.body).toMatchObject({ description, status: 'PENDING' });
    expect(
      content.body.carriers.every(
        (c: { status: string; approvedAt: null }) => c.status === 'PENDING' && c.approvedAt === null,
      ),
    ).toBe(true);
    const read = (await a.request('GET', `/compliance/campaigns/${campaign.id}`)).body;
    const roundTrip = await a.request('PUT', `/compliance/campaigns/${campaign.id}`, { ...read, numberPool: false });
    expect(roundTrip.status).toBe(200);
    expect(roundTrip.body).toMatchObject({ numberPool: false, description });
    const fixed = await a.request('PUT', `/compliance/campaigns/${campaign.id}`, { usecase: 'MARKETING' });
    expect(fixed.status).toBe(422);
    expect(fixed.body.error).toMatchObject({ code: 'IMMUTABLE_FIELD', field: 'usecase' });
    const invalid = await a.request('PUT', `/compliance/campaigns/${campaign.id}`, { description: 'short', extra: 1 });
    expect(detailCodes(invalid.body)).toEqual(['description:TOO_SHORT', 'extra:UNKNOWN_FIELD']);
  });

  it('validates nudge bodies (nudgeIntent enum, description ≤ 1024)', async ({ t, a }) => {
    const { campaign } = await newCampaign(t, a);
    const res = await a.request('POST', `/compliance/campaigns/${campaign.id}/nudge`, {
      nudgeIntent: 'PLEASE',
      description: 'x'.repeat(1025),
    });
    expect(res.status).toBe(400);
    expect(detailCodes(res.body)).toEqual(['description:TOO_LONG', 'nudgeIntent:INVALID_ENUM_VALUE']);
  });

  it('spec 4.2: a nudge with no body (or {}) is a review nudge (TCR intent REVIEW)', async ({ t, a }) => {
    const { campaign } = await newCampaign(t, a);
    const before = (await a.request('GET', `/compliance/campaigns/${campaign.id}`)).body;
    expect(before.carriers.some((c: { status: string }) => c.status === 'PENDING')).toBe(true);
    // No body at all, no Content-Type: what spec 4.2 ("nothing") sends.
    const bare = await fetch(`${t.url}/compliance/campaigns/${campaign.id}/nudge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.apiKey}` },
    });
    expect(bare.status).toBe(200);
    expect((await bare.json()).id).toBe(campaign.id);
    // An empty JSON object and an explicit REVIEW answer the same.
    expect((await a.request('POST', `/compliance/campaigns/${campaign.id}/nudge`, {})).status).toBe(200);
    expect(
      (await a.request('POST', `/compliance/campaigns/${campaign.id}/nudge`, { nudgeIntent: 'REVIEW' })).status,
    ).toBe(200);
    // Nothing to appeal: APPEAL_REJECTION must be asked for and is refused here.
    const appeal = await a.request('POST', `/compliance/campaigns/${campaign.id}/nudge`, {
      nudgeIntent: 'APPEAL_REJECTION',
    });
    expect(appeal.status).toBe(422);
    expect(appeal.body.error.code).toBe('NOTHING_TO_APPEAL');
  });

  it('isolates accounts: another account’s campaign answers 404 on every campaign endpoint', async ({ t }) => {
    const owner = await t.newAccount();
    const other = await t.newAccount();
    const { campaign } = await newCampaign(t, owner);
    const [n] = freshNumbers(1) as [string];
    await other.request('POST', '/api/numbers', { numbers: [n] });
    for (const [method, path, body] of [
      ['GET', `/compliance/campaigns/${campaign.id}`, undefined],
      ['PUT', `/compliance/campaigns/${campaign.id}`, { numberPool: true }],
      ['DELETE', `/compliance/campaigns/${campaign.id}`, undefined],
      ['POST', `/compliance/campaigns/${campaign.id}/nudge`, { nudgeIntent: 'REVIEW' }],
      ['POST', `/compliance/campaigns/${campaign.id}/expedite`, undefined],
      ['GET', `/compliance/campaigns/${campaign.id}/numbers`, undefined],
      ['POST', `/compliance/campaigns/${campaign.id}/numbers/assign`, { numbers: [n] }],
      ['POST', `/compliance/campaigns/${campaign.id}/numbers/remove`, { numbers: [n] }],
      ['GET', `/compliance/campaigns/${campaign.id}/carriers`, undefined],
    ] as const) {
      const res = await other.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await other.request('GET', '/compliance/campaigns')).body.campaigns).toEqual([]);
    expect((await other.request('GET', '/compliance/did-mapping')).body).toMatchObject([
      { number: n, campaignId: null, campaignStatus: null },
    ]);
    expect((await owner.request('DELETE', `/api/numbers/${encodeURIComponent(n)}`)).status).toBe(404);
    expect((await owner.request('GET', `/compliance/campaigns/${campaign.id}`)).status).toBe(200);
  });
});
