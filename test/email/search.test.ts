import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { graphql } from '../generated/gql.js';
import { startApp, type TestAccount, type TestApp } from '../helpers/app.js';
import { smtpSend } from '../helpers/mail-peers.js';

let n = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

const GqlSearch = graphql(`
  query ThreadSearch($identityId: ID, $q: String, $from: String, $limit: Int, $cursor: String) {
    emailThreadSearch(identityId: $identityId, q: $q, from: $from, limit: $limit, cursor: $cursor) {
      threads { threadId subject }
      nextCursor
    }
  }
`);

/** Issue 21 item 4: full-text search (tsvector + GIN) over subject, bodies and addresses, on PGlite and PostgreSQL. */
describe('thread search', () => {
  let t: TestApp;
  let a: TestAccount;
  let sender: { id: string; address: string };
  let box: { id: string; address: string };
  const subjects = (res: { body: { threads: { subject: string }[] } }) => res.body.threads.map((x) => x.subject).sort();

  beforeAll(async () => {
    t = await startApp();
    a = await t.newAccount();
    const make = async () =>
      (await a.request('POST', '/api/email/identities', { localPart: unique('search') })).body as {
        id: string;
        address: string;
      };
    sender = await make();
    box = await make();
    const send = (subject: string, body: string) =>
      a.request('POST', `/api/email/identities/${sender.id}/send`, { to: box.address, subject, body });
    expect((await send('Invoice for March', 'Please pay the invoices by Friday.')).status).toBe(202);
    expect((await send('Lunch plans', 'Pizza or sushi on Thursday?')).status).toBe(202);
    await smtpSend(t.app.smtpPort()!, {
      from: 'alice.smith@customer.example',
      to: box.address,
      subject: 'Refund request',
      text: 'My order 1234 arrived broken. Café owner here.',
    });
    await smtpSend(t.app.smtpPort()!, {
      from: 'bob.jones@partner.example',
      to: box.address,
      cc: 'billing.team@ledger.example',
      subject: 'Signed',
      text: 'Will signed the contract yesterday. Grüße aus München, спасибо.',
    });
    await vi.waitFor(
      async () => {
        const list = await a.request('GET', `/api/email/identities/${box.id}/threads`);
        expect(list.body.threads).toHaveLength(4);
      },
      { timeout: 20_000, interval: 50 },
    );
  });
  afterAll(() => t?.close());

  const search = (query: string, id = box.id) => a.request('GET', `/api/email/identities/${id}/threads?${query}`);

  it('finds words in subject and body, stemmed (invoices finds Invoice), phrases, negation and or', async () => {
    expect(subjects(await search('q=invoice'))).toEqual(['Invoice for March']);
    expect(subjects(await search('q=invoices'))).toEqual(['Invoice for March']);
    expect(subjects(await search('q=pizza'))).toEqual(['Lunch plans']);
    expect(subjects(await search('q=caf%C3%A9'))).toEqual(['Refund request']);
    expect(subjects(await search(`q=${encodeURIComponent('"arrived broken"')}`))).toEqual(['Refund request']);
    expect(subjects(await search(`q=${encodeURIComponent('broken arrived -order')}`))).toEqual([]);
    expect(subjects(await search(`q=${encodeURIComponent('pizza or invoice')}`))).toEqual([
      'Invoice for March',
      'Lunch plans',
    ]);
    expect(subjects(await search('q=nothinglikethis'))).toEqual([]);
  });

  it('keeps stop words: a name that is one ("Will"), and phrases written with them', async () => {
    expect(subjects(await search('q=will'))).toEqual(['Signed']);
    expect(subjects(await search('q=Will'))).toEqual(['Signed']);
    expect(subjects(await search(`q=${encodeURIComponent('"will signed"')}`))).toEqual(['Signed']);
    expect(subjects(await search(`q=${encodeURIComponent('"signed the contract"')}`))).toEqual(['Signed']);
    expect(subjects(await search(`q=${encodeURIComponent('"contract the signed"')}`))).toEqual([]);
    expect(subjects(await search(`q=${encodeURIComponent('"will signed the contract yesterday"')}`))).toEqual([
      'Signed',
    ]);
  });

  it('stems words of query and message alike; a stop word in the query need not be in the message', async () => {
    expect(subjects(await search('q=signing'))).toEqual(['Signed']);
    expect(subjects(await search('q=contracts'))).toEqual(['Signed']);
    expect(subjects(await search(`q=${encodeURIComponent('"signs the contracts"')}`))).toEqual(['Signed']);
    // "of" is in neither message: the stemmed reading drops it, as before.
    expect(subjects(await search(`q=${encodeURIComponent('invoices of march')}`))).toEqual(['Invoice for March']);
    expect(subjects(await search(`q=${encodeURIComponent('the invoice')}`))).toEqual(['Invoice for March']);
    expect(subjects(await search(`q=${encodeURIComponent('will invoice')}`))).toEqual(['Invoice for March']);
    expect(subjects(await search(`q=${encodeURIComponent('will contract')}`))).toEqual(['Signed']);
  });

  it('finds words of other languages, stemmed alike on both sides', async () => {
    expect(subjects(await search(`q=${encodeURIComponent('münchen')}`))).toEqual(['Signed']);
    expect(subjects(await search(`q=${encodeURIComponent('Grüße')}`))).toEqual(['Signed']);
    expect(subjects(await search(`q=${encodeURIComponent('спасибо')}`))).toEqual(['Signed']);
    expect(subjects(await search(`q=${encodeURIComponent('"aus münchen"')}`))).toEqual(['Signed']);
  });

  it('finds To and Cc addresses and their parts, alone and with words of the message', async () => {
    expect(subjects(await search('q=billing.team%40ledger.example'))).toEqual(['Signed']);
    expect(subjects(await search('q=ledger.example'))).toEqual(['Signed']);
    expect(subjects(await search('q=billing'))).toEqual(['Signed']);
    expect(subjects(await search('q=jones'))).toEqual(['Signed']);
    expect(subjects(await search(`q=${encodeURIComponent('alice refund')}`))).toEqual(['Refund request']);
    expect(subjects(await search(`q=${encodeURIComponent('alice pizza')}`))).toEqual([]);
    expect(subjects(await search(`q=${encodeURIComponent(box.address)}`))).toEqual([
      'Invoice for March',
      'Lunch plans',
      'Refund request',
      'Signed',
    ]);
  });

  it('finds addresses whole, by local part and by domain; filters by from, time and label', async () => {
    expect(subjects(await search('q=alice.smith%40customer.example'))).toEqual(['Refund request']);
    expect(subjects(await search('q=alice'))).toEqual(['Refund request']);
    expect(subjects(await search('q=customer.example'))).toEqual(['Refund request']);
    expect(subjects(await search('from=customer.example'))).toEqual(['Refund request']);
    expect(subjects(await search(`from=${encodeURIComponent(sender.address)}`))).toEqual([
      'Invoice for March',
      'Lunch plans',
    ]);
    expect(subjects(await search(`q=pizza&from=customer.example`))).toEqual([]);
    const future = encodeURIComponent(new Date(Date.now() + 3600_000).toISOString());
    expect(subjects(await search(`after=${future}`))).toEqual([]);
    expect(subjects(await search(`before=${future}&q=invoice`))).toEqual(['Invoice for March']);
    const refund = (await search('q=refund')).body.threads[0].threadId as string;
    expect(
      (await a.request('PATCH', `/api/email/identities/${box.id}/threads/${refund}`, { addLabels: ['billing'] }))
        .status,
    ).toBe(200);
    expect(subjects(await search('q=order&label=billing'))).toEqual(['Refund request']);
    expect(subjects(await search('q=pizza&label=billing'))).toEqual([]);
  });

  it('pages with the thread list cursor', async () => {
    const first = await search(`q=${encodeURIComponent('pizza or invoice or refund')}&limit=2`);
    expect(first.body.threads).toHaveLength(2);
    expect(first.body.nextCursor).not.toBe('');
    const second = await search(
      `q=${encodeURIComponent('pizza or invoice or refund')}&limit=2&cursor=${first.body.nextCursor}`,
    );
    expect(second.body.threads).toHaveLength(1);
    expect(second.body.nextCursor).toBe('');
    const all = [...first.body.threads, ...second.body.threads].map((x: { subject: string }) => x.subject).sort();
    expect(all).toEqual(['Invoice for March', 'Lunch plans', 'Refund request']);
  });

  it('searches every identity of the account at GET /api/email/threads, and no other account', async () => {
    const res = await a.request('GET', '/api/email/threads?q=invoice');
    expect(res.status).toBe(200);
    expect(res.body.threads.map((x: { identityId: string }) => x.identityId).sort()).toEqual(
      [sender.id, box.id].sort(),
    );
    const other = await t.newAccount();
    expect((await other.request('GET', '/api/email/threads?q=invoice')).body.threads).toEqual([]);
    expect((await other.request('GET', `/api/email/identities/${box.id}/threads?q=invoice`)).status).toBe(404);
  });

  it('answers bad filters with 400 naming the field', async () => {
    const cases: [string, string][] = [
      [`q=${'x'.repeat(501)}`, 'q'],
      ['from=not%20an%20address', 'from'],
      ['after=yesterday', 'after'],
      ['cursor=bogus', 'cursor'],
    ];
    for (const [query, field] of cases) {
      const res = await search(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error.field, query).toMatch(new RegExp(`^(query\\.)?${field}$`));
    }
    // Query syntax is never an error: stray operators and quotes are read as words.
    expect((await search(`q=${encodeURIComponent('!!! & | ( "')}`)).status).toBe(200);
  });

  it('GraphQL emailThreadSearch', async () => {
    const res = await a.gql(GqlSearch, { identityId: box.id, q: 'invoices' });
    expect(res.data?.emailThreadSearch.threads.map((x) => x.subject)).toEqual(['Invoice for March']);
    const all = await a.gql(GqlSearch, { from: 'customer.example' });
    expect(all.data?.emailThreadSearch.threads.map((x) => x.subject)).toEqual(['Refund request']);
    const bad = await a.gql(GqlSearch, { q: 'x', limit: 0 });
    expect(bad.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
  });
});
