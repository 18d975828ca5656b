import { type Client, createClient } from 'graphql-ws';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { brandBody } from '../compliance/fixtures.js';
import { accountClient } from '../helpers/app.js';
import { useTwoInstances } from './two-instances.js';

function wsClient(url: string, apiKey: string): Client {
  return createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${apiKey}` },
    retryAttempts: 0,
  });
}

/** Resolves with the first result `until` accepts; `act` runs repeatedly until then (the subscription's start is not observable). */
async function firstMatching(client: Client, query: string, until: (r: any) => boolean, act: () => Promise<void>) {
  let dispose = () => {};
  let done = false;
  const first = new Promise<any>((resolve, reject) => {
    dispose = client.subscribe({ query }, { next: (r) => until(r) && resolve(r), error: reject, complete: () => {} });
  });
  const acting = (async () => {
    while (!done) {
      await act();
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  try {
    return await first;
  } finally {
    done = true;
    await acting;
    dispose();
  }
}

describe('graphql-ws across two instances (PostgreSQL + Redis)', () => {
  const apps = useTwoInstances();
  const clients: Client[] = [];
  afterAll(async () => {
    for (const c of clients) await c.dispose();
  });

  it('an events subscription on one receives an event published on two', async () => {
    const { one, two } = apps;
    const a = await one.newAccount();
    const onTwo = accountClient(two.url, a.accountId, a.apiKey);
    const c = wsClient(one.url, a.apiKey);
    clients.push(c);
    const got = await firstMatching(
      c,
      'subscription { events(channels: ["sms"]) { ... on Event { id eventType customerId payload } } }',
      (r) => r.data?.events?.payload?.id === 'ws-two',
      async () => {
        const res = await onTwo.request('POST', '/api/events', {
          eventType: 'sms.sent',
          payload: { id: 'ws-two', from: '+14155550100', to: '+14155550101', status: 'sent' },
        });
        expect(res.status).toBe(202);
      },
    );
    expect(got.data.events).toMatchObject({ eventType: 'sms.sent', customerId: a.accountId });
  });

  it('brandUpdated on one sees a rename made on two', async () => {
    const { one, two } = apps;
    const a = await one.newAccount();
    const onTwo = accountClient(two.url, a.accountId, a.apiKey);
    const created = await onTwo.request('POST', '/compliance/brands', brandBody({ name: 'WS Across LLC' }));
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const c = wsClient(one.url, a.apiKey);
    clients.push(c);
    let n = 0;
    const got = await firstMatching(
      c,
      `subscription { brandUpdated(id: "${id}") { brand { id name } } }`,
      (r) => /^WS Renamed \d+ LLC$/.test(r.data?.brandUpdated?.brand?.name ?? ''),
      async () => {
        const res = await onTwo.request('PUT', `/compliance/brands/${id}`, {
          ...brandBody({ name: `WS Renamed ${n++} LLC` }),
          vertical: 'TECHNOLOGY',
        });
        expect(res.status).toBe(200);
      },
    );
    expect(got.data.brandUpdated.brand.id).toBe(id);
  });
});
