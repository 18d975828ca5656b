// graphql-ws (GraphQL over WebSocket, Apollo Client's and urql's default subscription transport) on /graphql, with
// the graphql-ws client: the key or a stream token in connectionParams, the same schema and limits as HTTP, and
// subscriptions that deliver events published over REST.
import { type Client, createClient } from 'graphql-ws';
import { afterAll, describe, expect } from 'vitest';
import WebSocket from 'ws';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const EVENTS = `subscription { events(channels: ["sms"]) { __typename ... on Event { id eventType customerId payload } } }`;

/** A graphql-ws client of `url` (http → ws) with `connectionParams`; closes reported through `closes`. */
function wsClient(
  url: string,
  connectionParams: Record<string, unknown> | undefined,
  closes: { code: number; reason: string }[] = [],
) {
  return createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: false,
    onNonLazyError: () => {}, // the closes are asserted through `on.closed`
    on: { closed: (e) => closes.push({ code: (e as CloseEvent).code, reason: (e as CloseEvent).reason }) },
  });
}

/** Runs one operation to completion: every result it gave, or the error it ended with. */
function run(client: Client, query: string, variables?: Record<string, unknown>) {
  return new Promise<{ results: any[]; error?: unknown }>((resolve) => {
    const results: any[] = [];
    client.subscribe(
      { query, variables },
      {
        next: (r) => results.push(r),
        error: (error) => resolve({ results, error }),
        complete: () => resolve({ results }),
      },
    );
  });
}

/** Subscribes and resolves with the first result matching `until`; also resolves once the subscription is live. */
function subscribeUntil(client: Client, query: string, until: (r: any) => boolean) {
  let dispose = () => {};
  const first = new Promise<any>((resolve, reject) => {
    dispose = client.subscribe({ query }, { next: (r) => until(r) && resolve(r), error: reject, complete: () => {} });
  });
  return { first, dispose: () => dispose() };
}

// A short heartbeat: subscriptions re-check their key at each one (the revocation test).
const it = appTest({ env: { EVENT_STREAM_HEARTBEAT_MS: '100' } });

describe('graphql-ws on /graphql', () => {
  let a: TestAccount;
  const clients: Client[] = [];
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
  });

  it('runs a query with the API key in connectionParams (authorization: Bearer)', async ({ t }) => {
    const c = wsClient(t.url, { authorization: `Bearer ${a.apiKey}` });
    clients.push(c);
    const { results, error } = await run(c, '{ viewer { accountId } }');
    expect(error).toBeUndefined();
    expect(results).toEqual([{ data: { viewer: { accountId: a.accountId } } }]);
  });

  it('delivers an event published over REST to an `events` subscription, and the key as `apiKey` works', async ({
    t,
  }) => {
    const c = wsClient(t.url, { apiKey: a.apiKey });
    clients.push(c);
    // Publish repeatedly until one arrives: the subscription is live from some point we cannot observe directly.
    const sub = subscribeUntil(c, EVENTS, (r) => r.data?.events?.payload?.id === 'ws-1');
    let stop = false;
    const publisher = (async () => {
      while (!stop) {
        const res = await a.request('POST', '/api/events', {
          eventType: 'sms.sent',
          payload: { id: 'ws-1', from: '+14155550100', to: '+14155550101', status: 'sent' },
        });
        expect(res.status).toBe(202);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const got = await sub.first;
    stop = true;
    await publisher;
    sub.dispose();
    expect(got.data.events).toMatchObject({ __typename: 'Event', eventType: 'sms.sent', customerId: a.accountId });
  });

  it('a stream token opens subscriptions only: a query answers UNAUTHENTICATED', async ({ t }) => {
    const token = (await a.request('POST', '/api/events/tokens')).body.token as string;
    const c = wsClient(t.url, { token });
    clients.push(c);
    const query = await run(c, '{ viewer { accountId } }');
    const errors = query.results[0]?.errors ?? (query.error as any[]);
    expect(errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    // The same token subscribes (the subscription starts: no error before the first event).
    const sub = subscribeUntil(c, EVENTS, (r) => r.data?.events?.payload?.id === 'ws-token');
    const publish = setInterval(() => {
      void a.request('POST', '/api/events', {
        eventType: 'sms.sent',
        payload: { id: 'ws-token', from: '+14155550100', to: '+14155550101', status: 'sent' },
      });
    }, 200);
    try {
      expect((await sub.first).data.events.customerId).toBe(a.accountId);
    } finally {
      clearInterval(publish);
      sub.dispose();
    }
  });

  it('closes a connection without a key, or with a wrong one, with 4403 and the reason', async ({ t }) => {
    for (const params of [undefined, { authorization: 'Bearer sb_0000000000000000_wrong' }]) {
      const closes: { code: number; reason: string }[] = [];
      const c = wsClient(t.url, params, closes);
      clients.push(c);
      const { error } = await run(c, '{ viewer { accountId } }');
      expect(error).toBeDefined();
      expect(closes[0]?.code, JSON.stringify(params)).toBe(4403);
      expect(closes[0]?.reason).toMatch(/^Forbidden: /);
    }
  });

  it('applies the HTTP limits and validation: unknown fields, aliases, NUL in literals', async ({ t }) => {
    const c = wsClient(t.url, { authorization: `Bearer ${a.apiKey}` });
    clients.push(c);
    const unknown = await run(c, '{ nope }');
    expect((unknown.error as any[])?.[0]?.message ?? unknown.results[0]?.errors?.[0]?.message).toMatch(/nope/);
    const aliases = `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: viewer { accountId }`).join(' ')} }`;
    const tooMany = await run(c, aliases);
    const aliasErrors = (tooMany.error as any[]) ?? tooMany.results[0]?.errors;
    expect(aliasErrors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 'aliases' });
    const nul = await run(c, '{ brand(id: "a\\u0000b") { id } }');
    const nulErrors = (nul.error as any[]) ?? nul.results[0]?.errors;
    expect(nulErrors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('a revoked key: its open subscription completes, and its next operation closes the socket with 4403', async ({
    t,
  }) => {
    const issued = await a.request('POST', '/graphql', {
      query:
        'mutation { issueApiKey(input: { name: "ws", scopes: [EVENTS_READ] }) { ... on IssueApiKeyPayload { issuedApiKey { keyId apiKey } } } }',
    });
    const { keyId, apiKey } = issued.body.data.issueApiKey.issuedApiKey as { keyId: string; apiKey: string };
    const closes: { code: number; reason: string }[] = [];
    const c = wsClient(t.url, { apiKey }, closes);
    clients.push(c);
    // Live first: an event published over REST reaches the subscription.
    const results: any[] = [];
    const ended = new Promise<'complete' | 'error'>((resolve) => {
      c.subscribe(
        { query: EVENTS },
        { next: (r) => results.push(r), error: () => resolve('error'), complete: () => resolve('complete') },
      );
    });
    for (let i = 0; i < 100 && results.length === 0; i++) {
      const res = await a.request('POST', '/api/events', {
        eventType: 'sms.sent',
        payload: { id: `ws-revoked-${i}`, from: '+14155550100', to: '+14155550101', status: 'sent' },
      });
      expect(res.status).toBe(202);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(results.length).toBeGreaterThan(0);

    await a.request('POST', '/graphql', {
      query: `mutation { revokeApiKey(input: { keyId: "${keyId}" }) { ... on RevokeApiKeyPayload { revokedKeyId } } }`,
    });
    expect(await ended).toBe('complete');
    const after = await run(c, '{ viewer { accountId } }');
    expect(after.results.filter((r) => r.data)).toEqual([]);
    expect(closes[0]).toMatchObject({ code: 4403, reason: expect.stringMatching(/^Forbidden: /) });
  });

  it('refuses a WebSocket upgrade on another path', async ({ t }) => {
    const ws = new WebSocket(`${t.url.replace(/^http/, 'ws')}/api/events`, 'graphql-transport-ws');
    const outcome = await new Promise<string>((resolve) => {
      ws.on('open', () => resolve('open'));
      ws.on('error', (err) => resolve(String(err.message)));
    });
    expect(outcome).toMatch(/404/);
  });
});
