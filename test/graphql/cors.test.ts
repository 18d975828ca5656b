// CORS for browsers on other origins (CORS_ORIGINS): preflights answered without a key, allowed origins echoed on
// real responses, other origins get no Access-Control-* header; with no CORS_ORIGINS there is no CORS at all.
import { describe, expect } from 'vitest';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';

const APP_ORIGIN = 'http://localhost:5173';
const preflight = (url: string, origin: string) =>
  fetch(url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type',
    },
  });

const it = appTest({ env: { CORS_ORIGINS: `${APP_ORIGIN}, https://app.example.com` } });

describe('CORS with CORS_ORIGINS', () => {
  let a: TestAccount;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
  });

  it('answers a preflight for /graphql and REST without a key', async ({ t }) => {
    for (const path of ['/graphql', '/compliance/brands', '/api/events']) {
      const res = await preflight(`${t.url}${path}`, APP_ORIGIN);
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
      expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toMatch(/authorization/);
    }
  });

  it('lets an allowed origin read responses, errors included', async ({ t }) => {
    const ok = await a.request('POST', '/graphql', { query: '{ viewer { accountId } }' }, { origin: APP_ORIGIN });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(ok.headers.get('access-control-expose-headers')).toMatch(/x-request-id/);
    const denied = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { origin: APP_ORIGIN, 'content-type': 'application/json' },
      body: '{"query":"{ viewer { accountId } }"}',
    });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(((await denied.json()) as any).errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('sends the CORS headers on the SSE stream (GET /api/events), whose response is written by hand', async ({ t }) => {
    const ac = new AbortController();
    const res = await fetch(`${t.url}/api/events`, {
      headers: { origin: APP_ORIGIN, authorization: `Bearer ${a.apiKey}` },
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(res.headers.get('access-control-expose-headers')).toMatch(/x-request-id/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    ac.abort();
    await res.body?.cancel().catch(() => {});
  });

  it('gives other origins no CORS headers', async ({ t }) => {
    const res = await preflight(`${t.url}/graphql`, 'http://evil.example');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const get = await a.request(
      'POST',
      '/graphql',
      { query: '{ viewer { accountId } }' },
      { origin: 'http://evil.example' },
    );
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });
});

const it2 = appTest();

describe('CORS by default', () => {
  const it = it2;

  it('sends no Access-Control-* header when CORS_ORIGINS is unset', async ({ t }) => {
    const res = await preflight(`${t.url}/graphql`, APP_ORIGIN);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});
