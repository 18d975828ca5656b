// One JSON operation POSTed to /graphql with a simple `Accept` (none, */*, application/json,
// application/graphql-response+json) skips Yoga's WHATWG adapter (src/graphql/http.ts); any other `Accept` takes Yoga's
// full path. Both must answer alike: same status, media type and body, errors and refusals included.
import { describe, expect } from 'vitest';
import { brandBody } from '../compliance/fixtures.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const it = appTest();

describe('GraphQL over either transport path', () => {
  let a: TestAccount;
  let brandId: string;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
    const created = await a.request('POST', '/compliance/brands', brandBody());
    expect(created.status).toBe(201);
    brandId = created.body.id;
  });

  /** The same request through the fast path (`fast` Accept) and Yoga's full path (an equivalent Accept it parses). */
  async function both(body: unknown, fast: string | undefined, full: string) {
    const viaFast = await a.request('POST', '/graphql', body, fast === undefined ? {} : { accept: fast });
    const viaFull = await a.request('POST', '/graphql', body, { accept: full });
    return { viaFast, viaFull };
  }

  const bodies: [string, unknown][] = [
    ['a query', { query: '{ viewer { accountId scopes } }' }],
    [
      'a query with variables',
      { query: 'query B($id: ID!) { brand(id: $id) { id name ein createdAt } }', variables: { id: 'x' } },
    ],
    ['a domain error', { query: '{ brand(id: "00000000-0000-0000-0000-000000000000") { id } }' }],
    ['a syntax error', { query: '{ viewer { ' }],
    ['an unknown field', { query: '{ nope }' }],
    [
      'variables that do not coerce',
      { query: 'query($n: Int) { brands(first: $n) { totalCount } }', variables: { n: 'x' } },
    ],
    ['a query that is not a string', { query: 1 }],
    ['no query', {}],
    ['an unknown parameter', { query: '{ viewer { accountId } }', foo: 1 }],
    ['a cost over budget', { query: '{ a: events(limit: 30000) { events { id payload } } }' }],
    [
      'an operation name that is not in the document',
      { query: 'query A { viewer { accountId } }', operationName: 'B' },
    ],
  ];

  it.each(bodies)('answers %s alike', async (_name, body) => {
    const withId = JSON.parse(JSON.stringify(body).replace('"x"', JSON.stringify(brandId)));
    for (const [fast, full] of [
      [undefined, 'application/json;charset=utf-8'],
      ['*/*', 'application/json;charset=utf-8'],
      ['application/json', 'application/json;charset=utf-8'],
      ['application/graphql-response+json', 'application/graphql-response+json;charset=utf-8'],
    ] as const) {
      const { viaFast, viaFull } = await both(withId, fast, full);
      expect(viaFast.status, `Accept ${fast}`).toBe(viaFull.status);
      expect(viaFast.headers.get('content-type')).toBe(viaFull.headers.get('content-type'));
      expect(viaFast.body).toEqual(viaFull.body);
    }
  });

  it('streams a subscription POSTed with Accept */* as Yoga does, and refuses it as application/json', async ({
    t,
  }) => {
    const query = `subscription { brandUpdated(id: "${brandId}") { eventId } }`;
    const open = async (accept: string) => {
      const controller = new AbortController();
      const res = await fetch(`${t.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json', accept },
        body: JSON.stringify({ query }),
        signal: controller.signal,
      });
      const type = res.headers.get('content-type');
      const status = res.status;
      const first = res.body ? new TextDecoder().decode((await res.body.getReader().read()).value) : '';
      controller.abort();
      return { status, type, first };
    };
    const fast = await open('*/*');
    const full = await open('text/event-stream');
    expect(fast).toEqual(full);
    expect(fast.type).toContain('text/event-stream');
    const refusedFast = await a.request('POST', '/graphql', { query }, { accept: 'application/json' });
    const refusedFull = await a.request('POST', '/graphql', { query }, { accept: 'application/json;charset=utf-8' });
    expect(refusedFast.status).toBe(406);
    expect(refusedFull.status).toBe(406);
    expect(refusedFast.headers.get('accept')).toBe(refusedFull.headers.get('accept'));
  });
});
