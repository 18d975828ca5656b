import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import type { TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { rawSse } from '../helpers/sse.js';

const clock = new ManualClock();
const it = appTest({ clock, startWorkers: true, env: { EVENT_STREAM_HEARTBEAT_MS: '100' } });

/** Short-lived stream tokens beside spec 5.2's `?token=<API_KEY>` (issue 13). */
describe('stream tokens', () => {
  /** The file's app, for the helpers below (tests get it as the `t` fixture). */
  let t: TestApp;
  it.beforeAll(({ t: app }) => {
    t = app;
  });
  async function tokenOf(apiKey: string) {
    const res = await fetch(`${t.url}/api/events/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  it('trades the API key for a token that opens the account’s stream, expiring after STREAM_TOKEN_TTL_SECONDS', async ({
    t,
    a,
  }) => {
    const { status, body } = await tokenOf(a.apiKey);
    expect(status).toBe(201);
    expect(body.token).toMatch(/^sbst_[\w-]+\.[\w-]{43}$/);
    expect(body.scopes).toEqual(['events:read']);
    expect(Date.parse(body.expiresAt) - clock.now().getTime()).toBe(300_000);
    // The key's secret (`sb_<key id>_<secret>`; a base64url secret may itself contain `_`) never appears in the token.
    expect(body.token).not.toContain(a.apiKey.slice(`sb_${a.apiKey.split('_')[1]}_`.length));

    const stream = await rawSse(`${t.url}/api/events?token=${body.token}`);
    expect(stream.status).toBe(200);
    await stream.waitFor(/: connected/);
    const published = await a.request('POST', '/api/events', { eventType: 'sms.sent', payload: { n: 1 } });
    await stream.waitFor(new RegExp(`id: ${published.body.id}`));
    // Another account's event never reaches it.
    const b = await t.newAccount();
    await b.request('POST', '/api/events', { eventType: 'sms.sent', payload: { n: 2 } });
    await a.request('POST', '/api/events', { eventType: 'sms.sent', payload: { n: 3 } });
    await stream.waitFor(/"n":3/);
    expect(stream.text()).not.toContain('"n":2');

    // Expiry ends the open stream within a heartbeat, and the token then answers 401.
    clock.advance(300_001);
    await stream.ended;
    const again = await fetch(`${t.url}/api/events?token=${body.token}`);
    expect(again.status).toBe(401);
    expect(((await again.json()) as any).error.code).toBe('UNAUTHENTICATED');
    expect(again.headers.get('x-request-id')).toBeTruthy();
  });

  it('only opens streams: every other route answers 401 to it, and it cannot mint tokens', async ({ t, a }) => {
    const { body } = await tokenOf(a.apiKey);
    for (const [method, path] of [
      ['GET', '/compliance/brands'],
      ['GET', '/api/events/history'],
      ['POST', '/api/events/tokens'],
      ['GET', '/api/webhooks'],
    ] as const) {
      const viaHeader = await fetch(`${t.url}${path}`, { method, headers: { authorization: `Bearer ${body.token}` } });
      expect(viaHeader.status, `${method} ${path}`).toBe(401);
      const viaQuery = await fetch(`${t.url}${path}?token=${body.token}`, { method });
      expect(viaQuery.status, `${method} ${path}?token`).toBe(401);
    }
    // Publishing needs events:write, which a stream token never carries.
    const publish = await fetch(`${t.url}/api/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${body.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ eventType: 'sms.sent', payload: {} }),
    });
    expect(publish.status).toBe(401);
  });

  it('refuses forged, tampered and foreign tokens with 401', async ({ t, a }) => {
    const b = await t.newAccount();
    const { body } = await tokenOf(a.apiKey);
    const [payload, mac] = body.token.slice('sbst_'.length).split('.') as [string, string];
    const [keyId, , expires] = Buffer.from(payload, 'base64url').toString().split('.');
    // Same key and expiry, another account: the MAC no longer matches.
    const swapped = Buffer.from(`${keyId}.${b.accountId}.${expires}`).toString('base64url');
    const longer = Buffer.from(`${keyId}.${a.accountId}.${Number(expires) + 3_600_000}`).toString('base64url');
    // A well-formed token of another deployment (the same construction under another SECRETS_KEY) is foreign here.
    const otherKey = createHmac('sha256', randomBytes(32)).update('switchboard/stream-token/v1').digest();
    const foreign = `sbst_${payload}.${createHmac('sha256', otherKey).update(payload).digest('base64url')}`;
    for (const bad of [
      `sbst_${swapped}.${mac}`,
      `sbst_${longer}.${mac}`,
      `sbst_${payload}.${'A'.repeat(43)}`,
      'sbst_garbage',
      foreign,
    ]) {
      const res = await fetch(`${t.url}/api/events?token=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(401);
    }
  });

  it('dies with its parent key: revocation ends an open stream and the token answers 401', async ({ t }) => {
    const admin = await t.newAccount();
    const issued = await admin.request('POST', '/graphql', {
      query:
        'mutation { issueApiKey(input: { name: "browser", scopes: [EVENTS_READ] }) { ... on IssueApiKeyPayload { issuedApiKey { keyId apiKey } } } }',
    });
    const { keyId, apiKey } = issued.body.data.issueApiKey.issuedApiKey as { keyId: string; apiKey: string };
    const { body } = await tokenOf(apiKey);
    const stream = await rawSse(`${t.url}/api/events?token=${body.token}`);
    await stream.waitFor(/: heartbeat/);
    await admin.request('POST', '/graphql', {
      query: `mutation { revokeApiKey(input: { keyId: "${keyId}" }) { __typename } }`,
    });
    await stream.ended;
    expect((await fetch(`${t.url}/api/events?token=${body.token}`)).status).toBe(401);
  });

  it('needs events:read to be issued (403)', async ({ t }) => {
    const a = await t.newAccount(['compliance']);
    const { status, body } = await tokenOf(a.apiKey);
    expect(status).toBe(403);
    expect(body.error.code).toBe('FORBIDDEN');
  });

  it('GraphQL: createStreamToken; the token opens subscriptions over SSE (?token=), nothing else; an API key is not taken from the URL', async ({
    t,
    a,
  }) => {
    const created = await a.request('POST', '/graphql', {
      query:
        'mutation { createStreamToken { ... on CreateStreamTokenPayload { streamToken { token expiresAt scopes } } } }',
    });
    const { token, scopes } = created.body.data.createStreamToken.streamToken;
    expect(scopes).toEqual(['EVENTS_READ']);
    const query = encodeURIComponent('subscription { events { ... on Event { id eventType } } }');
    const sub = await rawSse(`${t.url}/graphql?query=${query}&token=${token}`, { accept: 'text/event-stream' });
    expect(sub.status).toBe(200);
    // graphql-sse distinct-connection mode at /graphql/stream too.
    const distinct = await rawSse(`${t.url}/graphql/stream?query=${query}&token=${token}`, {
      accept: 'text/event-stream',
    });
    expect(distinct.status).toBe(200);
    const published = await a.request('POST', '/api/events', { eventType: 'sms.sent', payload: {} });
    await sub.waitFor(new RegExp(`"id":"${published.body.id}"`));
    await distinct.waitFor(new RegExp(`"id":"${published.body.id}"`));
    // Queries and mutations with a stream token: UNAUTHENTICATED.
    const asQuery = await fetch(`${t.url}/graphql?token=${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { accountId } }' }),
    });
    expect(JSON.stringify(await asQuery.json())).toMatch(/UNAUTHENTICATED/);
    // The API key itself is not accepted in a GraphQL URL.
    const keyInUrl = await fetch(`${t.url}/graphql?token=${a.apiKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { accountId } }' }),
    });
    expect(keyInUrl.status).toBe(401);
    // Expiry ends the open subscriptions too.
    clock.advance(300_001);
    await sub.ended;
    await distinct.ended;
  });
});
