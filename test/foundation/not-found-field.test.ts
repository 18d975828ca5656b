// A REST 404's `field` is always the name of the path parameter that was not found (issue 22, item 8), whatever
// the domain calls it (`agentId` for the `{id}` of /api/agents/{id}/…); a referenced body field that does not exist
// keeps its own name.
import { describe, expect } from 'vitest';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const UNKNOWN = '00000000-0000-7000-8000-000000000000';

const it = appTest();

describe('404 field names the path parameter', () => {
  let a: TestAccount;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
  });

  it('every GET with one unknown {id} answers field "id"', async () => {
    const paths = [
      '/api/agents/{id}',
      '/api/agents/{id}/knowledge',
      '/api/email/identities/{id}',
      '/api/email/identities/{id}/threads',
      '/api/webhooks/{id}',
      '/api/webhooks/{id}/logs',
      '/compliance/brands/{id}',
      '/compliance/brands/{id}/feedback',
      '/compliance/brands/{id}/history',
      '/compliance/brands/{id}/vettings',
      '/compliance/campaigns/{id}',
      '/compliance/campaigns/{id}/carriers',
      '/compliance/campaigns/{id}/history',
      '/compliance/campaigns/{id}/numbers',
    ];
    for (const path of paths) {
      const res = await a.request('GET', path.replace('{id}', UNKNOWN));
      expect(res.status, path).toBe(404);
      expect(res.body.error, path).toMatchObject({ code: 'NOT_FOUND', field: 'id' });
    }
  });

  it('nested routes name the parameter that was not found; a missing body reference keeps its own name', async () => {
    const agent = await a.request('POST', '/api/agents', { name: 'Field Agent' });
    expect(agent.status).toBe(201);
    const identity = await a.request('POST', '/api/email/identities', { localPart: `nf-${Date.now()}` });
    expect(identity.status).toBe(201);
    const hook = await a.request('POST', '/api/webhooks', { url: 'https://example.com/h', events: ['sms.*'] });
    expect(hook.status).toBe(201);
    const cases: [string, string, unknown, string][] = [
      ['DELETE', `/api/agents/${UNKNOWN}/knowledge/${UNKNOWN}`, undefined, 'id'],
      ['DELETE', `/api/agents/${agent.body.id}/knowledge/${UNKNOWN}`, undefined, 'documentId'],
      ['GET', `/api/email/identities/${UNKNOWN}/threads/${UNKNOWN}`, undefined, 'id'],
      ['GET', `/api/email/identities/${identity.body.id}/threads/${UNKNOWN}`, undefined, 'threadId'],
      ['POST', `/api/webhooks/${UNKNOWN}/logs/${UNKNOWN}/redeliver`, undefined, 'id'],
      ['POST', `/api/webhooks/${hook.body.id}/logs/${UNKNOWN}/redeliver`, undefined, 'deliveryId'],
      ['PATCH', `/api/email/identities/${identity.body.id}`, { agentId: UNKNOWN }, 'agentId'],
      ['PATCH', `/api/email/identities/${UNKNOWN}`, { displayName: 'x' }, 'id'],
      ['DELETE', '/api/numbers/+14155550123', undefined, 'number'],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await a.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error, `${method} ${path}`).toMatchObject({ code: 'NOT_FOUND', field });
    }
  });
});
