import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../generated/gql.js';
import { accountClient, startApp, type TestApp } from '../helpers/app.js';

const Viewer = graphql(`
  query Viewer {
    viewer {
      accountId
      scopes
    }
  }
`);

const IssueKey = graphql(`
  mutation IssueKey($name: String!, $scopes: [String!]!) {
    issueApiKey(name: $name, scopes: $scopes) {
      keyId
      apiKey
      scopes
    }
  }
`);

const RevokeKey = graphql(`
  mutation RevokeKey($keyId: String!) {
    revokeApiKey(keyId: $keyId)
  }
`);

describe('bearer authentication (spec 5.1)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('answers 401 UNAUTHENTICATED with WWW-Authenticate when the key is missing', async () => {
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { accountId } }' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    // GraphQL answers in GraphQL's error shape (issue 11); REST keeps its one error body.
    const body = (await res.json()) as any;
    expect(body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(body.errors[0].message).toMatch(/Authorization: Bearer/);
    const rest = await fetch(`${t.url}/compliance/brands`);
    expect(rest.status).toBe(401);
    expect(rest.headers.get('www-authenticate')).toBe('Bearer');
    expect(((await rest.json()) as any).error.code).toBe('UNAUTHENTICATED');
  });

  it.each([
    ['a malformed key', 'Bearer nonsense'],
    ['an unknown key id', `Bearer sb_0000000000000000_${'A'.repeat(43)}`],
    ['the wrong scheme', 'Basic dXNlcjpwYXNz'],
  ])('answers 401 for %s', async (_name, authorization) => {
    const a = await t.newAccount();
    const res = await a.gql(Viewer, {}, { authorization });
    expect(res.status).toBe(401);
  });

  it('answers 401 for a right key id with a wrong secret', async () => {
    const a = await t.newAccount();
    const [prefix, id] = a.apiKey.split('_');
    const res = await a.gql(Viewer, {}, { authorization: `Bearer ${prefix}_${id}_${'B'.repeat(43)}` });
    expect(res.status).toBe(401);
  });

  it('resolves the key to its own account and scopes', async () => {
    const a = await t.newAccount();
    const res = await a.gql(Viewer);
    expect(res.data?.viewer.accountId).toBe(a.accountId);
    expect(res.data?.viewer.scopes).toEqual(['compliance', 'email', 'webhooks', 'events:read', 'events:write']);
  });

  it('issues a narrower key, refuses a wider one, and revokes', async () => {
    const a = await t.newAccount(['compliance', 'events:read']);
    const narrow = await a.gql(IssueKey, { name: 'reader', scopes: ['events:read'] });
    expect(narrow.errors).toBeUndefined();
    const issued = narrow.data!.issueApiKey;
    const b = accountClient(t.url, a.accountId, issued.apiKey);
    expect((await b.gql(Viewer)).data?.viewer).toEqual({ accountId: a.accountId, scopes: ['events:read'] });

    const wider = await a.gql(IssueKey, { name: 'writer', scopes: ['events:write'] });
    expect(wider.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });

    const unknown = await a.gql(IssueKey, { name: 'x', scopes: ['root'] });
    expect(unknown.errors?.[0]?.extensions).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'scopes.0',
      details: [{ code: 'INVALID_ENUM_VALUE', field: 'scopes.0', message: 'unknown scope "root"' }],
    });

    expect((await a.gql(RevokeKey, { keyId: issued.keyId })).data?.revokeApiKey).toBe(true);
    expect((await b.gql(Viewer)).status).toBe(401);
  });

  it('does not let a narrower key revoke a wider one (403), but lets a key revoke itself', async () => {
    const a = await t.newAccount();
    const issued = (await a.gql(IssueKey, { name: 'reader', scopes: ['events:read'] })).data!.issueApiKey;
    const reader = accountClient(t.url, a.accountId, issued.apiKey);
    const adminKeyId = a.apiKey.split('_')[1]!;
    const refused = await reader.gql(RevokeKey, { keyId: adminKeyId });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect((await a.gql(Viewer)).status).toBe(200);
    expect((await reader.gql(RevokeKey, { keyId: issued.keyId })).data?.revokeApiKey).toBe(true);
    expect((await reader.gql(Viewer)).status).toBe(401);
  });

  it('does not let one account revoke another account’s key (404)', async () => {
    const a = await t.newAccount();
    const b = await t.newAccount();
    const keyIdOfB = b.apiKey.split('_')[1]!;
    const res = await a.gql(RevokeKey, { keyId: keyIdOfB });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect((await b.gql(Viewer)).status).toBe(200);
  });

  it('checks the scope before the input on GraphQL (403 before 400), then answers 400 with the input’s own fields', async () => {
    const query =
      'mutation { registerBrand(input: {name: "Scope Order", ein: "bad", vertical: RETAIL, entityType: PRIVATE_PROFIT}) { id } }';
    const emailOnly = await t.newAccount(['email']);
    const denied = await emailOnly.request('POST', '/graphql', { query });
    expect(denied.body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    const compliance = await t.newAccount(['compliance']);
    const invalid = await compliance.request('POST', '/graphql', { query });
    expect(invalid.body.errors?.[0]?.extensions).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'ein',
      status: 400,
    });
  });
});

describe('request bodies and idempotency', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('answers malformed JSON with 400 MALFORMED_JSON', async () => {
    const a = await t.newAccount();
    const res = await a.request('POST', '/graphql', '{"query": ', {});
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('MALFORMED_JSON');
    const rest = await a.request('POST', '/compliance/brands', '{"name": ', {});
    expect(rest.status).toBe(400);
    expect(rest.body.error.code).toBe('MALFORMED_JSON');
  });

  it('replays the first response for a repeated Idempotency-Key and creates nothing twice', async () => {
    const a = await t.newAccount();
    const headers = { 'idempotency-key': `key-${Math.random()}` };
    const first = await a.gql(IssueKey, { name: 'once', scopes: ['events:read'] }, headers);
    const second = await a.gql(IssueKey, { name: 'once', scopes: ['events:read'] }, headers);
    expect(second.data?.issueApiKey.apiKey).toBe(first.data?.issueApiKey.apiKey);
    const keys = await t.app.ctx.db.apiKey.count({ where: { accountId: a.accountId } });
    expect(keys).toBe(2); // the account's first key and exactly one issued key

    const reused = await a.gql(IssueKey, { name: 'other', scopes: ['events:read'] }, headers);
    expect(reused.status).toBe(422);
  });

  it('never replays a stored response to another API key of the account (422)', async () => {
    const a = await t.newAccount();
    const reader = await a.gql(IssueKey, { name: 'reader', scopes: ['events:read'] });
    const other = accountClient(t.url, a.accountId, reader.data!.issueApiKey.apiKey);
    const headers = { 'idempotency-key': 'admin-only' };
    const first = await a.gql(IssueKey, { name: 'full', scopes: ['compliance', 'events:write'] }, headers);
    expect(first.data?.issueApiKey.apiKey).toBeDefined();
    const replayed = await other.gql(IssueKey, { name: 'full', scopes: ['compliance', 'events:write'] }, headers);
    expect(replayed.status).toBe(422);
    expect(JSON.stringify(replayed)).not.toContain(first.data!.issueApiKey.apiKey);
  });

  it('keeps idempotency keys per account', async () => {
    const a = await t.newAccount();
    const b = await t.newAccount();
    const headers = { 'idempotency-key': 'shared-key' };
    const ra = await a.gql(IssueKey, { name: 'k', scopes: ['events:read'] }, headers);
    const rb = await b.gql(IssueKey, { name: 'k', scopes: ['events:read'] }, headers);
    expect(ra.data?.issueApiKey.apiKey).not.toBe(rb.data?.issueApiKey.apiKey);
  });
});

describe('idempotency records at rest', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('stores the replayable response encrypted, so a key shown once is not kept in clear', async () => {
    const a = await t.newAccount();
    const headers = { 'idempotency-key': 'secret-bearing' };
    const first = await a.gql(IssueKey, { name: 'k', scopes: ['events:read'] }, headers);
    const apiKey = first.data!.issueApiKey.apiKey;
    const rows = await t.app.ctx.db.idempotencyRecord.findMany({ where: { accountId: a.accountId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.responseBody).not.toContain(apiKey);
    const replay = await a.gql(IssueKey, { name: 'k', scopes: ['events:read'] }, headers);
    expect(replay.data?.issueApiKey.apiKey).toBe(apiKey);
  });
});
