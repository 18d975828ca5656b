import { describe, expect } from 'vitest';
import { accountClient, type TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
const viewer = { query: '{ viewer { accountId scopes } }' };

const it = appTest({ env: { ADMIN_TOKEN } });

describe('admin surface /admin/* (ADMIN_TOKEN)', () => {
  /** The file's app, for the helpers below (tests get it as the `t` fixture). */
  let t: TestApp;
  it.beforeAll(({ t: app }) => {
    t = app;
  });
  const call = (method: string, path: string, body?: unknown, token = ADMIN_TOKEN) =>
    accountClient(t.url, '', token).request(method, path, body);

  it('refuses a missing or wrong token with 401 and the error body, and an API key is not an admin token', async ({
    t,
  }) => {
    const none = await fetch(`${t.url}/admin/accounts`, { method: 'POST' });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
    expect((await call('POST', '/admin/accounts', { name: 'x' }, `${ADMIN_TOKEN}x`)).status).toBe(401);
    const a = await t.newAccount();
    expect((await call('GET', '/admin/accounts', undefined, a.apiKey)).status).toBe(401);
  });

  it('creates an account whose key works on the next request, then more keys, lists, shows and revokes', async ({
    t,
  }) => {
    const created = await call('POST', '/admin/accounts', { name: 'Acme', scopes: ['events:read'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ accountId: expect.any(String), scopes: ['events:read'] });
    expect(created.body.apiKey).toMatch(/^sb_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    const acme = accountClient(t.url, created.body.accountId, created.body.apiKey);
    const seen = await acme.request('POST', '/graphql', viewer);
    // GraphQL shows scopes as the Scope enum (`events:read` is EVENTS_READ: GraphQL names cannot hold `:`).
    expect(seen.body.data.viewer).toEqual({ accountId: created.body.accountId, scopes: ['EVENTS_READ'] });

    const key = await call('POST', '/admin/keys', { accountId: created.body.accountId, scopes: ['events:write'] });
    expect(key.status).toBe(201);
    const writer = accountClient(t.url, created.body.accountId, key.body.apiKey);
    expect((await writer.request('POST', '/api/events', { eventType: 'sms.sent', payload: {} })).status).toBe(202);

    const shown = await call('GET', `/admin/accounts/${created.body.accountId}`);
    expect(shown.status).toBe(200);
    expect(shown.body.keys.map((k: { id: string }) => k.id)).toEqual([created.body.keyId, key.body.keyId]);
    expect(JSON.stringify(shown.body)).not.toContain(key.body.apiKey.slice(-43));

    let ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await call('GET', `/admin/accounts?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      ids = [...ids, ...page.body.accounts.map((a: { id: string }) => a.id)];
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(ids).toContain(created.body.accountId);
    expect(new Set(ids).size).toBe(ids.length);

    expect((await call('DELETE', `/admin/keys/${key.body.keyId}`)).status).toBe(204);
    expect((await writer.request('POST', '/api/events', { eventType: 'sms.sent', payload: {} })).status).toBe(401);
    expect((await acme.request('POST', '/graphql', viewer)).status).toBe(200);
  });

  it('answers bad input with 400 naming the field and an unknown account or key with 404, changing nothing', async ({
    t,
  }) => {
    const before = await t.app.ctx.db.account.count();
    const bad = await call('POST', '/admin/accounts', { name: ' ', scopes: ['root'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['name', 'scopes.0']);
    expect(await t.app.ctx.db.account.count()).toBe(before);
    const missing = await call('POST', '/admin/keys', { accountId: 'nope', scopes: ['email'] });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'NOT_FOUND', field: 'accountId' });
    expect((await call('DELETE', '/admin/keys/0000000000000000')).status).toBe(404);
    expect((await call('GET', '/admin/accounts?cursor=%%%')).status).toBe(400);
  });
});
