// The one REST paging rule (issue 22, item 6; docs/conventions.md "Paging"): every list that can grow takes `limit`
// (1–200, default 50) and `cursor`, answers `{<items>, nextCursor}` with `nextCursor: null` on the last page, refuses
// a cursor it did not return (400 INVALID_CURSOR, field `cursor`) and any unknown query parameter (400). Proven here
// for the lists that used to answer everything at once (agents, identities, campaigns' numbers, knowledge documents)
// and for contacts, whose query schema is now the shared one (src/domain/paging.ts pageQuery).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { freshNumbers, newCampaign } from '../compliance/fixtures.js';
import { startApp, type TestAccount, type TestApp } from '../helpers/app.js';

/** Items created per list: one more than the default page, so the default page cannot be "everything". */
const TOTAL = 51;

/** Runs `make(i)` for i in 0..count-1, eight at a time. */
async function createMany(count: number, make: (i: number) => Promise<{ status: number; body: { id: string } }>) {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 8) {
    const batch = await Promise.all(Array.from({ length: Math.min(8, count - i) }, (_, j) => make(i + j)));
    for (const res of batch) {
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
  }
  return ids;
}

/**
 * Checks the paging rule on `path` whose answer lists `key`, given the keys of every item in list order (`keyOf` reads
 * an item's key): default page, limit bounds, a walk to the end with the cursor, a bad cursor, an unknown parameter.
 */
async function checkPaging(
  a: TestAccount,
  path: string,
  key: string,
  expected: string[],
  keyOf: (item: Record<string, unknown>) => string,
) {
  const first = await a.request('GET', path);
  expect(first.status, path).toBe(200);
  expect(first.body[key].map(keyOf), path).toEqual(expected.slice(0, 50));
  expect(typeof first.body.nextCursor, path).toBe('string');

  for (const limit of ['0', '201', 'x']) {
    const res = await a.request('GET', `${path}?limit=${limit}`);
    expect(res.status, `${path} limit=${limit}`).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.field).toBe('query.limit');
  }
  const max = await a.request('GET', `${path}?limit=200`);
  expect(max.body[key].map(keyOf)).toEqual(expected);
  expect(max.body.nextCursor).toBeNull();

  const walked: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: { status: number; body: Record<string, unknown> } = await a.request(
      'GET',
      `${path}?limit=20${cursor ? `&cursor=${cursor}` : ''}`,
    );
    expect(res.status).toBe(200);
    walked.push(...(res.body[key] as Record<string, unknown>[]).map(keyOf));
    cursor = res.body.nextCursor as string | null;
    pages += 1;
  } while (cursor !== null && pages < 10);
  expect(pages).toBe(Math.ceil(expected.length / 20));
  expect(walked).toEqual(expected);
  expect(cursor).toBeNull();

  for (const bad of ['!!', 'AAAA', 'x'.repeat(201)]) {
    const res = await a.request('GET', `${path}?cursor=${bad}`);
    expect(res.status, `${path} cursor=${bad}`).toBe(400);
    expect(res.body.error.field).toMatch(/^(query\.)?cursor$/);
  }
  const invalid = await a.request('GET', `${path}?cursor=!!`);
  expect(invalid.body.error).toMatchObject({ code: 'INVALID_CURSOR', field: 'cursor' });

  const unknown = await a.request('GET', `${path}?page=2`);
  expect(unknown.status).toBe(400);
  expect(unknown.body.error.code).toBe('VALIDATION_FAILED');
  expect(unknown.body.error.details).toContainEqual(expect.objectContaining({ code: 'UNKNOWN_FIELD' }));
  expect(unknown.body.error.field).toMatch(/(^|\.)page$/);
}

const byId = (item: Record<string, unknown>) => item.id as string;

describe('one REST paging rule', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ clock: new ManualClock() });
  });
  afterAll(() => t.close());

  it('GET /api/agents pages, oldest first', async () => {
    const a = await t.newAccount();
    const other = await t.newAccount();
    await other.request('POST', '/api/agents', { name: 'not mine', textModel: 'm' });
    const ids = await createMany(TOTAL, (i) =>
      a.request('POST', '/api/agents', { name: `agent ${i}`, textModel: 'm' }),
    );
    await checkPaging(a, '/api/agents', 'agents', [...ids].sort(), byId);
  }, 120_000);

  it('GET /api/email/identities pages, oldest first', async () => {
    const a = await t.newAccount();
    const ids = await createMany(TOTAL, (i) =>
      a.request('POST', '/api/email/identities', { localPart: `pg${i}-${Date.now()}` }),
    );
    await checkPaging(a, '/api/email/identities', 'identities', [...ids].sort(), byId);
  }, 120_000);

  it('GET /compliance/campaigns/{id}/numbers pages, ascending by number', async () => {
    const a = await t.newAccount();
    const { campaign } = await newCampaign(t, a);
    const numbers = freshNumbers(TOTAL).sort();
    expect((await a.request('POST', '/api/numbers', { numbers })).status).toBe(201);
    const assign = await a.request('POST', `/compliance/campaigns/${campaign.id}/numbers/assign`, { numbers });
    expect(assign.status).toBe(200);
    const path = `/compliance/campaigns/${campaign.id}/numbers`;
    await checkPaging(a, path, 'numbers', numbers, (n) => n.number as string);
    expect((await a.request('GET', `${path}?limit=1`)).body.campaignId).toBe(campaign.id);
  }, 120_000);

  it('GET /api/agents/{id}/knowledge pages, oldest first', async () => {
    const a = await t.newAccount();
    const agent = await a.request('POST', '/api/agents', { name: 'reader', textModel: 'm' });
    const ids = await createMany(TOTAL, (i) =>
      a.request('POST', `/api/agents/${agent.body.id}/knowledge`, { title: `doc ${i}`, content: `text ${i}` }),
    );
    await checkPaging(a, `/api/agents/${agent.body.id}/knowledge`, 'documents', [...ids].sort(), byId);
  }, 120_000);

  it('GET /api/contacts pages with the same schema, oldest first', async () => {
    const a = await t.newAccount();
    const ids = await createMany(TOTAL, (i) =>
      a.request('POST', '/api/contacts', { name: `Contact ${i}`, emails: [`c${i}@example.com`] }),
    );
    await checkPaging(a, '/api/contacts', 'contacts', [...ids].sort(), byId);
  }, 120_000);
});
