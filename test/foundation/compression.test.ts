// Responses are compressed as Accept-Encoding asks (@fastify/compress), the GraphiQL page above all (9 MB), while
// SSE streams stay uncompressed and keep delivering, and idempotent replays answer the same body.
import { brotliDecompressSync } from 'node:zlib';
import { describe, expect } from 'vitest';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { rawGet } from '../helpers/raw-http.js';

const it = appTest();

describe('response compression', () => {
  let a: TestAccount;
  it.beforeAll(async ({ t }) => {
    a = await t.newAccount();
  });

  it('sends the GraphiQL page with brotli, a fraction of its size', async ({ t }) => {
    const res = await rawGet(`${t.url}/graphql`, { accept: 'text/html', 'accept-encoding': 'br, gzip' });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('br');
    const html = brotliDecompressSync(res.body).toString('utf8');
    expect(html).toContain('sb-api-key');
    expect(res.body.length).toBeLessThan(html.length / 3);
    const plain = await rawGet(`${t.url}/graphql`, { accept: 'text/html' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBe(Buffer.byteLength(html));
  });

  it('compresses large JSON (gzip) and leaves small answers alone', async ({ t }) => {
    const doc = await fetch(`${t.url}/openapi.json`, { headers: { 'accept-encoding': 'gzip' } });
    expect(doc.headers.get('content-encoding')).toBe('gzip');
    expect(((await doc.json()) as { openapi: string }).openapi).toBe('3.1.0');
    const small = await fetch(`${t.url}/healthz`, { headers: { 'accept-encoding': 'gzip' } });
    expect(small.headers.get('content-encoding')).toBeNull();
  });

  it('never compresses an SSE stream: GET /api/events delivers an event to a client that accepts gzip', async ({
    t,
  }) => {
    const ac = new AbortController();
    const res = await fetch(`${t.url}/api/events?channels=sms`, {
      headers: { authorization: `Bearer ${a.apiKey}`, 'accept-encoding': 'gzip, br' },
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBeNull();
    const reader = res.body!.getReader();
    const posted = await a.request('POST', '/api/events', {
      eventType: 'sms.sent',
      payload: { id: 'gz-1', from: '+14155550100', to: '+14155550101', status: 'sent' },
    });
    expect(posted.status).toBe(202);
    let text = '';
    while (!text.includes(`id: ${posted.body.id}\n`)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain(`id: ${posted.body.id}\n`);
    ac.abort();
  });

  it('never compresses a GraphQL SSE subscription (graphql-sse at /graphql/stream)', async ({ t }) => {
    const ac = new AbortController();
    const res = await fetch(`${t.url}/graphql/stream`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${a.apiKey}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'accept-encoding': 'gzip, br',
      },
      body: JSON.stringify({ query: 'subscription { events(channels: ["sms"]) { __typename } }' }),
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    // graphql-sse itself says `content-encoding: none` (a hint for proxies); never br or gzip.
    expect(res.headers.get('content-encoding') ?? 'none').toBe('none');
    ac.abort();
  });

  it('replays an idempotent POST with the same body, compressed or not', async () => {
    const body = { eventType: 'sms.sent', payload: { id: 'gz-idem', status: 'sent', pad: 'x'.repeat(2000) } };
    const headers = { 'idempotency-key': `gz-${Date.now()}`, 'accept-encoding': 'gzip' };
    const first = await a.request('POST', '/api/events', body, headers);
    const again = await a.request('POST', '/api/events', body, headers);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });
});
