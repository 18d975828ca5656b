import { randomUUID } from 'node:crypto';
import { print } from 'graphql';
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../generated/gql.js';
import { accountClient, startApp, type TestApp } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';

const LiveEvents = graphql(`
  subscription DistributedEvents($channels: [String!], $lastEventId: String) {
    events(channels: $channels, lastEventId: $lastEventId) {
      __typename
      ... on Event {
        id
        eventType
        customerId
      }
    }
  }
`);

/**
 * Two instances sharing PostgreSQL (TEST_DATABASE_URL) and Redis (TEST_REDIS_URL): an event committed on one
 * reaches SSE and GraphQL subscribers connected to the other.
 */
describe('events across two instances (PostgreSQL + Redis)', () => {
  let one: TestApp;
  let two: TestApp;
  // A prefix of our own, so other suites sharing this Redis never see (or send) our events.
  const env = { REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_KEY_PREFIX: `sb-test-${randomUUID()}:` };
  beforeAll(async () => {
    one = await startApp({ env });
    two = await startApp({ env });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  it('passes an event published on one instance to an SSE and a GraphQL subscriber on the other', async () => {
    const onOne = await one.newAccount();
    const onTwo = accountClient(two.url, onOne.accountId, onOne.apiKey);
    const sse = openSse(`${two.url}/api/events?token=${onTwo.apiKey}&channels=sms`, ['sms.sent', 'sms.delivered']);
    await sse.opened();

    // GraphQL over graphql-sse on instance two: a first event replayed proves the subscription is established.
    const seed = await onOne.request('POST', '/api/events', { eventType: 'sms.sent', payload: { seed: true } });
    const client = createClient({
      url: `${two.url}/graphql/stream`,
      headers: { authorization: `Bearer ${onTwo.apiKey}` },
      retryAttempts: 0,
    });
    const iterator = client.iterate({ query: print(LiveEvents), variables: { channels: ['sms'], lastEventId: '0' } });
    const first = await iterator.next();
    expect((first.value as any).data.events.id).toBe(seed.body.id);

    const published = await onOne.request('POST', '/api/events', {
      eventType: 'sms.delivered',
      payload: { id: 'm1', from: '+14155550100', to: '+14155550101', status: 'delivered' },
    });
    expect(published.status).toBe(202);
    const second = await iterator.next();
    expect((second.value as any).data.events).toEqual({
      __typename: 'Event',
      id: published.body.id,
      eventType: 'sms.delivered',
      customerId: onOne.accountId,
    });
    await sse.waitFor((m) => m.some((x) => x.id === published.body.id));
    expect(sse.messages.map((m) => m.id)).toEqual([seed.body.id, published.body.id]);
    expect(sse.messages[1]?.data).toMatchObject({ channel: 'sms', customerId: onOne.accountId });

    // A disconnect in between: the SSE client resumes with Last-Event-ID from the shared log.
    sse.hold();
    sse.cut();
    const missed = await onTwo.request('POST', '/api/events', { eventType: 'sms.sent', payload: {} });
    sse.release();
    await sse.waitFor((m) => m.some((x) => x.id === missed.body.id));
    expect(sse.messages.map((m) => m.id)).toEqual([seed.body.id, published.body.id, missed.body.id]);
    sse.close();
    await iterator.return?.();
    client.dispose();
  });
});
