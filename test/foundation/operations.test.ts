import { describe, expect } from 'vitest';
import { appTest } from '../helpers/fixture.js';

const it = appTest();

describe('operations surface', () => {
  it('answers /healthz without a key', async ({ t }) => {
    const res = await fetch(`${t.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with the database kind once migrations are applied', async ({ t }) => {
    const res = await fetch(`${t.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: 'ready',
      database: process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite',
      bus: 'in-process',
    });
  });

  it('serves an OpenAPI 3.1 document without a key', async ({ t }) => {
    const res = await fetch(`${t.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/healthz');
  });

  it('returns a request id on every response and echoes a well-formed one', async ({ t }) => {
    const generated = await fetch(`${t.url}/healthz`);
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const given = await fetch(`${t.url}/healthz`, { headers: { 'x-request-id': 'trace-123' } });
    expect(given.headers.get('x-request-id')).toBe('trace-123');
  });

  it('answers unknown routes with the error body and ROUTE_NOT_FOUND', async ({ t }) => {
    const res = await fetch(`${t.url}/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'ROUTE_NOT_FOUND', message: 'No route GET /nope' } });
  });
});

const it2 = appTest();

describe('JSON bodies', () => {
  const it = it2;

  it('treats an empty body sent with Content-Type: application/json as no body, not malformed JSON', async ({ a }) => {
    const res = await a.request('POST', '/api/events', '', { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('refuses prototype-poisoning keys in JSON bodies', async ({ a }) => {
    const res = await a.request('POST', '/api/events', '{"eventType":"sms.sent","payload":{"__proto__":{"x":1}}}');
    expect(res.status).toBe(400);
  });
});

const it3 = appTest();

describe('characters PostgreSQL cannot store', () => {
  const it = it3;

  it('refuses U+0000 in any JSON string with 400 INVALID_CHARACTER naming the field, storing nothing', async ({
    t,
    a,
  }) => {
    const res = await a.request('POST', '/api/events', {
      eventType: 'sms.sent',
      payload: { body: 'a\u0000b', ok: 'x' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'payload.body',
      details: [{ code: 'INVALID_CHARACTER', field: 'payload.body' }],
    });
    expect(await t.app.ctx.db.event.count({ where: { accountId: a.accountId } })).toBe(0);
  });
});
