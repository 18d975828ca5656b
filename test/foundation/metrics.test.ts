import { EventSource } from 'eventsource';
import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import type { TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { rawSse } from '../helpers/sse.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { publish, registerWebhook } from '../webhooks/helpers.js';

const METRICS_TOKEN = 'metrics-token-0123456789';

/** The value of one sample of the Prometheus text `text` (labels in any order); undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

let receiver: Receiver;
const clock = new ManualClock();
const it = appTest(async ({ onCleanup }) => {
  receiver = await startReceiver(() => clock.now());
  onCleanup(() => receiver.close());
  return { clock, env: { METRICS_TOKEN } };
});

describe('GET /metrics (Prometheus)', () => {
  /** The file's app, for the helpers below (tests get it as the `t` fixture). */
  let t: TestApp;
  it.beforeAll(({ t: app }) => {
    t = app;
  });
  const scrape = async () => {
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    return res.text();
  };

  it('needs METRICS_TOKEN (or an admin token); an API key is refused', async ({ t }) => {
    expect((await fetch(`${t.url}/metrics`)).status).toBe(401);
    const a = await t.newAccount();
    expect((await a.request('GET', '/metrics')).status).toBe(401);
    const admin = await fetch(`${t.url}/metrics`, {
      headers: { authorization: `Bearer ${t.app.ctx.admin.localToken}` },
    });
    expect(admin.status).toBe(200);
  });

  it('counts HTTP requests per route pattern and status, events ingested, webhook attempts, queue depth and age', async ({
    t,
  }) => {
    const before = await scrape();
    const a = await t.newAccount();
    const route = { method: 'POST', route: '/api/events', status: '202' };
    const sent = sample(before, 'switchboard_http_requests_total', route) ?? 0;
    const ingested = sample(before, 'switchboard_events_ingested_total', { channel: 'sms' }) ?? 0;
    const delivered = sample(before, 'switchboard_webhook_attempts_total', { outcome: 'delivered' }) ?? 0;

    const hook = await registerWebhook(a, receiver, ['sms.*']);
    for (let i = 0; i < 3; i++) await publish(a, 'sms.sent', { i });
    const detail = await a.request('GET', `/api/webhooks/${hook.id}`);
    expect(detail.status).toBe(200);
    clock.advance(30_000);

    const after = await scrape();
    expect(sample(after, 'switchboard_http_requests_total', route)).toBe(sent + 3);
    expect(sample(after, 'switchboard_http_requests_total', { route: '/api/webhooks/:id', status: '200' })).toBe(1);
    expect(after).not.toContain(hook.id);
    expect(
      sample(after, 'switchboard_http_request_duration_seconds_count', { method: 'POST', route: '/api/events' }),
    ).toBe(sent + 3);
    expect(sample(after, 'switchboard_events_ingested_total', { channel: 'sms' })).toBe(ingested + 3);
    // Workers are off (manual clock): three deliveries wait, due since 30 s.
    expect(sample(after, 'switchboard_queue_depth', { kind: 'webhook-delivery', state: 'all' })).toBe(3);
    expect(sample(after, 'switchboard_queue_depth', { kind: 'webhook-delivery', state: 'due' })).toBe(3);
    expect(sample(after, 'switchboard_queue_oldest_due_age_seconds', { kind: 'webhook-delivery' })).toBe(30);
    expect(sample(after, 'switchboard_queue_depth', { kind: 'email-agent', state: 'all' })).toBe(0);

    await t.drain();
    const drained = await scrape();
    expect(sample(drained, 'switchboard_webhook_attempts_total', { outcome: 'delivered' })).toBe(delivered + 3);
    expect(sample(drained, 'switchboard_queue_depth', { kind: 'webhook-delivery', state: 'all' })).toBe(0);
    expect(sample(drained, 'switchboard_queue_oldest_due_age_seconds', { kind: 'webhook-delivery' })).toBe(0);
  });

  it('counts open SSE streams while they are open', async ({ t, a }) => {
    const open = async () => sample(await scrape(), 'switchboard_open_streams', { transport: 'sse' }) ?? 0;
    const base = await open();
    const stream = await rawSse(`${t.url}/api/events?token=${a.apiKey}`);
    await stream.waitFor(/: connected/);
    expect(await open()).toBe(base + 1);
    stream.close();
    for (let i = 0; i < 100 && (await open()) !== base; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await open()).toBe(base);
  });
});

const it2 = appTest();

describe('the stream for browsers: GET /api/events?unnamed=1', () => {
  const it = it2;

  it('sends messages without `event:` so EventSource onmessage sees every event, the type in the envelope', async ({
    t,
    a,
  }) => {
    const seen: { id: string; data: { eventType: string; channel: string; payload: { n: number } } }[] = [];
    const named: string[] = [];
    const es = new EventSource(`${t.url}/api/events?unnamed=1&token=${a.apiKey}`);
    es.onmessage = (m) => seen.push({ id: m.lastEventId, data: JSON.parse(m.data) });
    es.addEventListener('sms.sent', () => named.push('sms.sent'));
    try {
      await new Promise<void>((resolve, reject) => {
        es.onopen = () => resolve();
        es.onerror = () => reject(new Error('stream failed'));
      });
      const ids = [
        await publish(a, 'sms.sent', { n: 1 }),
        await publish(a, 'voice.answered', { n: 2 }),
        await publish(a, 'campaign.stats.updated', { n: 3 }),
      ];
      for (let i = 0; i < 200 && seen.length < 3; i++) await new Promise((r) => setTimeout(r, 50));
      expect(seen.map((m) => m.id)).toEqual(ids);
      expect(seen.map((m) => m.data.eventType)).toEqual(['sms.sent', 'voice.answered', 'campaign.stats.updated']);
      expect(seen.map((m) => m.data.payload.n)).toEqual([1, 2, 3]);
      expect(named).toEqual([]); // no `event:` names in this mode
    } finally {
      es.close();
    }
    // Without the flag the messages are named (spec 6.2) and onmessage sees none of them.
    const plain: string[] = [];
    const es2 = new EventSource(`${t.url}/api/events?token=${a.apiKey}&lastEventId=0`);
    es2.onmessage = (m) => plain.push(m.data);
    const typed: string[] = [];
    es2.addEventListener('sms.sent', (m) => typed.push(m.data));
    try {
      for (let i = 0; i < 200 && typed.length < 1; i++) await new Promise((r) => setTimeout(r, 50));
      expect(typed).toHaveLength(1);
      expect(plain).toEqual([]);
    } finally {
      es2.close();
    }
  });
});
