import { describe, expect } from 'vitest';
import { graphql } from '../generated/gql.js';
import type { IssueKeyMutation } from '../generated/graphql.js';
import { accountClient } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { payload } from '../helpers/graphql.js';

const Viewer = graphql(`
  query Viewer {
    viewer {
      accountId
      scopes
    }
  }
`);

const IssueKey = graphql(`
  mutation IssueKey($input: IssueApiKeyInput!) {
    issueApiKey(input: $input) {
      __typename
      ... on IssueApiKeyPayload { issuedApiKey { keyId apiKey scopes } }
      ... on Error { code field details { field code message } }
    }
  }
`);

const RevokeKey = graphql(`
  mutation RevokeKey($input: RevokeApiKeyInput!) {
    revokeApiKey(input: $input) { __typename ... on RevokeApiKeyPayload { revokedKeyId } ... on Error { code field details { field code message } } }
  }
`);

/** The key of an `IssueKey` result (failing the test when it is a typed error). */
function issuedKey(res: { data?: IssueKeyMutation | null }) {
  return payload(res.data?.issueApiKey, 'IssueApiKeyPayload').issuedApiKey;
}

const it = appTest();

describe('bearer authentication (spec 5.1)', () => {
  it('answers 401 UNAUTHENTICATED with WWW-Authenticate when the key is missing', async ({ t }) => {
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

  it.for([
    ['a malformed key', 'Bearer nonsense'],
    ['an unknown key id', `Bearer sb_0000000000000000_${'A'.repeat(43)}`],
    ['the wrong scheme', 'Basic dXNlcjpwYXNz'],
  ] as const)('answers 401 for %s', async ([_name, authorization], { a }) => {
    const res = await a.gql(Viewer, {}, { authorization });
    expect(res.status).toBe(401);
  });

  it('answers 401 for a right key id with a wrong secret', async ({ a }) => {
    const [prefix, id] = a.apiKey.split('_');
    const res = await a.gql(Viewer, {}, { authorization: `Bearer ${prefix}_${id}_${'B'.repeat(43)}` });
    expect(res.status).toBe(401);
  });

  it('resolves the key to its own account and scopes', async ({ a }) => {
    const res = await a.gql(Viewer);
    expect(res.data?.viewer.accountId).toBe(a.accountId);
    expect(res.data?.viewer.scopes).toEqual(['COMPLIANCE', 'EMAIL', 'WEBHOOKS', 'EVENTS_READ', 'EVENTS_WRITE']);
  });

  it('issues a narrower key, refuses a wider one, and revokes', async ({ t }) => {
    const a = await t.newAccount(['compliance', 'events:read']);
    const narrow = await a.gql(IssueKey, { input: { name: 'reader', scopes: ['EVENTS_READ'] } });
    expect(narrow.errors).toBeUndefined();
    const issued = issuedKey(narrow);
    const b = accountClient(t.url, a.accountId, issued.apiKey);
    expect((await b.gql(Viewer)).data?.viewer).toEqual({ accountId: a.accountId, scopes: ['EVENTS_READ'] });

    const wider = await a.gql(IssueKey, { input: { name: 'writer', scopes: ['EVENTS_WRITE'] } });
    expect(wider.data?.issueApiKey).toMatchObject({ __typename: 'ForbiddenError', code: 'FORBIDDEN' });

    // Scopes are an enum: an unknown one is refused while coercing the variables, before anything runs.
    // (200: a request error under the legacy `application/json`, GraphQL over HTTP.)
    const unknown = await a.gql(IssueKey, { input: { name: 'x', scopes: ['root' as never] } });
    expect(unknown.status).toBe(200);
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(unknown.errors?.[0]?.message).toContain('"root"');

    const revoked = await a.gql(RevokeKey, { input: { keyId: issued.keyId } });
    expect(payload(revoked.data?.revokeApiKey, 'RevokeApiKeyPayload').revokedKeyId).toBe(issued.keyId);
    expect((await b.gql(Viewer)).status).toBe(401);
  });

  it('does not let a narrower key revoke a wider one (403), but lets a key revoke itself', async ({ t, a }) => {
    const issued = issuedKey(await a.gql(IssueKey, { input: { name: 'reader', scopes: ['EVENTS_READ'] } }));
    const reader = accountClient(t.url, a.accountId, issued.apiKey);
    const adminKeyId = a.apiKey.split('_')[1]!;
    const refused = await reader.gql(RevokeKey, { input: { keyId: adminKeyId } });
    expect(refused.data?.revokeApiKey).toMatchObject({ __typename: 'ForbiddenError', code: 'FORBIDDEN' });
    expect((await a.gql(Viewer)).status).toBe(200);
    const revoked = await reader.gql(RevokeKey, { input: { keyId: issued.keyId } });
    expect(payload(revoked.data?.revokeApiKey, 'RevokeApiKeyPayload').revokedKeyId).toBe(issued.keyId);
    expect((await reader.gql(Viewer)).status).toBe(401);
  });

  it('does not let one account revoke another account’s key (404)', async ({ t, a }) => {
    const b = await t.newAccount();
    const keyIdOfB = b.apiKey.split('_')[1]!;
    const res = await a.gql(RevokeKey, { input: { keyId: keyIdOfB } });
    expect(res.data?.revokeApiKey).toMatchObject({ __typename: 'NotFoundError', code: 'NOT_FOUND', field: 'keyId' });
    expect((await b.gql(Viewer)).status).toBe(200);
  });

  it('checks the scope before the input on GraphQL (403 before 400), then answers 400 with the input’s own fields', async ({
    t,
  }) => {
    const query =
      'mutation { createBrand(input: {name: "Scope Order", ein: "bad", vertical: RETAIL, entityType: PRIVATE_PROFIT}) { __typename ... on Error { code field } } }';
    const emailOnly = await t.newAccount(['email']);
    const denied = await emailOnly.request('POST', '/graphql', { query });
    expect(denied.body.data.createBrand).toEqual({ __typename: 'ForbiddenError', code: 'FORBIDDEN', field: null });
    const compliance = await t.newAccount(['compliance']);
    const invalid = await compliance.request('POST', '/graphql', { query });
    expect(invalid.body.data.createBrand).toEqual({
      __typename: 'ValidationError',
      code: 'VALIDATION_FAILED',
      field: 'ein',
    });
  });
});

const it2 = appTest();

describe('request bodies and idempotency', () => {
  const it = it2;

  it('answers malformed JSON with 400 MALFORMED_JSON', async ({ a }) => {
    const res = await a.request('POST', '/graphql', '{"query": ', {});
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('MALFORMED_JSON');
    const rest = await a.request('POST', '/compliance/brands', '{"name": ', {});
    expect(rest.status).toBe(400);
    expect(rest.body.error.code).toBe('MALFORMED_JSON');
  });

  it('replays the first response for a repeated Idempotency-Key and creates nothing twice', async ({ t, a }) => {
    const headers = { 'idempotency-key': `key-${Math.random()}` };
    const first = await a.gql(IssueKey, { input: { name: 'once', scopes: ['EVENTS_READ'] } }, headers);
    const second = await a.gql(IssueKey, { input: { name: 'once', scopes: ['EVENTS_READ'] } }, headers);
    expect(issuedKey(second).apiKey).toBe(issuedKey(first).apiKey);
    const keys = await t.app.ctx.db.apiKey.count({ where: { accountId: a.accountId } });
    expect(keys).toBe(2); // the account's first key and exactly one issued key

    const reused = await a.gql(IssueKey, { input: { name: 'other', scopes: ['EVENTS_READ'] } }, headers);
    expect(reused.status).toBe(422);
  });

  it('never replays a stored response to another API key of the account (422)', async ({ t, a }) => {
    const reader = await a.gql(IssueKey, { input: { name: 'reader', scopes: ['EVENTS_READ'] } });
    const other = accountClient(t.url, a.accountId, issuedKey(reader).apiKey);
    const headers = { 'idempotency-key': 'admin-only' };
    const first = await a.gql(IssueKey, { input: { name: 'full', scopes: ['COMPLIANCE', 'EVENTS_WRITE'] } }, headers);
    expect(issuedKey(first).apiKey).toBeDefined();
    const replayed = await other.gql(
      IssueKey,
      { input: { name: 'full', scopes: ['COMPLIANCE', 'EVENTS_WRITE'] } },
      headers,
    );
    expect(replayed.status).toBe(422);
    expect(JSON.stringify(replayed)).not.toContain(issuedKey(first).apiKey);
  });

  it('keeps idempotency keys per account', async ({ t, a }) => {
    const b = await t.newAccount();
    const headers = { 'idempotency-key': 'shared-key' };
    const ra = await a.gql(IssueKey, { input: { name: 'k', scopes: ['EVENTS_READ'] } }, headers);
    const rb = await b.gql(IssueKey, { input: { name: 'k', scopes: ['EVENTS_READ'] } }, headers);
    expect(issuedKey(ra).apiKey).not.toBe(issuedKey(rb).apiKey);
  });
});

const it3 = appTest();

describe('idempotency records at rest', () => {
  const it = it3;

  it('stores the replayable response encrypted, so a key shown once is not kept in clear', async ({ t, a }) => {
    const headers = { 'idempotency-key': 'secret-bearing' };
    const first = await a.gql(IssueKey, { input: { name: 'k', scopes: ['EVENTS_READ'] } }, headers);
    const apiKey = issuedKey(first).apiKey;
    const rows = await t.app.ctx.db.idempotencyRecord.findMany({ where: { accountId: a.accountId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.responseBody).not.toContain(apiKey);
    const replay = await a.gql(IssueKey, { input: { name: 'k', scopes: ['EVENTS_READ'] } }, headers);
    expect(issuedKey(replay).apiKey).toBe(apiKey);
  });
});
