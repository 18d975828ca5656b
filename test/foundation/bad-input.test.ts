import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import type { TestAccount, TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

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

/** zod's own wording ("Invalid input: expected string, received number", "Too small: …"): never in a reply. */
const ZOD_WORDING =
  /Invalid (input|option|string|email|url|uuid|UUID|ISO|element|key)|expected [\w ]+, received|Too (small|big)|Unrecognized key/;

/** Every message of an error body (top level and details) is in the service's own words, not zod's. */
function expectOwnWords(body: any, label: string) {
  const messages = [
    body?.error?.message,
    ...((body?.error?.details ?? []) as { message: string }[]).map((d) => d.message),
  ];
  for (const m of messages) expect(m, label).not.toMatch(ZOD_WORDING);
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
  expectOwnWords(res.body, label);
}

const it = appTest({ clock: new ManualClock(), env: { ADMIN_TOKEN } });

describe('bad input: 4xx in the documented error body, never a 5xx (issue 13)', () => {
  let a: TestAccount;
  let ops: Operation[];
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
    ops = await operations(t);
  });

  it('refuses NUL bytes, bad characters and over-long ids in every path parameter with 400 naming the parameter', async ({
    t,
  }) => {
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

  it('refuses NUL bytes, lone surrogates and over-long values in every query parameter, declared or not, with 400 naming it (issue 26)', async ({
    t,
  }) => {
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: unknown }>>;
    };
    let declared = 0;
    let swept = 0;
    let ownCredential = 0;
    let requests = 0;
    for (const [opPath, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const names = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
        declared += names.length;
        const path = opPath.replace(/\{(\w+)\}/g, (_, name) =>
          name === 'number' ? '+14155550000' : '00000000-0000-7000-8000-000000000000',
        );
        const init = op.requestBody ? { body: '{}', headers: { 'content-type': 'application/json' } } : {};
        // Routes with their own credential (metrics token, registry signature) refuse this one first: 401.
        if (method !== 'get' || opPath !== '/api/events') {
          if ((await raw(t, a, method.toUpperCase(), path, init)).status === 401) {
            ownCredential++;
            continue;
          }
        }
        swept++;
        for (const name of [...names, 'undeclared']) {
          // NUL, a lone surrogate as it can only travel in a URL (its 3-byte escape, not UTF-8), over-long.
          for (const value of ['%00', 'a%00b', '%ED%A0%80', 'x%ED%BF%BFy', 'q'.repeat(2049)]) {
            const url = `${path}?${name}=${value}`;
            const res = await raw(t, a, method.toUpperCase(), url, init);
            requests++;
            const label = `${method.toUpperCase()} ${url.slice(0, 120)}`;
            expectEnvelope(res, 400, label, 'VALIDATION_FAILED');
            expect(res.body.error.field, label).toBe(`query.${name}`);
            expect(JSON.stringify(res.body), label).not.toContain('q'.repeat(200));
          }
        }
      }
    }
    expect(declared).toBeGreaterThanOrEqual(10);
    console.log(
      `query sweep: ${swept} operations (${ownCredential} more refuse this credential first: 401), ${declared} declared query parameters + 1 undeclared each, 5 bad values: ${requests} requests, all 400`,
    );
    // The finding itself: the brand filter is an id like a path id (was PostgreSQL 22021, a 500).
    const nul = await raw(t, a, 'GET', '/compliance/campaigns?brandId=%00');
    expectEnvelope(nul, 400, 'brandId=%00', 'VALIDATION_FAILED');
    expect(nul.body.error.details).toEqual([
      { code: 'INVALID_CHARACTER', field: 'query.brandId', message: expect.any(String) },
    ]);
    const dotted = await raw(t, a, 'GET', '/compliance/campaigns?brandId=..%2F..');
    expectEnvelope(dotted, 400, 'brandId=../..', 'VALIDATION_FAILED');
    expect(dotted.body.error.field).toBe('query.brandId');
    // A lone surrogate in a parameter's name is refused too; a stray `%` (not an escape) is left to the route.
    const named = await raw(t, a, 'GET', '/compliance/campaigns?%ED%A0%80=1');
    expectEnvelope(named, 400, 'lone surrogate name', 'VALIDATION_FAILED');
    expect(named.body.error.details[0].code).toBe('INVALID_CHARACTER');
    const stray = await raw(t, a, 'GET', '/compliance/campaigns?cursor=100%');
    expect(stray.status).toBeLessThan(500);
    expect(JSON.stringify(stray.body)).not.toContain('INVALID_CHARACTER');
    // Real UTF-8 (an emoji, an accent) passes.
    expect((await raw(t, a, 'GET', '/api/email/threads?q=%F0%9F%92%A9%20caf%C3%A9')).status).toBe(200);
    expect((await raw(t, a, 'GET', '/api/events/history?after=1&limit=5')).status).toBe(200);
  });

  it('answers a GraphQL GET whose variables or extensions are not JSON with 400 BAD_REQUEST, not a masked internal error (issue 26)', async ({
    t,
  }) => {
    const q = 'query=%7B__typename%7D';
    for (const path of ['/graphql', '/graphql/stream']) {
      for (const bad of [
        'variables=x',
        'variables=%ED%A0%80',
        'extensions=%00',
        'extensions=%7B',
        `variables=${'q'.repeat(3000)}`,
      ]) {
        const res = await raw(t, a, 'GET', `${path}?${q}&${bad}`, { headers: { accept: 'application/json' } });
        const label = `GET ${path}?${bad.slice(0, 40)}`;
        expect(res.status, `${label}: ${JSON.stringify(res.body)}`).toBe(400);
        expect(res.body.errors[0].extensions, label).toMatchObject({ code: 'BAD_REQUEST', field: bad.split('=')[0] });
      }
    }
    const ok = await raw(t, a, 'GET', `/graphql?${q}&variables=%7B%7D&extensions=%7B%7D`);
    expect(ok.status).toBe(200);
    expect(ok.body.data.__typename).toBe('Query');
  });

  it('answers a malformed percent-encoding (FST_ERR_BAD_URL) and a huge path parameter in the envelope', async ({
    t,
  }) => {
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

  it('words every 400 in its own terms: wrong types, missing fields, bad formats and enums name the field plainly', async ({
    t,
  }) => {
    const json = { 'content-type': 'application/json' };
    const events = await raw(t, a, 'POST', '/api/events', {
      headers: json,
      body: JSON.stringify({ eventType: 5, payload: 'text' }),
    });
    expectEnvelope(events, 400, 'POST /api/events with wrong types', 'VALIDATION_FAILED');
    const byField = Object.fromEntries(
      (events.body.error.details as { field: string; message: string }[]).map((d) => [d.field, d.message]),
    );
    expect(byField.eventType).toBe('must be a string');
    expect(byField.payload).toBe('must be an object');
    const brand = await raw(t, a, 'POST', '/compliance/brands', { headers: json, body: '{}' });
    expectEnvelope(brand, 400, 'POST /compliance/brands {}', 'VALIDATION_FAILED');
    expect((brand.body.error.details as { message: string }[]).some((d) => d.message === 'is required')).toBe(true);
    const hook = await raw(t, a, 'POST', '/api/webhooks', {
      headers: json,
      body: JSON.stringify({ url: 'not a url', events: [7], extra: true }),
    });
    expectEnvelope(hook, 400, 'POST /api/webhooks with a bad url', 'VALIDATION_FAILED');
    for (const path of [
      '/compliance/campaigns',
      '/compliance/vettings',
      '/api/email/identities',
      '/api/email/agents',
    ]) {
      const res = await raw(t, a, 'POST', path, {
        headers: json,
        body: JSON.stringify({ name: 1, brandId: [], x: null }),
      });
      if (res.status === 400) expectEnvelope(res, 400, `POST ${path}`);
    }
  });

  it('reads cursors and limits strictly: decimal only, range-checked', async ({ t }) => {
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

  it('refuses lone UTF-16 surrogates in a JSON body with 400 naming the field, storing nothing', async ({ t }) => {
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

  it('maps body too large (413) and unsupported media types (415) into the envelope', async ({ t }) => {
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

  it('treats a body sent to an operation that takes none the same everywhere: none, empty, {} or null pass; anything else is 400 BODY_NOT_ALLOWED', async ({
    t,
  }) => {
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
