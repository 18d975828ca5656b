import { randomUUID } from 'node:crypto';
import type { TestAccount } from '../helpers/app.js';
import type { Receiver } from '../helpers/webhook-receiver.js';

/** Registers a webhook of `a` at a fresh path of `receiver`, teaching the receiver its secret. */
export async function registerWebhook(
  a: TestAccount,
  receiver: Receiver,
  events: string[],
): Promise<{ id: string; path: string; secret: string }> {
  const path = `/${randomUUID()}`;
  const res = await a.request('POST', '/api/webhooks', { url: `${receiver.url}${path}`, events });
  if (res.status !== 201) throw new Error(`webhook registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  receiver.setSecrets(path, [res.body.secret]);
  return { id: res.body.id, path, secret: res.body.secret };
}

/** Publishes an event through the public ingest endpoint; returns its log id. */
export async function publish(a: TestAccount, eventType: string, payload: Record<string, unknown> = {}) {
  const res = await a.request('POST', '/api/events', { eventType, payload });
  if (res.status !== 202) throw new Error(`publish failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

/** The delivery log of a webhook. */
export async function logsOf(a: TestAccount, webhookId: string, limit?: number): Promise<any[]> {
  const res = await a.request('GET', `/api/webhooks/${webhookId}/logs${limit ? `?limit=${limit}` : ''}`);
  if (res.status !== 200) throw new Error(`logs failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.logs;
}
