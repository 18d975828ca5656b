import { gunzipSync } from 'node:zlib';
import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { appTest } from '../helpers/fixture.js';
import { rawGet } from '../helpers/raw-http.js';
import { activeBrand, brandBody, detailCodes } from './fixtures.js';

const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const clock = new ManualClock();
const it = appTest({ clock });

describe('brands over REST (spec 4.1)', () => {
  it('registers a brand in PENDING / SELF_DECLARED with the spec 2.1 fields and default country US', async ({ a }) => {
    const res = await a.request('POST', '/compliance/brands', brandBody());
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Acme Widgets LLC',
      ein: '12-3456789',
      vertical: 'RETAIL',
      entityType: 'PRIVATE_PROFIT',
      country: 'US',
      website: 'https://acme.example',
      email: 'compliance@acme.example',
      phone: '+14155550100',
      status: 'PENDING',
      identityStatus: 'SELF_DECLARED',
      stockSymbol: null,
    });
    expect(res.body.createdAt).toMatch(TS);
    const got = await a.request('GET', `/compliance/brands/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('answers GET /compliance/brands/{id} with exactly these headers and the DTO as one JSON text', async ({
    t,
    a,
  }) => {
    const made = await a.request('POST', '/compliance/brands', brandBody({ name: 'Header Check LLC' }));
    // node:http, not fetch: fetch asks for gzip on its own and hides the bytes on the wire.
    const get = (headers: Record<string, string>) =>
      rawGet(`${t.url}/compliance/brands/${made.body.id}`, { authorization: `Bearer ${a.apiKey}`, ...headers });
    const res = await get({ 'x-request-id': 'brand-bytes-1' });
    const text = res.body.toString('utf8');
    expect(res.status).toBe(200);
    // Nothing else on the way: no vary or content-encoding without Accept-Encoding.
    expect(Object.keys(res.headers).sort()).toEqual([
      'connection',
      'content-length',
      'content-type',
      'date',
      'keep-alive',
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'x-request-id',
    ]);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-request-id']).toBe('brand-bytes-1');
    expect(res.headers['content-length']).toBe(String(res.body.length));
    // The same bytes as the registration's answer (same DTO, same key order), written by one JSON.stringify.
    expect(text).toBe(JSON.stringify(made.body));
    // With Accept-Encoding the same text goes out compressed (it is over 1 KiB), saying so in Vary.
    const gz = await get({ 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toMatch(/accept-encoding/i);
    expect(gunzipSync(gz.body).toString('utf8')).toBe(text);
  });

  it('lists brands oldest first, paged by limit and cursor', async ({ a }) => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await a.request('POST', '/compliance/brands', brandBody({ name: `B${i}` }))).body.id);
    const first = await a.request('GET', '/compliance/brands?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.brands.map((b: { id: string }) => b.id)).toEqual(ids.slice(0, 2));
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await a.request('GET', `/compliance/brands?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.brands.map((b: { id: string }) => b.id)).toEqual(ids.slice(2));
    expect(second.body.nextCursor).toBeNull();
    const all = await a.request('GET', '/compliance/brands');
    expect(all.body.brands).toHaveLength(3);
    const bad = await a.request('GET', '/compliance/brands?cursor=%25%25');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_CURSOR');
    const tooMany = await a.request('GET', '/compliance/brands?limit=500');
    expect(tooMany.status).toBe(400);
    expect(detailCodes(tooMany.body)).toEqual(['query.limit:TOO_BIG']);
  });

  it('reports every validation rule at once (EIN, enums, email, URL, phone, country, required)', async ({ t, a }) => {
    const res = await a.request('POST', '/compliance/brands', {
      ein: '123456789',
      vertical: 'SPACE',
      entityType: 'PIRATE',
      country: 'usa',
      website: 'not a url',
      email: 'nobody',
      phone: '555-0100',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(detailCodes(res.body)).toEqual([
      'country:INVALID_FORMAT',
      'ein:INVALID_FORMAT',
      'email:INVALID_FORMAT',
      'entityType:INVALID_ENUM_VALUE',
      'name:REQUIRED',
      'phone:INVALID_FORMAT',
      'vertical:INVALID_ENUM_VALUE',
      'website:INVALID_FORMAT',
    ]);
    expect(await t.app.ctx.db.brand.count({ where: { accountId: a.accountId } })).toBe(0);
  });

  it('requires name, ein, vertical and entityType', async ({ a }) => {
    const res = await a.request('POST', '/compliance/brands', {});
    expect(detailCodes(res.body)).toEqual([
      'ein:REQUIRED',
      'entityType:REQUIRED',
      'name:REQUIRED',
      'vertical:REQUIRED',
    ]);
  });

  it('requires stockSymbol, stockExchange and businessContactEmail for PUBLIC_PROFIT, alongside other violations', async ({
    a,
  }) => {
    const res = await a.request('POST', '/compliance/brands', brandBody({ entityType: 'PUBLIC_PROFIT', ein: 'x' }));
    expect(res.status).toBe(400);
    expect(detailCodes(res.body)).toEqual([
      'businessContactEmail:REQUIRED',
      'ein:INVALID_FORMAT',
      'stockExchange:REQUIRED',
      'stockSymbol:REQUIRED',
    ]);
    const ok = await a.request(
      'POST',
      '/compliance/brands',
      brandBody({
        entityType: 'PUBLIC_PROFIT',
        stockSymbol: 'ACME',
        stockExchange: 'NASDAQ',
        businessContactEmail: 'ir@acme.example',
      }),
    );
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ stockSymbol: 'ACME', stockExchange: 'NASDAQ' });
  });

  it('answers malformed JSON with 400 MALFORMED_JSON', async ({ a }) => {
    const res = await a.request('POST', '/compliance/brands', '{"name":', { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('MALFORMED_JSON');
  });

  it('serves the three enums, the vertical list exactly as spec 2.10, and 404 for others', async ({ a }) => {
    const vertical = await a.request('GET', '/compliance/enums/vertical');
    expect(vertical.body).toEqual({
      name: 'vertical',
      values: [
        'AGRICULTURE',
        'COMMUNICATION',
        'EDUCATION',
        'ENTERTAINMENT',
        'FINANCE',
        'GAMBLING',
        'GOVERNMENT',
        'HEALTHCARE',
        'HOSPITALITY',
        'INSURANCE',
        'LEGAL',
        'MANUFACTURING',
        'NGO',
        'POLITICAL',
        'REAL_ESTATE',
        'RELIGION',
        'RETAIL',
        'TECHNOLOGY',
        'TRANSPORTATION',
      ],
    });
    const entity = await a.request('GET', '/compliance/enums/entityType');
    expect(entity.body.values).toEqual([
      'PRIVATE_PROFIT',
      'PUBLIC_PROFIT',
      'NON_PROFIT',
      'GOVERNMENT',
      'SOLE_PROPRIETOR',
    ]);
    const usecase = await a.request('GET', '/compliance/enums/usecase');
    expect(usecase.body.values).toEqual(
      expect.arrayContaining([
        'MARKETING',
        'CUSTOMER_CARE',
        'DELIVERY_NOTIFICATIONS',
        'ACCOUNT_NOTIFICATION',
        'POLITICAL',
      ]),
    );
    const other = await a.request('GET', '/compliance/enums/colour');
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('NOT_FOUND');
  });

  it('updates a brand: contact fields keep ACTIVE, an identity field sends it back to PENDING', async ({ t, a }) => {
    const brand = await activeBrand(t, a);
    const contact = await a.request(
      'PUT',
      `/compliance/brands/${brand.id}`,
      brandBody({ website: 'https://acme2.example' }),
    );
    expect(contact.status).toBe(200);
    expect(contact.body).toMatchObject({
      status: 'ACTIVE',
      identityStatus: 'VERIFIED',
      website: 'https://acme2.example',
    });
    const identity = await a.request('PUT', `/compliance/brands/${brand.id}`, brandBody({ name: 'Acme Holdings LLC' }));
    expect(identity.body).toMatchObject({
      status: 'PENDING',
      identityStatus: 'SELF_DECLARED',
      name: 'Acme Holdings LLC',
    });
    clock.advance(5_000);
    await t.drain();
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).body.status).toBe('ACTIVE');
    const invalid = await a.request('PUT', `/compliance/brands/${brand.id}`, { name: 'x' });
    expect(invalid.status).toBe(400);
    const read = (await a.request('GET', `/compliance/brands/${brand.id}`)).body;
    const roundTrip = await a.request('PUT', `/compliance/brands/${brand.id}`, { ...read, vertical: 'TECHNOLOGY' });
    expect(roundTrip.status, JSON.stringify(roundTrip.body)).toBe(200);
    expect(roundTrip.body).toMatchObject({ vertical: 'TECHNOLOGY', status: 'ACTIVE', id: brand.id });
  });

  it('deletes a brand without campaigns (then 404)', async ({ t, a }) => {
    const brand = (await a.request('POST', '/compliance/brands', brandBody())).body;
    const del = await a.request('DELETE', `/compliance/brands/${brand.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: brand.id, deleted: true });
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).status).toBe(404);
    expect(await t.app.ctx.db.registryTask.count({ where: { brandId: brand.id } })).toBe(0);
  });

  it('qualifies an ACTIVE brand for standard use cases, with per-carrier metadata; vetted-only ones need vetting', async ({
    t,
    a,
  }) => {
    const pending = (await a.request('POST', '/compliance/brands', brandBody())).body;
    const before = await a.request('GET', `/compliance/brands/${pending.id}/qualify`);
    expect(before.body).toMatchObject({ qualified: false, status: 'PENDING' });
    const brand = await activeBrand(t, a);
    const res = await a.request('GET', `/compliance/brands/${brand.id}/qualify`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ brandId: brand.id, qualified: true, identityStatus: 'VERIFIED' });
    const marketing = res.body.usecases.find((u: { usecase: string }) => u.usecase === 'MARKETING');
    expect(marketing.qualifies).toBe(true);
    expect(marketing.carriers.map((c: { networkId: number }) => c.networkId)).toEqual([10017, 10035, 10037, 10038]);
    expect(marketing.carriers[0]).toEqual({
      networkId: 10017,
      carrier: 'AT&T',
      qualifies: true,
      carrierReviewRequired: false,
      minMsgSamples: 2,
      subscriberOptInRequired: true,
      subscriberOptOutRequired: true,
      subscriberHelpRequired: true,
      embeddedLinksAllowed: true,
      embeddedPhoneAllowed: true,
      dailyCap: null,
      messagesPerMinute: 75,
      messageClass: 'T',
    });
    const political = res.body.usecases.find((u: { usecase: string }) => u.usecase === 'POLITICAL');
    expect(political).toMatchObject({
      qualifies: false,
      carriers: expect.arrayContaining([expect.objectContaining({ carrierReviewRequired: true })]),
    });
  });

  it('fails a brand with EIN prefix 00 (UNVERIFIED, TAX_ID feedback); fix + revet makes it ACTIVE', async ({
    t,
    a,
  }) => {
    const brand = (await a.request('POST', '/compliance/brands', brandBody({ ein: '00-1234567' }))).body;
    const early = await a.request('GET', `/compliance/brands/${brand.id}/feedback`);
    expect(early.body.category).toEqual([]);
    clock.advance(5_000);
    await t.drain();
    const failed = await a.request('GET', `/compliance/brands/${brand.id}`);
    expect(failed.body).toMatchObject({ status: 'FAILED', identityStatus: 'UNVERIFIED' });
    const feedback = await a.request('GET', `/compliance/brands/${brand.id}/feedback`);
    expect(feedback.status).toBe(200);
    expect(feedback.body).toMatchObject({ brandId: brand.id, status: 'FAILED', identityStatus: 'UNVERIFIED' });
    expect(feedback.body.category).toEqual([
      { id: 'TAX_ID', displayName: 'Tax ID', description: expect.any(String), fields: ['ein', 'name'] },
    ]);
    // Revet without a fix fails again; PUT with a corrected EIN re-vets on its own.
    const revet = await a.request('POST', `/compliance/brands/${brand.id}/revet`);
    expect(revet.status).toBe(200);
    expect(revet.body).toMatchObject({ status: 'PENDING', identityStatus: 'SELF_DECLARED' });
    const again = await a.request('POST', `/compliance/brands/${brand.id}/revet`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('BRAND_PENDING');
    clock.advance(5_000);
    await t.drain();
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).body.status).toBe('FAILED');
    await a.request('PUT', `/compliance/brands/${brand.id}`, brandBody({ ein: '12-1234567' }));
    clock.advance(5_000);
    await t.drain();
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).body).toMatchObject({
      status: 'ACTIVE',
      identityStatus: 'VERIFIED',
    });
    expect((await a.request('GET', `/compliance/brands/${brand.id}/feedback`)).body.category).toEqual([]);
  });

  it.for([
    ['01-1234567', 'STOCK_SYMBOL'],
    ['02-1234567', 'GOVERNMENT_ENTITY'],
    ['03-1234567', 'NONPROFIT'],
    ['04-1234567', 'OTHERS'],
  ] as const)('EIN %s fails with %s feedback', async ([ein, category], { t, a }) => {
    const brand = (await a.request('POST', '/compliance/brands', brandBody({ ein }))).body;
    clock.advance(5_000);
    await t.drain();
    const feedback = await a.request('GET', `/compliance/brands/${brand.id}/feedback`);
    expect(feedback.body.category.map((c: { id: string }) => c.id)).toEqual([category]);
  });

  it('applies for vetting: PENDING record, reused while pending, APPROVED with a score and VETTED_VERIFIED later', async ({
    t,
    a,
  }) => {
    const brand = await activeBrand(t, a, { ein: '12-3456789' });
    const first = await a.request('POST', `/compliance/brands/${brand.id}/vetting/apply`);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      brandId: brand.id,
      evpId: 'AEGIS',
      vettingClass: 'STANDARD',
      status: 'PENDING',
      vettingScore: null,
      completedAt: null,
    });
    const second = await a.request('POST', `/compliance/brands/${brand.id}/vetting/apply`, { evpId: 'WMC' });
    expect(second.status).toBe(200);
    expect(second.body.vettingId).toBe(first.body.vettingId);
    clock.advance(30_000);
    await t.drain();
    const list = await a.request('GET', `/compliance/brands/${brand.id}/vettings`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      expect.objectContaining({ vettingId: first.body.vettingId, status: 'APPROVED', vettingScore: 50 + (89 % 51) }),
    ]);
    expect(list.body[0].completedAt).toMatch(TS);
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).body.identityStatus).toBe('VETTED_VERIFIED');
    const third = await a.request('POST', `/compliance/brands/${brand.id}/vetting/apply`, {
      evpId: 'WMC',
      vettingClass: 'POLITICAL',
    });
    expect(third.status).toBe(201);
    expect(third.body).toMatchObject({ evpId: 'WMC', vettingClass: 'POLITICAL' });
    const bad = await a.request('POST', `/compliance/brands/${brand.id}/vetting/apply`, { evpId: 'ACME' });
    expect(detailCodes(bad.body)).toEqual(['evpId:INVALID_ENUM_VALUE']);
  });

  it('fails the vetting of an EIN with prefix 09 and refuses vetting of a brand that is not ACTIVE', async ({
    t,
    a,
  }) => {
    const brand = await activeBrand(t, a, { ein: '09-1234567' });
    await a.request('POST', `/compliance/brands/${brand.id}/vetting/apply`);
    clock.advance(30_000);
    await t.drain();
    const list = await a.request('GET', `/compliance/brands/${brand.id}/vettings`);
    expect(list.body[0]).toMatchObject({ status: 'FAILED', vettingScore: null });
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).body.identityStatus).toBe('VERIFIED');
    const pending = (await a.request('POST', '/compliance/brands', brandBody())).body;
    const refused = await a.request('POST', `/compliance/brands/${pending.id}/vetting/apply`);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('BRAND_NOT_ACTIVE');
  });

  it('creates one brand for a retried POST with the same Idempotency-Key', async ({ a }) => {
    const headers = { 'idempotency-key': 'register-acme-1' };
    const first = await a.request('POST', '/compliance/brands', brandBody(), headers);
    const retry = await a.request('POST', '/compliance/brands', brandBody(), headers);
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.id).toBe(first.body.id);
    const list = await a.request('GET', '/compliance/brands');
    expect(list.body.brands).toHaveLength(1);
  });

  it('isolates accounts: another account’s brand answers 404 everywhere and is not listed', async ({ t }) => {
    const owner = await t.newAccount();
    const other = await t.newAccount();
    const brand = (await owner.request('POST', '/compliance/brands', brandBody())).body;
    for (const [method, path] of [
      ['GET', `/compliance/brands/${brand.id}`],
      ['PUT', `/compliance/brands/${brand.id}`],
      ['DELETE', `/compliance/brands/${brand.id}`],
      ['GET', `/compliance/brands/${brand.id}/qualify`],
      ['POST', `/compliance/brands/${brand.id}/revet`],
      ['GET', `/compliance/brands/${brand.id}/feedback`],
      ['POST', `/compliance/brands/${brand.id}/vetting/apply`],
      ['GET', `/compliance/brands/${brand.id}/vettings`],
    ] as const) {
      const res = await other.request(method, path, method === 'PUT' ? brandBody() : undefined);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect((await other.request('GET', '/compliance/brands')).body.brands).toEqual([]);
    expect((await owner.request('GET', `/compliance/brands/${brand.id}`)).status).toBe(200);
  });

  it('needs the compliance scope (403) and a key (401)', async ({ t }) => {
    const a = await t.newAccount(['email']);
    expect((await a.request('GET', '/compliance/brands')).status).toBe(403);
    const res = await a.request('GET', '/compliance/brands', undefined, { authorization: 'Bearer nope' });
    expect(res.status).toBe(401);
  });
});
