// Unknown query parameters answer 400 on every REST route (issue 22, item 6), also on routes that take no query
// at all, where they used to be ignored silently.
import { describe, expect } from 'vitest';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const it = appTest();

describe('unknown query parameters', () => {
  let a: TestAccount;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
  });

  it('answer 400 VALIDATION_FAILED naming each, on routes with and without a query schema', async () => {
    const hook = await a.request('POST', '/api/webhooks', { url: 'https://example.com/q', events: ['sms.*'] });
    const identity = await a.request('POST', '/api/email/identities', { localPart: `q-${Date.now()}` });
    const paths = [
      `/api/webhooks/${hook.body.id}?limit=1`,
      '/api/agents?limit=1&order=desc',
      `/api/email/identities/${identity.body.id}?verbose=1`,
      '/compliance/enums/vertical?lang=en',
      '/compliance/brands?sort=name',
      '/api/numbers?order=desc',
    ];
    for (const path of paths) {
      const res = await a.request('GET', path);
      expect(res.status, path).toBe(400);
      expect(res.body.error.code, path).toBe('VALIDATION_FAILED');
      // (Routes with a query schema report the name as their schema does.)
      expect(res.body.error.field, path).toMatch(/(limit|verbose|lang|sort|order)$/);
    }
    const both = await a.request('GET', `/api/webhooks/${hook.body.id}?limit=1&x=2`);
    expect(both.body.error.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`)).toEqual([
      'query.limit:UNKNOWN_FIELD',
      'query.x:UNKNOWN_FIELD',
    ]);
    // Without parameters the same routes answer.
    expect((await a.request('GET', `/api/webhooks/${hook.body.id}`)).status).toBe(200);
    expect((await a.request('GET', '/api/agents')).status).toBe(200);
  });
});
