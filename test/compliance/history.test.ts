import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { appTest } from '../helpers/fixture.js';
import { activeBrand, brandBody, campaignBody } from './fixtures.js';

type T = {
  field: string;
  from: string | null;
  to: string;
  cause: string;
  carrier: { networkId: number } | null;
  code: string | null;
};
const brief = (ts: T[]) =>
  ts.map((t) => `${t.field}${t.carrier ? `@${t.carrier.networkId}` : ''}:${t.from}→${t.to}:${t.cause}`);

const clock = new ManualClock();
const it = appTest({ clock });

describe('per-resource history read from the event log (issue 14)', () => {
  it('lists a brand’s transitions with causes and codes, still readable after deletion; 404 for other accounts', async ({
    t,
    a,
  }) => {
    const reg = await a.request('POST', '/compliance/brands', brandBody({ ein: '00-1234588' }));
    clock.advance(5_000);
    await t.drain();
    await a.request('PUT', `/compliance/brands/${reg.body.id}`, brandBody({ ein: '12-1234588' }));
    clock.advance(5_000);
    await t.drain();
    await a.request('POST', `/compliance/brands/${reg.body.id}/vetting/apply`);
    clock.advance(30_000);
    await t.drain();
    await a.request('POST', `/compliance/brands/${reg.body.id}/revet`);
    const res = await a.request('GET', `/compliance/brands/${reg.body.id}/history`);
    expect(res.status).toBe(200);
    expect(brief(res.body.transitions)).toEqual([
      'status:null→PENDING:REGISTERED',
      'status:PENDING→FAILED:REGISTRY_DECISION',
      'status:FAILED→PENDING:UPDATE',
      'status:PENDING→ACTIVE:REGISTRY_DECISION',
      'identityStatus:VERIFIED→VETTED_VERIFIED:VETTING_APPROVED',
      'status:ACTIVE→PENDING:REVET',
    ]);
    expect(res.body.transitions[1]).toMatchObject({ code: 'TAX_ID', at: expect.stringMatching(/\.\d{3}Z$/) });
    const page = await a.request('GET', `/compliance/brands/${reg.body.id}/history?limit=2`);
    const next = await a.request(
      'GET',
      `/compliance/brands/${reg.body.id}/history?limit=10&cursor=${page.body.nextCursor}`,
    );
    expect([...page.body.transitions, ...next.body.transitions]).toEqual(res.body.transitions);
    expect(next.body.nextCursor).toBeNull();

    expect((await a.request('DELETE', `/compliance/brands/${reg.body.id}`)).status).toBe(200);
    const after = await a.request('GET', `/compliance/brands/${reg.body.id}/history`);
    expect(brief(after.body.transitions).at(-1)).toBe('status:null→DELETED:DELETED');
    const other = await t.newAccount();
    expect((await other.request('GET', `/compliance/brands/${reg.body.id}/history`)).status).toBe(404);
    expect((await a.request('GET', '/compliance/brands/nope/history')).status).toBe(404);
    expect((await a.request('GET', `/compliance/brands/${reg.body.id}/history?cursor=x`)).status).toBe(400);
  });

  it('lists a campaign’s status and per-carrier transitions (carrier, reason, code), appeal included', async ({
    t,
    a,
  }) => {
    const brand = await activeBrand(t, a);
    const c = (
      await a.request(
        'POST',
        '/compliance/campaigns',
        campaignBody(brand.id, { description: `${campaignBody(brand.id).description} SANDBOX:REJECT:10035` }),
      )
    ).body;
    clock.advance(40_000);
    await t.drain();
    await a.request('POST', `/compliance/campaigns/${c.id}/nudge`, { nudgeIntent: 'APPEAL_REJECTION' });
    await a.request('DELETE', `/compliance/campaigns/${c.id}`);
    const res = await a.request('GET', `/compliance/campaigns/${c.id}/history`);
    expect(res.status).toBe(200);
    expect(brief(res.body.transitions)).toEqual([
      'status:null→PENDING:CREATED',
      'carrierStatus@10017:PENDING→APPROVED:CARRIER_DECISION',
      'carrierStatus@10035:PENDING→REJECTED:CARRIER_DECISION',
      'carrierStatus@10038:PENDING→APPROVED:CARRIER_DECISION',
      'carrierStatus@10037:PENDING→APPROVED:CARRIER_DECISION',
      'status:PENDING→APPROVED:CARRIER_REVIEW',
      'carrierStatus@10035:REJECTED→PENDING:APPEAL',
      'status:APPROVED→PENDING:CARRIER_REVIEW',
      'status:null→DELETED:DELETED',
    ]);
    const rejected = res.body.transitions[2];
    expect(rejected).toMatchObject({
      carrier: { networkId: 10035, name: 'T-Mobile' },
      code: 'SANDBOX_REJECT',
      reason: expect.stringContaining('reject'),
    });
  });
});
