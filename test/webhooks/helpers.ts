import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { startApp, type TestAccount, type TestApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

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

/** One request a {@link HoldingReceiver} holds. */
export interface HeldRequest {
  path: string;
  /** The request's headers (lower-case names). */
  headers: Record<string, string | string[] | undefined>;
  /** Set once the connection closed (answered, or ended by the sender, e.g. its timeout). */
  closed: boolean;
  answer(status: number): void;
  /** Ends the connection without an answer. */
  drop(): void;
}

/**
 * A real HTTP receiver on 127.0.0.1 that answers nothing until told to: it holds every request, so a test can keep
 * attempts in flight, and records how many were open at once.
 */
export interface HoldingReceiver {
  url: string;
  requests: HeldRequest[];
  /** Requests on `path` whose connection is still open. */
  open(path?: string): number;
  /** Most requests open at the same time. */
  maxOpen: number;
  /** Resolves once `predicate` holds (checked on every arrival and close). */
  until(predicate: () => boolean): Promise<void>;
  close(): Promise<void>;
}

/** Starts a {@link HoldingReceiver}. */
export async function startHoldingReceiver(): Promise<HoldingReceiver> {
  const requests: HeldRequest[] = [];
  const waiters: { predicate: () => boolean; resolve: () => void }[] = [];
  const check = () => {
    for (const w of waiters.filter((w) => w.predicate())) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  const open = (path?: string) => requests.filter((r) => !r.closed && (path === undefined || r.path === path)).length;
  const receiver: HoldingReceiver = {
    url: '',
    requests,
    open,
    maxOpen: 0,
    until: (predicate) =>
      new Promise((resolve) => {
        waiters.push({ predicate, resolve });
        check();
      }),
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const held: HeldRequest = {
      path: req.url ?? '/',
      headers: req.headers,
      closed: false,
      answer: (status) => res.writeHead(status).end('ok'),
      drop: () => res.destroy(),
    };
    res.on('close', () => {
      held.closed = true;
      check();
    });
    req.resume();
    requests.push(held);
    receiver.maxOpen = Math.max(receiver.maxOpen, open());
    check();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** Registers a webhook of `a` at a fresh path of a {@link HoldingReceiver}. */
export async function registerHeldWebhook(
  a: TestAccount,
  receiver: HoldingReceiver,
  events: string[],
): Promise<{ id: string; path: string }> {
  const path = `/${randomUUID()}`;
  const res = await a.request('POST', '/api/webhooks', { url: `${receiver.url}${path}`, events });
  if (res.status !== 201) throw new Error(`webhook registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, path };
}

/** An app on a {@link ManualClock} and a receiver that stamps arrivals with that clock (see {@link useClockedApp}). */
export interface ClockedApp {
  t: TestApp;
  clock: ManualClock;
  receiver: Receiver;
}

/**
 * For one describe block: starts an app whose clock is a ManualClock at `start` (ISO 8601) and a webhook receiver
 * reading that clock in `beforeAll`, and closes both in `afterAll`. The returned object's fields are set once
 * `beforeAll` has run (read them inside tests, not at collection time).
 */
export function useClockedApp(start: string): ClockedApp {
  const fixture = {} as ClockedApp;
  beforeAll(async () => {
    fixture.clock = new ManualClock(new Date(start));
    fixture.t = await startApp({ clock: fixture.clock });
    fixture.receiver = await startReceiver(() => fixture.clock.now());
  });
  afterAll(async () => {
    await fixture.t?.close();
    await fixture.receiver?.close();
  });
  return fixture;
}
