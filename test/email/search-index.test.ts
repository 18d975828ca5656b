import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { graphql } from '../generated/gql.js';
import { accountClient, startApp, type TestAccount, type TestApp, usingPostgres } from '../helpers/app.js';
import { smtpSend } from '../helpers/mail-peers.js';

const METRICS_TOKEN = 'metrics-token-0123456789';

const GqlSearch = graphql(`
  query IndexedSearch($q: String) {
    emailThreadSearch(q: $q) {
      threads { threadId subject }
    }
  }
`);

let n = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** `switchboard_search_index_pending` from GET /metrics. */
async function pendingGauge(t: TestApp): Promise<number> {
  const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  const line = (await res.text()).split('\n').find((l) => l.startsWith('switchboard_search_index_pending '));
  expect(line).toBeDefined();
  return Number(line!.split(' ')[1]);
}

/**
 * Mails `count` messages whose body holds `word` to a new identity of `a` (or to `to`), over SMTP (each answered
 * `250`). @returns the identity's id (undefined when `to` was given).
 */
async function receive(t: TestApp, a: TestAccount, word: string, count: number, to?: string): Promise<string> {
  const box = to
    ? { id: '', address: to }
    : ((await a.request('POST', '/api/email/identities', { localPart: unique('idx') })).body as {
        id: string;
        address: string;
      });
  for (let i = 0; i < count; i++) {
    await smtpSend(t.app.smtpPort()!, {
      from: 'carol@customer.example',
      to: box.address,
      subject: `Order ${i}`,
      text: `The parcel with the ${word} arrived today.`,
    });
  }
  return box.id;
}

// Issue 24 round 13: the search vector is computed after the 250 (src/domain/email/search-index.ts). A search
// still finds a message at once, and a restart finishes the messages a previous run left unindexed. On PGlite the
// two instances run one after the other on one data directory (it has one owner).
describe('search index after delivery', () => {
  let dataDir: string | undefined;
  let first: TestApp | undefined;
  let second: TestApp | undefined;
  beforeAll(async () => {
    if (!usingPostgres) dataDir = await mkdtemp(path.join(tmpdir(), 'switchboard-search-index-'));
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('finds a message right after its 250 through REST and GraphQL, and a restart indexes what was left', async () => {
    // Workers off: nothing indexes in the background, so only the search's own indexing can find these.
    first = await startApp({ env: { METRICS_TOKEN, WORKERS: 'false' }, dataDir });
    const a = await first.newAccount();
    const word = unique('zebrafish');
    await receive(first, a, word, 2);
    expect(await pendingGauge(first)).toBe(2);

    const rest = await a.request('GET', `/api/email/threads?q=${word}`);
    expect(rest.status).toBe(200);
    expect(rest.body.threads.map((x: { subject: string }) => x.subject).sort()).toEqual(['Order 0', 'Order 1']);
    expect(await pendingGauge(first)).toBe(0);

    const other = unique('platypus');
    await receive(first, a, other, 1);
    const gql = await a.gql(GqlSearch, { q: other });
    expect(gql.errors).toBeUndefined();
    expect(gql.data?.emailThreadSearch.threads.map((x) => x.subject)).toEqual(['Order 0']);

    // Left unindexed by an instance without workers; the next instance with workers indexes them unasked.
    const later = unique('narwhal');
    await receive(first, a, later, 3);
    expect(await pendingGauge(first)).toBe(3);
    await first.close();
    first = undefined;

    second = await startApp({ env: { METRICS_TOKEN }, dataDir });
    await expect.poll(() => pendingGauge(second!), { timeout: 20_000, interval: 100 }).toBe(0);
    const b = accountClient(second.url, a.accountId, a.apiKey);
    const found = await b.request('GET', `/api/email/threads?q=${later}`);
    expect(found.body.threads).toHaveLength(3);
  });
});

// Issue 24 round 15: the vectors live in a side table and the queue in another (prisma/migrations/
// 20261128190000_email_search_side_table). Deleting an identity's messages (the purge after deprovisioning) takes
// their indexed rows and their queue rows with them: the purge succeeds, search no longer finds them, nothing stays
// pending, and the other identity's messages are still found.
describe('search index and deleted messages', () => {
  const clock = new ManualClock();
  let t: TestApp | undefined;
  afterAll(() => t?.close());

  it('a purged identity leaves neither search results nor pending rows', async () => {
    t = await startApp({ env: { METRICS_TOKEN }, clock });
    const a = await t.newAccount();
    const word = unique('axolotl');
    await receive(t, a, word, 1);
    const gone = await receive(t, a, word, 2);
    const found = await a.request('GET', `/api/email/threads?q=${word}`);
    expect(found.body.threads).toHaveLength(3);
    // One more for the identity that goes, still queued (no worker ran, no search since) when it is purged.
    const boxes = (await a.request('GET', '/api/email/identities')).body.identities as {
      id: string;
      address: string;
    }[];
    await receive(t, a, word, 1, boxes.find((b) => b.id === gone)!.address);
    expect(await pendingGauge(t)).toBe(1);

    expect((await a.request('DELETE', `/api/email/identities/${gone}`)).status).toBe(200);
    clock.advance(31 * 86_400_000);
    await t.drain(); // the purger deletes the identity, its threads and messages; the indexer what is left queued
    await t.drain();
    expect(await pendingGauge(t)).toBe(0);
    const after = await a.request('GET', `/api/email/threads?q=${word}`);
    expect(after.status).toBe(200);
    expect(after.body.threads.map((x: { subject: string }) => x.subject)).toEqual(['Order 0']);
  });
});
