import { print } from 'graphql';
import { createClient } from 'graphql-sse';
import { describe, expect } from 'vitest';
import { graphql } from '../generated/gql.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { openSse } from '../helpers/sse.js';

async function publish(a: TestAccount, payload: Record<string, unknown> = {}): Promise<string> {
  const res = await a.request('POST', '/api/events', { eventType: 'sms.sent', payload });
  expect(res.status).toBe(202);
  return res.body.id;
}

const LiveIds = graphql(`
  subscription LostPublishIds($lastEventId: String) {
    events(lastEventId: $lastEventId) {
      __typename
      ... on Event {
        id
      }
    }
  }
`);

const it = appTest({
  env: { EVENT_TAIL_CHECK_MS: '100' },
  dropPublish: (event) => event.payload.lost === true,
});

/**
 * The tail check: when the last events' publish is lost and nothing follows them, they still reach connected
 * subscribers (the app drops the publish of events whose payload has `lost: true`; tail check every 100 ms).
 */
describe('a lost bus publish with nothing after it (tail check)', () => {
  it('delivers the last events of a lost publish to a connected SSE client, in order, once', async ({ t, a }) => {
    const es = openSse(`${t.url}/api/events?token=${a.apiKey}&channels=sms`, ['sms.sent']);
    await es.opened();
    const first = await publish(a);
    const lost = [await publish(a, { lost: true }), await publish(a, { lost: true })];
    await es.waitFor((m) => m.length === 3);
    const last = await publish(a);
    await es.waitFor((m) => m.some((x) => x.id === last));
    expect(es.messages.map((m) => m.id)).toEqual([first, ...lost, last]);
    expect(es.requests).toEqual([null]);
    es.close();
  });

  it('delivers them to a GraphQL subscription too', async ({ t, a }) => {
    const client = createClient({
      url: `${t.url}/graphql/stream`,
      headers: { authorization: `Bearer ${a.apiKey}` },
      retryAttempts: 0,
    });
    // A first event replayed (lastEventId 0, a fresh account) proves the subscription is established.
    const seed = await publish(a);
    const iterator = client.iterate({ query: print(LiveIds), variables: { lastEventId: '0' } });
    const idOf = (r: IteratorResult<unknown>) => (r.value as any).data.events.id as string;
    expect(idOf(await iterator.next())).toBe(seed);
    const lost = await publish(a, { lost: true });
    expect(idOf(await iterator.next())).toBe(lost);
    const after = await publish(a);
    expect(idOf(await iterator.next())).toBe(after);
    await iterator.return?.();
    client.dispose();
  });
});
