import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { startApp, type TestAccount, type TestApp } from '../helpers/app.js';

/**
 * Issue 13's findings, each as a test through HTTP: malformed input answers a 4xx in the one error body
 * (`{"error": {code, message, field?, details?}}`) with `x-request-id`, never a 5xx, and changes nothing.
 */

interface Operation {
  method: string;
  path: string;
  params: string[];
  hasBody: boolean;
}

/** Every operation of the served OpenAPI document. */
async function operations(t: TestApp): Promise<Operation[]> {
  const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { requestBody?: unknown }>>;
  };
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      out.push({ method: method.toUpperCase(), path, params, hasBody: Boolean(op.requestBody) });
    }
  }
  return out;
}

/** The operator token of the test app: /admin/* routes take it instead of an API key (docs/operations.md). */
const ADMIN_TOKEN = 'bad-input-admin-token-0123456789';

/** Sends a raw request (the URL is used as given, without re-encoding) with the credential its route takes. */
async function raw(t: TestApp, a: TestAccount, method: string, path: string, init: RequestInit = {}) {
  const credential = path.startsWith('/admin/') ? ADMIN_TOKEN : a.apiKey;
  const res = await fetch(`${t.url}${path}`, {
    ...init,
    method,
    headers: { authorization: `Bearer ${credential}`, ...(init.headers as Record<string, string>) },
  });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body };
}

function expectEnvelope(
  res: { status: number; headers: Headers; body: any },
  status: number,
  label: string,
  code?: string,
) {
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).toBe(status);
  expect(res.headers.get('x-request-id'), label).toBeTruthy();
  expect(res.headers.get('content-type'), label).toMatch(/application\/json/);
  expect(typeof res.body?.error?.code, label).toBe('string');
  expect(typeof res.body?.error?.message, label).toBe('string');
  expect(Object.keys(res.body), label).toEqual(['error']);
  if (code) expect(res.body.error.code, label).toBe(code);
}

describe('bad input: 4xx in the documented error body, never a 5xx (issue 13)', () => {
  let t: TestApp;
  let a: TestAccount;
  let ops: Operation[];
  beforeAll(async () => {
    t = await startApp({ clock: new ManualClock(), env: { ADMIN_TOKEN } });
    a = await t.newAccount();
    ops = await operations(t);
  });
  afterAll(() => t.close());

  it('refuses NUL bytes, bad characters and over-long ids in every path parameter with 400 naming the parameter', async () => {
    const withParams = ops.filter((o) => o.params.length > 0);
    expect(withParams.length).toBeGreaterThanOrEqual(30);
    const bad = ['%00', 'a%00b', '%0A', 'x'.repeat(101), 'y'.repeat(5000), '..%2F..', '%F0%9F%92%A9', 'a%20b'];
    for (const op of withParams) {
      for (const value of bad) {
        const path = op.path.replace(/\{(\w+)\}/g, value);
        const res = await raw(
          t,
          a,
          op.method,
          path,
          op.hasBody ? { body: '{}', headers: { 'content-type': 'application/json' } } : {},
        );
        const label = `${op.method} ${path.slice(0, 120)}`;
        expectEnvelope(res, 400, label, 'VALIDATION_FAILED');
        expect(res.body.error.field, label).toMatch(/^params\./);
      }
    }
  });

  it('answers a malformed percent-encoding (FST_ERR_BAD_URL) and a huge path parameter in the envelope', async () => {
    expectEnvelope(await raw(t, a, 'GET', '/compliance/brands/%ZZ'), 400, '%ZZ', 'BAD_URL');
    const res = await raw(t, a, 'GET', `/compliance/brands/${'z'.repeat(10_000)}`);
    expectEnvelope(res, 400, 'long id', 'VALIDATION_FAILED');
    expect(JSON.stringify(res.body)).not.toContain('z'.repeat(200)); // the URL is not echoed back
    // Past Node's 16 KiB header limit the HTTP parser refuses the request before Fastify: still the envelope.
    expectEnvelope(
      await raw(t, a, 'GET', `/compliance/brands/${'z'.repeat(20_000)}`),
      431,
      'huge URL',
      'HEADERS_TOO_LARGE',
    );
  });

  it('reads cursors and limits strictly: decimal only, range-checked', async () => {
    const over = await raw(t, a, 'GET', '/api/events/history?after=9223372036854775808');
    expectEnvelope(over, 400, 'after overflow', 'VALIDATION_FAILED');
    expect(over.body.error.field).toBe('query.after');
    expect((await raw(t, a, 'GET', '/api/events/history?after=9223372036854775807')).status).toBe(200);
    // Last-Event-ID past every id is an unknown cursor (a truncation notice), not a database error: see stream tests.
    for (const path of ['/compliance/brands', '/compliance/campaigns', '/api/numbers', '/api/events/history']) {
      for (const limit of ['0x10', '1e1', '+5', '5.0', '-1', '0', ' 5', '', 'ten', '99999999999999999999']) {
        const res = await raw(t, a, 'GET', `${path}?limit=${encodeURIComponent(limit)}`);
        expectEnvelope(res, 400, `${path}?limit=${limit}`, 'VALIDATION_FAILED');
        expect(res.body.error.field).toBe('query.limit');
      }
      expect((await raw(t, a, 'GET', `${path}?limit=16`)).status, path).toBe(200);
    }
  });

  it('refuses lone UTF-16 surrogates in a JSON body with 400 naming the field, storing nothing', async () => {
    const body = '{"name": "Lone\\ud800", "ein": "12-3456789", "vertical": "RETAIL", "entityType": "PRIVATE_PROFIT"}';
    const res = await raw(t, a, 'POST', '/compliance/brands', {
      body,
      headers: { 'content-type': 'application/json' },
    });
    expectEnvelope(res, 400, 'surrogate', 'VALIDATION_FAILED');
    expect(res.body.error.details).toEqual([{ code: 'INVALID_CHARACTER', field: 'name', message: expect.any(String) }]);
    const low = await raw(t, a, 'POST', '/api/events', {
      body: '{"eventType": "sms.sent", "payload": {"text": ["ok", "\\udc00x"]}}',
      headers: { 'content-type': 'application/json' },
    });
    expectEnvelope(low, 400, 'low surrogate', 'VALIDATION_FAILED');
    expect(low.body.error.field).toBe('payload.text.1');
    // A properly paired surrogate (an emoji) is fine.
    const ok = await raw(t, a, 'POST', '/api/events', {
      body: '{"eventType": "sms.sent", "payload": {"text": "\\ud83d\\udca9"}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(ok.status).toBe(202);
    expect((await a.request('GET', '/compliance/brands')).body.brands).toEqual([]);
    expect((await a.request('GET', '/api/events/history')).body.events).toHaveLength(1);
  });

  it('maps body too large (413) and unsupported media types (415) into the envelope', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) });
    expectEnvelope(
      await raw(t, a, 'POST', '/compliance/brands', { body: big, headers: { 'content-type': 'application/json' } }),
      413,
      'too large',
      'PAYLOAD_TOO_LARGE',
    );
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      expectEnvelope(
        await raw(t, a, 'POST', '/compliance/brands', { body: 'name=x', headers: { 'content-type': type } }),
        415,
        type,
        'UNSUPPORTED_MEDIA_TYPE',
      );
    }
  });

  it('treats a body sent to an operation that takes none the same everywhere: none, empty, {} or null pass; anything else is 400 BODY_NOT_ALLOWED', async () => {
    const bodyless = ops.filter((o) => !o.hasBody && (o.method === 'POST' || o.method === 'DELETE'));
    expect(bodyless.length).toBeGreaterThanOrEqual(5);
    for (const op of bodyless) {
      const path = op.path.replace(/\{(\w+)\}/g, (_, name) =>
        name === 'number'
          ? '+14155550000'
          : name === 'address'
            ? 'nobody@example.com'
            : '00000000-0000-7000-8000-000000000000',
      );
      for (const body of ['{"unexpected": true}', '[1]', '"text"', '42']) {
        const res = await raw(t, a, op.method, path, { body, headers: { 'content-type': 'application/json' } });
        expectEnvelope(res, 400, `${op.method} ${op.path} ${body}`, 'BODY_NOT_ALLOWED');
      }
      const plain = await raw(t, a, op.method, path, { body: 'hello', headers: { 'content-type': 'text/plain' } });
      expectEnvelope(plain, 415, `${op.method} ${op.path} text/plain`, 'UNSUPPORTED_MEDIA_TYPE');
      for (const body of [undefined, '', '{}', 'null']) {
        const res = await raw(
          t,
          a,
          op.method,
          path,
          body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } },
        );
        expect(res.status, `${op.method} ${op.path} ${body}`).not.toBe(400);
        expect(res.status, `${op.method} ${op.path} ${body}`).toBeLessThan(500);
      }
    }
  });

  it('GraphQL: ids with NUL bytes, bad characters or 5000 characters are refused by field, never INTERNAL_ERROR', async () => {
    const fields = [
      'brand',
      'campaign',
      'webhook',
      'emailIdentity',
      'agent',
      'deleteBrand',
      'deleteWebhook',
      'expediteCampaign',
    ] as const;
    const schema = await a.request('POST', '/graphql', {
      query: '{ __schema { queryType { fields { name } } mutationType { fields { name } } } }',
    });
    const queries = new Set(schema.body.data.__schema.queryType.fields.map((f: { name: string }) => f.name));
    for (const field of fields) {
      for (const id of ['\u0000', 'a\u0000b', 'x'.repeat(5000), '\ud800']) {
        const kind = queries.has(field) ? 'query' : 'mutation';
        // Mutations take `input: { id }` and answer expected failures as typed errors (`... on Error { code }`).
        const query =
          kind === 'query'
            ? `query($id: ID!) { ${field}(id: $id) { __typename } }`
            : `mutation($id: ID!) { ${field}(input: { id: $id }) { __typename ... on Error { code } } }`;
        // Queries also over GET, where the variables do not pass the JSON body parser's character check.
        const res =
          kind === 'query' && id.length < 100
            ? await a.request(
                'GET',
                `/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify({ id }))}`,
                undefined,
                { accept: 'application/json' },
              )
            : await a.request('POST', '/graphql', { query, variables: { id } });
        const label = `${field}(${JSON.stringify(id).slice(0, 20)}): ${JSON.stringify(res.body).slice(0, 300)}`;
        expect(res.status, label).toBeLessThan(500);
        // Refused by the HTTP body parser (the REST envelope) or by GraphQL (errors with codes).
        const codes = res.body.error
          ? [res.body.error.code]
          : [
              ...(res.body.errors ?? []).map((e: { extensions?: { code?: string } }) => e.extensions?.code),
              ...(res.body.data?.[field]?.code ? [res.body.data[field].code] : []),
            ];
        expect(codes, label).not.toContain('INTERNAL_ERROR');
        expect(codes.length, label).toBeGreaterThan(0);
      }
    }
  });
});
