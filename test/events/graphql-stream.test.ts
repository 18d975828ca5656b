import { print } from 'graphql';
import { createClient } from 'graphql-sse';
import { describe, expect } from 'vitest';
import { graphql } from '../generated/gql.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { payload as resultPayload, typedError } from '../helpers/graphql.js';

const EventsSubscription = graphql(`
  subscription EventsStream($channels: [String!], $lastEventId: String) {
    events(channels: $channels, lastEventId: $lastEventId) {
      __typename
      ... on Event {
        id
        channel
        eventType
        payload
        customerId
        timestamp
      }
      ... on StreamTruncated {
        reason
        lastEventId
        firstAvailableId
        replayLimit
      }
    }
  }
`);

const PublishEvent = graphql(`
  mutation PublishEventForStream($input: PublishEventInput!) {
    publishEvent(input: $input) {
      __typename
      ... on PublishEventPayload { event { id channel eventType payload customerId timestamp } }
      ... on Error { code field details { code field } }
    }
  }
`);

const EventHistoryQuery = graphql(`
  query EventHistoryPage($after: String, $limit: Int, $channels: [String!]) {
    events(after: $after, limit: $limit, channels: $channels) {
      events {
        id
        eventType
        channel
        customerId
      }
      nextCursor
      hasMore
      truncated
    }
  }
`);

const CatalogQuery = graphql(`
  query EventCatalogList {
    eventCatalog {
      name
      description
      eventTypes
    }
  }
`);

type Message = { __typename: string; id?: string; eventType?: string; reason?: string; [k: string]: unknown };

async function publish(a: TestAccount, eventType: string, payload: Record<string, unknown> = {}): Promise<string> {
  const res = await a.gql(PublishEvent, { input: { eventType, payload } });
  expect(res.errors).toBeUndefined();
  return resultPayload(res.data!.publishEvent, 'PublishEventPayload').event.id;
}

/** Collects `count` messages from an async iterator of GraphQL results, then stops it. */
async function take(iterator: AsyncIterableIterator<any>, count: number, onFirst?: () => Promise<void>) {
  const out: Message[] = [];
  for await (const result of iterator) {
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    out.push(result.data.events as Message);
    if (out.length === 1 && onFirst) await onFirst();
    if (out.length >= count) break;
  }
  return out;
}

/** Yoga's own SSE transport: POST /graphql with `Accept: text/event-stream`; yields each `next` payload. */
async function* yogaSse(url: string, apiKey: string, query: string, variables: Record<string, unknown>) {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query, variables }),
  });
  expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event === 'complete') return;
      if (event === 'next' && data) yield JSON.parse(data);
      end = buffer.indexOf('\n\n');
    }
  }
}

const it = appTest();

describe('GraphQL events: subscription, history, catalog, publish', () => {
  for (const singleConnection of [false, true]) {
    it(`streams replay then live events over graphql-sse (${singleConnection ? 'single' : 'distinct'} connection mode)`, async ({
      t,
      a,
    }) => {
      const b = await t.newAccount();
      const before = await publish(a, 'sms.sent', { n: 0 });
      const replayed = await publish(a, 'sms.delivered', { n: 1 });
      const client = createClient({
        url: `${t.url}/graphql/stream`,
        headers: { authorization: `Bearer ${a.apiKey}` },
        singleConnection,
        retryAttempts: 0,
      });
      const live: string[] = [];
      const iterator = client.iterate({
        query: print(EventsSubscription),
        variables: { channels: ['sms'], lastEventId: before },
      });
      // The first (replayed) message proves the subscription is live; then publish more.
      const messages = await take(iterator as AsyncIterableIterator<any>, 3, async () => {
        await publish(b, 'sms.sent', { other: true });
        await publish(a, 'voice.completed');
        live.push(await publish(a, 'sms.failed', { n: 2 }));
        live.push(await publish(a, 'sms.received', { n: 3 }));
      });
      expect(messages.map((m) => m.id)).toEqual([replayed, ...live]);
      expect(messages[0]).toEqual({
        __typename: 'Event',
        id: replayed,
        channel: 'sms',
        eventType: 'sms.delivered',
        payload: { n: 1 },
        customerId: a.accountId,
        timestamp: expect.stringMatching(/Z$/),
      });
      client.dispose();
    });
  }

  it('resubscribing with lastEventId while events keep being published yields every id once, in order', async ({
    t,
    a,
  }) => {
    const client = createClient({
      url: `${t.url}/graphql/stream`,
      headers: { authorization: `Bearer ${a.apiKey}` },
      retryAttempts: 0,
    });
    const published: string[] = [await publish(a, 'sms.sent', { i: 0 })];
    let stop = false;
    const publisher = (async () => {
      while (!stop) published.push(await publish(a, 'sms.sent', { i: published.length }));
    })();
    const received: string[] = [];
    let cursor = '0';
    for (let round = 0; round < 4; round++) {
      const iterator = client.iterate({ query: print(EventsSubscription), variables: { lastEventId: cursor } });
      received.push(...(await take(iterator as AsyncIterableIterator<any>, 25)).map((m) => m.id!));
      cursor = received.at(-1)!;
    }
    stop = true;
    await publisher;
    const rest = published.length - received.length;
    if (rest > 0) {
      const iterator = client.iterate({ query: print(EventsSubscription), variables: { lastEventId: cursor } });
      received.push(...(await take(iterator as AsyncIterableIterator<any>, rest)).map((m) => m.id!));
    }
    expect(received).toEqual(published);
    client.dispose();
  });

  it('streams over Yoga’s own SSE transport, with a StreamTruncated notice for an unknown id', async ({ t, a }) => {
    const first = await publish(a, 'did.state_changed', { number: '+14155550100', state: 'warming' });
    const stream = yogaSse(t.url, a.apiKey, print(EventsSubscription), { lastEventId: '99999999999999' });
    const got: Message[] = [];
    let live = '';
    for await (const result of stream) {
      got.push(result.data.events);
      if (got.length === 2) live = await publish(a, 'did.state_changed', { state: 'active' });
      if (got.length === 3) break;
    }
    expect(got[0]).toEqual({
      __typename: 'StreamTruncated',
      reason: 'unknown_id',
      lastEventId: '99999999999999',
      firstAvailableId: first,
      replayLimit: 1000,
    });
    expect(got.slice(1).map((m) => m.id)).toEqual([first, live]);
  });

  it('refuses unknown channels and keys without events:read in the subscription', async ({ t, a }) => {
    const client = createClient({
      url: `${t.url}/graphql/stream`,
      headers: { authorization: `Bearer ${a.apiKey}` },
      retryAttempts: 0,
    });
    const results: any[] = [];
    for await (const r of client.iterate({ query: print(EventsSubscription), variables: { channels: ['fax'] } })) {
      results.push(r);
    }
    client.dispose();
    expect(results[0].errors[0].extensions).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ code: 'UNKNOWN_CHANNEL', field: 'channels' }],
    });
    const writer = await t.newAccount(['events:write']);
    const stream = yogaSse(t.url, writer.apiKey, print(EventsSubscription), {});
    const first = await stream.next();
    expect(first.value.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it('pages history with the same cursor and lists the catalog', async ({ t, a }) => {
    const ids = [await publish(a, 'billing.usage', { units: 1 }), await publish(a, 'sms.sent')];
    const third = await publish(a, 'billing.usage', { units: 2 });
    const page = await a.gql(EventHistoryQuery, { limit: 1, channels: ['billing'] });
    expect(page.data?.events).toMatchObject({ events: [{ id: ids[0], channel: 'billing' }], hasMore: true });
    const next = await a.gql(EventHistoryQuery, { after: page.data!.events.nextCursor, channels: ['billing'] });
    expect(next.data?.events).toEqual({
      events: [{ id: third, eventType: 'billing.usage', channel: 'billing', customerId: a.accountId }],
      nextCursor: third,
      hasMore: false,
      truncated: false,
    });
    const bad = await a.gql(EventHistoryQuery, { after: 'x' });
    expect(bad.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
    const catalog = await a.gql(CatalogQuery);
    expect(catalog.data?.eventCatalog.find((c) => c.name === '10dlc')?.eventTypes).toContain('10dlc.brand.registered');
    const reader = await t.newAccount(['events:read']);
    const denied = await reader.gql(PublishEvent, { input: { eventType: 'sms.sent' } });
    expect(denied.data?.publishEvent).toMatchObject({ __typename: 'ForbiddenError', code: 'FORBIDDEN' });
    const unknown = await a.gql(PublishEvent, { input: { eventType: 'sms.teleported' } });
    expect(typedError(unknown.data?.publishEvent).details).toEqual([
      expect.objectContaining({ code: 'UNKNOWN_EVENT_TYPE', field: 'eventType' }),
    ]);
  });

  it('completes open subscriptions on shutdown', async ({ t, a }) => {
    const seed = await publish(a, 'sms.sent');
    const client = createClient({
      url: `${t.url}/graphql/stream`,
      headers: { authorization: `Bearer ${a.apiKey}` },
      retryAttempts: 0,
    });
    const iterator = client.iterate({ query: print(EventsSubscription), variables: { lastEventId: '0' } });
    expect(((await iterator.next()).value as any).data.events.id).toBe(seed);
    const stream = yogaSse(t.url, a.apiKey, print(EventsSubscription), { lastEventId: '0' });
    expect((await stream.next()).value.data.events.id).toBe(seed);
    await t.close();
    expect((await iterator.next()).done).toBe(true);
    expect((await stream.next()).done).toBe(true);
    client.dispose();
  });
});
