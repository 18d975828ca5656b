import { request as httpRequest } from 'node:http';
import { describe, expect } from 'vitest';
import { routesOf } from '../../src/http/openapi.js';
import { freshNumbers } from '../compliance/fixtures.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean }[];
  requestBody?: { $ref?: string; content?: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: any }> }>;
}
interface OpenApiDoc {
  openapi: string;
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, any>;
    requestBodies: Record<string, any>;
    securitySchemes: Record<string, unknown>;
  };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of the document as [method, path, operation]. */
function operations(doc: OpenApiDoc): [string, string, Operation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => [method, path, op] as [string, string, Operation]),
  );
}

/** The error codes an operation documents for `status` (the enum of its `allOf` narrowing), or undefined. */
function documentedCodes(op: Operation, status: number): string[] | undefined {
  const schema = op.responses[String(status)]?.content?.['application/json']?.schema;
  const narrowing = schema?.allOf?.find((s: any) => s.properties?.error);
  return narrowing?.properties.error.properties.code.enum;
}

/** The operation's path with made-up path parameters (a valid E.164 number for `{number}`). */
function urlOf(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'number' ? '+12025550199' : `missing-${name}`));
}

/** Whether the method carries a JSON body. */
function isWrite(method: string): boolean {
  return method === 'post' || method === 'put' || method === 'patch';
}

/** A request for the operation with made-up path parameters and an empty JSON body on writes. */
async function call(
  account: TestAccount,
  method: string,
  path: string,
): Promise<{ status: number; body: any; contentType: string | null }> {
  const res = await account.request(method.toUpperCase(), urlOf(path), isWrite(method) ? {} : undefined);
  return { status: res.status, body: res.body, contentType: res.headers.get('content-type') };
}

const it = appTest();

describe('OpenAPI document', () => {
  let doc: OpenApiDoc;
  it.beforeAll(async ({ t }) => {
    const res = await fetch(`${t.url}/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as OpenApiDoc;
  });

  it('documents every route Fastify serves, each with a unique operationId, a summary and declared tags', ({ t }) => {
    const documented = new Set(operations(doc).map(([m, p]) => `${m.toUpperCase()} ${p}`));
    const routes = routesOf(t.app.http);
    expect(routes.length).toBeGreaterThan(50);
    const visible = routes.filter((r) => !r.hidden).map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`);
    // Every visible route is in the document, and the document has nothing else.
    expect([...documented].sort()).toEqual([...new Set(visible)].sort());
    // Only these are kept out of the document on purpose.
    const hidden = new Set(routes.filter((r) => r.hidden).map((r) => r.url.replace(/\/docs\/.*/, '/docs/…')));
    expect([...hidden].sort()).toEqual(['/docs', '/docs/…', '/graphql', '/graphql/stream', '/openapi.json'].sort());

    const ids = operations(doc).map(([, , op]) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = new Set(doc.tags.map((tag) => tag.name));
    expect(doc.tags.every((tag) => tag.description.length > 10)).toBe(true);
    for (const [method, path, op] of operations(doc)) {
      expect(op.summary, `${method} ${path}`).toBeTruthy();
      expect(op.tags?.length, `${method} ${path}`).toBe(1);
      expect(tags.has(op.tags![0]!), `${method} ${path} tag ${op.tags![0]}`).toBe(true);
    }
  });

  it('names its schemas as components that operations reference, with the error envelope among them', () => {
    const names = Object.keys(doc.components.schemas);
    for (const name of ['Error', 'ErrorDetail', 'Brand', 'Campaign', 'Webhook', 'WebhookDelivery', 'Agent']) {
      expect(names).toContain(name);
    }
    // Every component is used (no-unused-components), by an operation or another component.
    const text = JSON.stringify([doc.paths, doc.components]);
    for (const name of names) expect(text).toContain(`"#/components/schemas/${name}"`);
    // Named request bodies: POST /compliance/brands takes components.requestBodies.BrandCreate.
    expect(doc.paths['/compliance/brands']!.post!.requestBody).toEqual({
      $ref: '#/components/requestBodies/BrandCreate',
    });
    const brandCreate = doc.components.requestBodies.BrandCreate.content['application/json'].schema;
    expect(brandCreate.required).toEqual(['name', 'ein', 'vertical', 'entityType']);
    expect(brandCreate.properties.country.default).toBe('US');
    expect(doc.paths['/compliance/brands/{id}']!.get!.responses['200']!.content!['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/Brand',
    });
  });

  it('documents headers, security, the stream media type, true statuses and servers', () => {
    expect(doc.servers.length).toBeGreaterThan(0);
    expect(doc.components.securitySchemes).toHaveProperty('bearer');
    const brandsPost = doc.paths['/compliance/brands']!.post!;
    expect(brandsPost.parameters).toContainEqual(
      expect.objectContaining({ in: 'header', name: 'Idempotency-Key', required: false }),
    );
    const stream = doc.paths['/api/events']!.get!;
    expect(Object.keys(stream.responses['200']!.content!)).toEqual(['text/event-stream']);
    expect(stream.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'Last-Event-ID' }));
    expect(stream.parameters).toContainEqual(expect.objectContaining({ in: 'query', name: 'channels' }));
    expect(stream.security).toEqual([{ bearer: [] }, { queryToken: [] }]);
    expect(doc.paths['/healthz']!.get!.security).toEqual([]);
    const deleteAgent = doc.paths['/api/agents/{id}']!.delete!;
    expect(Object.keys(deleteAgent.responses).filter((s) => s.startsWith('2'))).toEqual(['204']);
    expect(deleteAgent.responses['204']!.content).toBeUndefined();
    expect(documentedCodes(deleteAgent, 404)).toEqual(['NOT_FOUND']);
    expect(doc.paths['/api/webhooks/{id}/logs/{deliveryId}/redeliver']).toBeDefined();
    expect((brandsPost.responses['201'] as any).headers).toHaveProperty('Idempotent-Replayed');
    expect((brandsPost.responses['401'] as any).headers).toHaveProperty('WWW-Authenticate');
  });

  it('documents the paging header of GET /compliance/did-mapping, which the service sends', async ({ t }) => {
    expect((doc.paths['/compliance/did-mapping']!.get!.responses['200'] as any).headers).toHaveProperty(
      'x-next-cursor',
    );
    const account = await t.newAccount();
    const provisioned = await account.request('POST', '/api/numbers', { numbers: freshNumbers(2) });
    expect(provisioned.status).toBe(201);
    const first = await account.request('GET', '/compliance/did-mapping?limit=1');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-next-cursor')).toBeTruthy();
  });

  it('documents 401 UNAUTHENTICATED on every authenticated operation, and Fastify answers it', async ({ t }) => {
    for (const [method, path, op] of operations(doc)) {
      if (op.security?.length === 0) continue;
      expect(documentedCodes(op, 401), `${method} ${path}`).toEqual(['UNAUTHENTICATED']);
    }
    // Every operation that needs a key is refused without one (auth is a hook added per route as it is registered,
    // src/rest/auth.ts: a route that missed it would answer here).
    let refused = 0;
    for (const [method, path, op] of operations(doc)) {
      if (op.security?.length === 0) continue;
      const res = await fetch(`${t.url}${urlOf(path)}`, {
        method: method.toUpperCase(),
        ...(isWrite(method) ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}),
      });
      const body = (await res.json()) as { error?: { code?: string } };
      // After many failed attempts from one address the auth hook answers 429 AUTH_RATE_LIMITED instead (its guard).
      expect([
        `${method.toUpperCase()} ${path} -> 401 UNAUTHENTICATED`,
        `${method.toUpperCase()} ${path} -> 429 AUTH_RATE_LIMITED`,
      ]).toContain(`${method.toUpperCase()} ${path} -> ${res.status} ${body.error?.code}`);
      refused++;
    }
    expect(refused).toBeGreaterThan(50);
  });

  it('answers every operation, with a made-up id and an empty body, only with a documented status and code', async ({
    t,
  }) => {
    const account = await t.newAccount();
    for (const [method, path, op] of operations(doc)) {
      if (method === 'get' && path === '/api/events') continue; // the stream: its 200 is checked below
      const res = await call(account, method, path);
      const where = `${method.toUpperCase()} ${path} -> ${res.status} ${JSON.stringify(res.body)}`;
      expect(Object.keys(op.responses), where).toContain(String(res.status));
      if (res.status >= 400) expect(documentedCodes(op, res.status), where).toContain(res.body.error.code);
    }
  });

  it('answers 403 FORBIDDEN, documented, on every operation a key without scopes may not use', async ({ t }) => {
    const unscoped = await t.newAccount([]);
    let forbidden = 0;
    for (const [method, path, op] of operations(doc)) {
      if (op.security?.length === 0 || (method === 'get' && path === '/api/events')) continue;
      const res = await call(unscoped, method, path);
      const where = `${method.toUpperCase()} ${path} -> ${res.status} ${JSON.stringify(res.body)}`;
      expect(Object.keys(op.responses), where).toContain(String(res.status));
      if (res.status >= 400) expect(documentedCodes(op, res.status), where).toContain(res.body.error.code);
      if (res.status === 403) forbidden++;
    }
    expect(forbidden).toBeGreaterThan(30);
  });

  it('serves the stream as text/event-stream, as documented', async ({ t }) => {
    const account = await t.newAccount();
    const controller = new AbortController();
    const res = await fetch(`${t.url}/api/events`, {
      headers: { authorization: `Bearer ${account.apiKey}` },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    controller.abort();
  });

  it('answers the documented 431 on the probes when request headers exceed 16 KiB', async ({ t }) => {
    expect(documentedCodes(doc.paths['/healthz']!.get!, 431)).toBeUndefined();
    expect(doc.paths['/healthz']!.get!.responses['431']).toBeDefined();
    const url = new URL(`${t.url}/healthz`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        { host: url.hostname, port: url.port, path: url.pathname, headers: { 'x-big': 'a'.repeat(20_000) } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(431);
  });
});

const it2 = appTest();

describe('the rendered reference at /docs', () => {
  const it = it2;

  it('serves a page, without a key, whose scripts and styles come from this server and answer 200', async ({ t }) => {
    const page = await fetch(`${t.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    const urls = [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map(
      (m) => new URL(m[1]!, `${t.url}/docs`),
    );
    const scripts = urls.filter((u) => u.pathname.endsWith('.js'));
    expect(scripts.length).toBeGreaterThanOrEqual(3);
    expect(urls.some((u) => u.pathname.endsWith('.css'))).toBe(true);
    for (const url of urls) {
      expect(url.origin, `${url}`).toBe(new URL(t.url).origin);
      const res = await fetch(url);
      expect(res.status, `${url}`).toBe(200);
      expect((await res.arrayBuffer()).byteLength, `${url}`).toBeGreaterThan(0);
    }
    // The bundle is the packaged Swagger UI (hundreds of KB), not a loader that fetches it from elsewhere.
    const bundle = scripts.find((u) => u.pathname.endsWith('swagger-ui-bundle.js'))!;
    expect((await (await fetch(bundle)).arrayBuffer()).byteLength).toBeGreaterThan(500_000);
  });

  it('loads the same document as GET /openapi.json, from this server, with no external validator', async ({ t }) => {
    const init = await (await fetch(`${t.url}/docs/static/swagger-initializer.js`)).text();
    expect(init).toContain("resolveUrl('./json')");
    expect(init).toMatch(/validatorUrl: null/);
    const fromDocs = await fetch(`${t.url}/docs/json`);
    expect(fromDocs.status).toBe(200);
    const served = await (await fetch(`${t.url}/openapi.json`)).json();
    expect(await fromDocs.json()).toEqual(served);
  });
});
