// Spec 4.1/4.2: GET /compliance/brands and GET /compliance/campaigns answer every item of the account when no
// `limit` is given (streamed from the database in chunks of 200, so more than one chunk is read here); with `limit`
// they page (issue 22, item 7).
import { describe, expect } from 'vitest';
import { STREAM_CHUNK } from '../../src/domain/paging.js';
import { ManualClock } from '../../src/infra/clock.js';
import { appTest } from '../helpers/fixture.js';
import { activeBrand, brandBody, campaignBody } from './fixtures.js';

const it = appTest({ clock: new ManualClock() });

describe('compliance lists without limit answer every item', () => {
  it('GET /compliance/brands without limit answers all brands across chunks; with limit it pages', async ({ t, a }) => {
    const other = await t.newAccount();
    expect((await other.request('POST', '/compliance/brands', brandBody({ name: 'Other LLC' }))).status).toBe(201);
    const total = STREAM_CHUNK + 3;
    const ids: string[] = [];
    for (let i = 0; i < total; i += 8) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(8, total - i) }, (_, j) =>
          a.request('POST', '/compliance/brands', brandBody({ name: `All Brands ${i + j} LLC` })),
        ),
      );
      for (const res of batch) {
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }
    }
    const all = await a.request('GET', '/compliance/brands');
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toMatch(/^application\/json/);
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.brands).toHaveLength(total);
    expect(all.body.brands.map((b: { id: string }) => b.id)).toEqual([...ids].sort());
    expect(all.body.brands[0]).toMatchObject({ id: [...ids].sort()[0], name: expect.any(String) });

    const page = await a.request('GET', '/compliance/brands?limit=2');
    expect(page.body.brands).toHaveLength(2);
    expect(typeof page.body.nextCursor).toBe('string');
    // A cursor without limit: every brand after it.
    const rest = await a.request('GET', `/compliance/brands?cursor=${page.body.nextCursor}`);
    expect(rest.body.brands).toHaveLength(total - 2);
    expect(rest.body.nextCursor).toBeNull();
    const bad = await a.request('GET', '/compliance/brands?cursor=!!');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_CURSOR');
    expect((await a.request('GET', '/compliance/brands?limit=0')).status).toBe(400);
    expect((await a.request('GET', '/compliance/brands?page=1')).status).toBe(400);
  }, 120_000);

  it('GET /compliance/campaigns without limit answers all campaigns (and of one brand)', async ({ t, a }) => {
    const brand = await activeBrand(t, a);
    const other = await activeBrand(t, a);
    const ids: string[] = [];
    for (const b of [brand.id, brand.id, other.id]) {
      const res = await a.request('POST', '/compliance/campaigns', campaignBody(b));
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const all = await a.request('GET', '/compliance/campaigns');
    expect(all.body.campaigns.map((c: { id: string }) => c.id)).toEqual([...ids].sort());
    expect(all.body.nextCursor).toBeNull();
    const ofBrand = await a.request('GET', `/compliance/campaigns?brandId=${brand.id}`);
    expect(ofBrand.body.campaigns.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 2).sort());
    const paged = await a.request('GET', '/compliance/campaigns?limit=1');
    expect(paged.body.campaigns).toHaveLength(1);
    expect(typeof paged.body.nextCursor).toBe('string');
  });
});
