// A typed-subscription scenario shared by the embedded test (one instance) and the distributed one (two instances
// on PostgreSQL + Redis): the subscriber listens on `listen`, the changes are made through `write`.
import { createClient } from 'graphql-sse';
import { expect } from 'vitest';
import { brandBody } from '../compliance/fixtures.js';
import type { TestAccount } from '../helpers/app.js';

const BRAND_UPDATED = `subscription ($id: ID!, $lastEventId: String) {
  brandUpdated(id: $id, lastEventId: $lastEventId) { eventId eventType brand { id name status } }
}`;

type Change = { eventId: string; eventType: string; brand: { id: string; name: string; status: string } | null };

/** Reads `count` results of a subscription over graphql-sse, calling `afterFirst` once it is live. */
export async function collect(
  url: string,
  apiKey: string,
  query: string,
  variables: Record<string, unknown>,
  count: number,
  onSubscribed?: () => Promise<void>,
  singleConnection = false,
): Promise<any[]> {
  const client = createClient({
    url: `${url}/graphql/stream`,
    headers: { authorization: `Bearer ${apiKey}` },
    singleConnection,
    retryAttempts: 0,
  });
  const out: any[] = [];
  try {
    const iterator = client.iterate({ query, variables });
    // Callers subscribe with a `lastEventId` taken before their writes, so the writes arrive exactly once whether
    // they land before the subscription is live (replay) or after (live): no timing assumption.
    const first = iterator.next();
    if (onSubscribed) await onSubscribed();
    let result = await first;
    while (!result.done) {
      out.push(result.value);
      if (out.length >= count || result.value.errors) break;
      result = await iterator.next();
    }
    await iterator.return?.();
  } finally {
    client.dispose();
  }
  return out;
}

/** The account's latest event id now (a cursor to subscribe after). */
export async function latestEventId(account: TestAccount): Promise<string> {
  let after: string | undefined;
  for (;;) {
    const page = await account.request('POST', '/graphql', {
      query: 'query ($after: String) { events(after: $after, limit: 1000) { nextCursor hasMore } }',
      variables: { after },
    });
    after = page.body.data.events.nextCursor ?? after;
    if (!page.body.data.events.hasMore) return after ?? '0';
  }
}

/**
 * brandUpdated: live changes made on `write` reach a subscriber on `listen` with the brand re-read; a second
 * subscription resumes after the first change's id and gets only the later one; another account gets NOT_FOUND.
 */
export async function brandUpdatedScenario(
  listen: { url: string; account: TestAccount },
  write: { account: TestAccount },
  stranger: { url: string; account: TestAccount },
  singleConnection = false,
): Promise<void> {
  const w = write.account;
  const created = await w.request('POST', '/compliance/brands', brandBody({ name: 'Typed Subs One LLC' }));
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const rename = async (name: string) => {
    const res = await w.request('PUT', `/compliance/brands/${id}`, { ...brandBody({ name }), vertical: 'TECHNOLOGY' });
    expect(res.status).toBe(200);
  };

  const cursor = await latestEventId(listen.account);
  const live = await collect(
    listen.url,
    listen.account.apiKey,
    BRAND_UPDATED,
    { id, lastEventId: cursor },
    2,
    async () => {
      await rename('Typed Subs Two LLC');
      await rename('Typed Subs Three LLC');
    },
    singleConnection,
  );
  expect(live.map((r) => r.errors)).toEqual([undefined, undefined]);
  const changes = live.map((r) => r.data.brandUpdated as Change);
  expect(changes.map((c) => c.eventType)).toEqual(['10dlc.brand.updated', '10dlc.brand.updated']);
  expect(changes[1]!.brand).toMatchObject({ id, name: 'Typed Subs Three LLC' });
  expect(BigInt(changes[1]!.eventId)).toBeGreaterThan(BigInt(changes[0]!.eventId));

  // Resume after the first change: the replay holds exactly the second one.
  const resumed = await collect(
    listen.url,
    listen.account.apiKey,
    BRAND_UPDATED,
    { id, lastEventId: changes[0]!.eventId },
    1,
  );
  expect(resumed[0].errors).toBeUndefined();
  expect(resumed[0].data.brandUpdated.eventId).toBe(changes[1]!.eventId);
  expect(resumed[0].data.brandUpdated.brand.name).toBe('Typed Subs Three LLC');

  // Another account cannot watch this brand.
  const denied = await collect(stranger.url, stranger.account.apiKey, BRAND_UPDATED, { id }, 1);
  expect(denied[0].errors[0].extensions.code).toBe('NOT_FOUND');
}
