// One JSON operation POSTed to /graphql with a simple `Accept` (none, */*, application/json,
// application/graphql-response+json) skips Yoga's WHATWG adapter (src/graphql/http.ts); any other `Accept` takes Yoga's
// full path. Both must answer alike: same status, media type and body, errors and refusals included. A query text
// seen before takes the direct path (src/graphql/direct.ts: its compiled form, without Yoga's pipeline) on the same
// simple Accept values, and must answer the same bytes and headers too.
import { describe, expect } from 'vitest';
import { directPathOn } from '../../src/graphql/http.js';
import { brandBody } from '../compliance/fixtures.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const it = appTest();

/** The header names of an answer, in order, without the ones that differ per request. */
function headerNames(headers: Headers): string[] {
  return [...headers.keys()].filter((k) => k !== 'date' && k !== 'x-request-id');
}

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
      'a page of brands',
      {
        query:
          'query L($first: Int) { brands(first: $first) { edges { cursor node { id name status createdAt updatedAt } } pageInfo { hasNextPage endCursor } } }',
        variables: { first: 20 },
      },
    ],
    [
      'one of two named operations',
      { query: 'query A { viewer { accountId } } query B { viewer { scopes } }', operationName: 'B' },
    ],
    ['two operations and no name', { query: 'query A { viewer { accountId } } query B { viewer { scopes } }' }],
    ['null variables', { query: '{ viewer { accountId } }', variables: null }],
    ['extensions', { query: '{ viewer { accountId } }', extensions: {} }],
    [
      'a mutation that fails',
      { query: 'mutation { updateBrand(id: "00000000-0000-0000-0000-000000000000", input: {}) { id } }' },
    ],
    ['a NUL in a literal', { query: '{ brand(id: "a\u0000b") { id } }' }],
    [
      'a variable of the wrong type',
      {
        query: 'query L($first: Int) { brands(first: $first) { pageInfo { hasNextPage } } }',
        variables: { first: 'x' },
      },
    ],
    ['a required variable missing', { query: 'query B($id: ID!) { brand(id: $id) { id } }', variables: {} }],
    [
      'a query whose resolver fails (unknown brand)',
      { query: '{ brand(id: "00000000-0000-0000-0000-000000000000") { id name } }' },
    ],
    [
      'a lone surrogate in a variable',
      { query: 'query B($id: ID!) { brand(id: $id) { id } }', variables: { id: '\ud800' } },
    ],
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
      // Twice: the first sight of a text admits it to the direct path, the second is served from there.
      for (let round = 0; round < 2; round++) {
        const { viaFast, viaFull } = await both(withId, fast, full);
        expect(viaFast.status, `Accept ${fast}`).toBe(viaFull.status);
        expect(viaFast.headers.get('content-type')).toBe(viaFull.headers.get('content-type'));
        expect(viaFast.body).toEqual(viaFull.body);
        expect(JSON.stringify(viaFast.body)).toBe(JSON.stringify(viaFull.body)); // key order too
        expect(headerNames(viaFast.headers)).toEqual(headerNames(viaFull.headers));
        expect(viaFast.headers.get('content-length')).toBe(viaFull.headers.get('content-length'));
      }
    }
  });

  it('has the direct path on (a new onExecute plugin turns it off until direct.ts reproduces it)', ({ t }) => {
    expect(directPathOn.get(t.app.http)).toBe(true);
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
