import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { print } from 'graphql';
import { createClient } from 'graphql-sse';
import { describe, expect, it } from 'vitest';
import { graphql } from '../generated/gql.js';
import { accountClient, startApp } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';
import { useTwoInstances } from './two-instances.js';

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
  const apps = useTwoInstances();

  it('passes an event published on one instance to an SSE and a GraphQL subscriber on the other', async () => {
    const { one, two } = apps;
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

/** A TCP proxy to Redis that a test can take down (drop every connection, refuse new ones) and bring back. */
async function redisProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  let down = false;
  const server = net.createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    down() {
      down = true;
      for (const s of sockets) s.destroy();
    },
    up() {
      down = false;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('a Redis outage', () => {
  it('degrades live delivery to replay on reconnect, without losing, doubling or crashing', async () => {
    const proxy = await redisProxy(new URL(process.env.TEST_REDIS_URL!));
    const t = await startApp({ env: { REDIS_URL: proxy.url, REDIS_KEY_PREFIX: `sb-test-${randomUUID()}:` } });
    try {
      const a = await t.newAccount();
      const es = openSse(`${t.url}/api/events?token=${a.apiKey}`, ['sms.sent']);
      await es.opened();
      const publish = async () => {
        const res = await a.request('POST', '/api/events', { eventType: 'sms.sent', payload: {} });
        expect(res.status).toBe(202); // the event is durable even when Redis is unreachable
        return res.body.id as string;
      };
      const before = await publish();
      await es.waitFor((m) => m.length === 1);
      proxy.down();
      const during = [await publish(), await publish()];
      await es.waitFor((m) => m.length === 3); // delivered by replay on the client's reconnects
      proxy.up();
      const after = await publish();
      await es.waitFor((m) => m.length === 4);
      expect(es.messages.map((m) => m.id)).toEqual([before, ...during, after]);
      expect((await a.request('GET', '/healthz')).status).toBe(200);
      es.close();
    } finally {
      await t.close();
      await proxy.close();
    }
  });
});
