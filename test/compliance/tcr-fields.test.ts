import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { appTest } from '../helpers/fixture.js';
import { activeBrand, brandBody, campaignBody, detailCodes } from './fixtures.js';

/** Every TCR brand field of a sole proprietor (research file §5.1, §5.2). */
const soleProp = {
  name: 'Jane Doe Photography',
  ein: '12-3456780',
  vertical: 'ENTERTAINMENT',
  entityType: 'SOLE_PROPRIETOR',
  displayName: 'Jane Doe Photo',
  street: '1 Market St',
  city: 'San Francisco',
  state: 'CA',
  postalCode: '94105',
  firstName: 'Jane',
  lastName: 'Doe',
  mobilePhone: '+14155550123',
  referenceId: 'jane-001',
  mock: true,
};

const it = appTest({ clock: new ManualClock() });

describe("TCR's brand and campaign fields (issue 14)", () => {
  it('stores and returns every TCR brand field; companyName is the legal name, displayName defaults to it', async ({
    a,
  }) => {
    const res = await a.request('POST', '/compliance/brands', soleProp);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      ...soleProp,
      companyName: 'Jane Doe Photography',
      brandRelationship: null,
      altBusinessId: null,
      businessContactEmail: null,
      status: 'PENDING',
    });
    const got = await a.request('GET', `/compliance/brands/${res.body.id}`);
    expect(got.body).toEqual(res.body);

    const plain = await a.request('POST', '/compliance/brands', brandBody());
    expect(plain.status).toBe(201);
    expect(plain.body).toMatchObject({
      displayName: 'Acme Widgets LLC',
      companyName: 'Acme Widgets LLC',
      brandRelationship: 'BASIC_ACCOUNT',
      mock: false,
      referenceId: null,
    });

    const alias = await a.request('POST', '/compliance/brands', {
      ...brandBody({ name: undefined }),
      companyName: 'Alias Corp',
      altBusinessIdType: 'DUNS',
      altBusinessId: '123456789',
      brandRelationship: 'KEY_ACCOUNT',
    });
    expect(alias.status).toBe(201);
    expect(alias.body).toMatchObject({ name: 'Alias Corp', companyName: 'Alias Corp', altBusinessIdType: 'DUNS' });
  });

  it('reports every TCR brand violation at once: required by entity type, lengths, US formats, pairs', async ({
    a,
  }) => {
    const res = await a.request('POST', '/compliance/brands', {
      name: 'Jane Doe',
      companyName: 'Someone Else',
      ein: '12-3456789',
      vertical: 'RETAIL',
      entityType: 'SOLE_PROPRIETOR',
      state: 'California',
      postalCode: '9410',
      website: `https://${'a'.repeat(100)}.example`,
      email: `${'a'.repeat(95)}@x.example`,
      altBusinessId: 'X1',
      referenceId: 'r'.repeat(51),
      mobilePhone: '555-0100',
      street: 's'.repeat(101),
    });
    expect(res.status).toBe(400);
    expect(detailCodes(res.body)).toEqual([
      'altBusinessIdType:REQUIRED',
      'companyName:CONFLICTING_FIELDS',
      'email:TOO_LONG',
      'firstName:REQUIRED',
      'lastName:REQUIRED',
      'mobilePhone:INVALID_FORMAT',
      'postalCode:INVALID_FORMAT',
      'referenceId:TOO_LONG',
      'state:INVALID_FORMAT',
      'street:TOO_LONG',
      'website:TOO_LONG',
    ]);
    const typeOnly = await a.request('POST', '/compliance/brands', brandBody({ altBusinessIdType: 'LEI' }));
    expect(detailCodes(typeOnly.body)).toEqual(['altBusinessId:REQUIRED']);
    // Outside the US, state and postal code are free text within TCR's lengths.
    const ca = await a.request(
      'POST',
      '/compliance/brands',
      brandBody({ country: 'CA', state: 'Ontario', postalCode: 'M5V 2T6' }),
    );
    expect(ca.status).toBe(201);
  });

  it('keeps referenceId unique per account, case-insensitively (409), and mock fixed after registration', async ({
    t,
    a,
  }) => {
    const first = await a.request('POST', '/compliance/brands', brandBody({ referenceId: 'Ref-A' }));
    expect(first.status).toBe(201);
    const dup = await a.request('POST', '/compliance/brands', brandBody({ referenceId: 'ref-a' }));
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'REFERENCE_ID_TAKEN', field: 'referenceId' });
    const other = await t.newAccount();
    expect((await other.request('POST', '/compliance/brands', brandBody({ referenceId: 'REF-A' }))).status).toBe(201);
    const second = await a.request('POST', '/compliance/brands', brandBody({ referenceId: 'ref-b' }));
    const put = await a.request('PUT', `/compliance/brands/${second.body.id}`, brandBody({ referenceId: 'REF-A' }));
    expect(put.status).toBe(409);
    // Equality, not a pattern: `_` and `%` are plain characters, on registration and on update alike.
    const pattern = await a.request('POST', '/compliance/brands', brandBody({ referenceId: 'ref_%' }));
    expect(pattern.status).toBe(201);
    expect((await a.request('POST', '/compliance/brands', brandBody({ referenceId: 'REFxy' }))).status).toBe(201);
    const renamed = await a.request(
      'PUT',
      `/compliance/brands/${pattern.body.id}`,
      brandBody({ referenceId: 'REF_%' }),
    );
    expect(renamed.status).toBe(200);
    const likeOther = await a.request(
      'PUT',
      `/compliance/brands/${pattern.body.id}`,
      brandBody({ referenceId: 'ref-_' }),
    );
    expect(likeOther.status).toBe(200);
    const mock = await a.request(
      'PUT',
      `/compliance/brands/${second.body.id}`,
      brandBody({ referenceId: 'ref-b', mock: true }),
    );
    expect(mock.status).toBe(422);
    expect(mock.body.error).toMatchObject({ code: 'IMMUTABLE_FIELD', field: 'mock' });
    const ok = await a.request('PUT', `/compliance/brands/${second.body.id}`, {
      ...second.body,
      displayName: 'Acme',
      city: 'Austin',
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ displayName: 'Acme', city: 'Austin', referenceId: 'ref-b' });
  });

  it('stores every TCR campaign field and validates lengths, keyword format and sub-use-case counts at once', async ({
    t,
    a,
  }) => {
    const brand = await activeBrand(t, a);
    const full = campaignBody(brand.id, {
      usecase: 'MIXED',
      subUsecases: ['CUSTOMER_CARE', 'DELIVERY_NOTIFICATIONS'],
      messageFlow: 'Customers opt in by checking a box at checkout on https://acme.example/checkout.',
      helpMessage: 'Acme: for help call 415-555-0100 or email help@acme.example. Reply STOP to opt out.',
      optinMessage:
        'Acme: you are subscribed to order updates, up to 4 msgs/month. Msg & data rates may apply. Reply HELP for help, STOP to cancel.',
      optoutMessage: 'Acme: you are unsubscribed and will receive no more messages.',
      helpKeywords: 'HELP,INFO',
      optinKeywords: 'START,YES',
      optoutKeywords: 'STOP,QUIT,END',
      embeddedLink: true,
      ageGated: false,
      directLending: false,
      affiliateMarketing: false,
      privacyPolicyLink: 'https://acme.example/privacy',
      termsAndConditionsLink: 'https://acme.example/terms',
    });
    const res = await a.request('POST', '/compliance/campaigns', full);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ...full, subUsecases: ['CUSTOMER_CARE', 'DELIVERY_NOTIFICATION'] });

    const bad = await a.request(
      'POST',
      '/compliance/campaigns',
      campaignBody(brand.id, {
        usecase: 'MIXED',
        subUsecases: ['MARKETING'],
        messageFlow: 'too short',
        helpMessage: 'x'.repeat(321),
        optoutKeywords: 'STOP, QUIT',
        helpKeywords: 'HELP!',
        privacyPolicyLink: 'ftp://acme.example',
        embeddedPhone: 'no',
      }),
    );
    expect(bad.status).toBe(400);
    expect(detailCodes(bad.body)).toEqual([
      'embeddedPhone:INVALID_TYPE',
      'helpKeywords:INVALID_KEYWORDS',
      'helpMessage:TOO_LONG',
      'messageFlow:TOO_SHORT',
      'optoutKeywords:INVALID_KEYWORDS',
      'privacyPolicyLink:INVALID_FORMAT',
      'subUsecases:SUBUSECASE_COUNT',
    ]);
    const standard = await a.request(
      'POST',
      '/compliance/campaigns',
      campaignBody(brand.id, { subUsecases: ['MARKETING'] }),
    );
    expect(detailCodes(standard.body)).toEqual(['subUsecases:SUBUSECASE_COUNT']);

    const put = await a.request('PUT', `/compliance/campaigns/${res.body.id}`, { subUsecases: ['MARKETING'] });
    expect(put.status).toBe(400);
    expect(detailCodes(put.body)).toEqual(['subUsecases:SUBUSECASE_COUNT']);
    const cleared = await a.request('PUT', `/compliance/campaigns/${res.body.id}`, {
      helpMessage: null,
      ageGated: true,
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({
      helpMessage: null,
      ageGated: true,
      messageFlow: (full as Record<string, unknown>).messageFlow,
    });
  });
});
