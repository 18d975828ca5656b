/**
 * The bare END-TO-END webhook pipeline of `npm run bench`'s `webhooks` scenario: what ingest plus delivery cost with
 * no framework, no validation library, no ORM, no outbox and no attempt record. node:http accepts the same
 * `POST /api/events` bodies from the same poster (test/bench/poster.ts), resolves the API key from an in-memory map
 * (the ideal cache), INSERTs the event with one named prepared statement on a `pg` pool of 10 (committed on its own,
 * as the bare server's event insert: `seq` 0, no per-account order), answers 202 `{ id, channel, eventType,
 * timestamp }` after the commit, and then delivers the event as one signed POST to the webhook URL: the service's
 * envelope as body, signed like the service and the bare sender (lowercase hex HMAC-SHA256 of the body, spec 5.3,
 * and Standard Webhooks `v1,` over `{id}.{timestamp}.{body}`), with `x-switchboard-event-id` set to the event id so
 * the receiver (test/bench/receiver.ts) records its arrival under that id, on one undici `Pool` with keep-alive and
 * at most `BARE_HOOK_IN_FLIGHT` connections (default 50, the service's MAX_IN_FLIGHT_PER_WEBHOOK and the bare
 * sender's). Only first attempts: a failed POST is never retried (the receiver answers 204).
 *
 * What it leaves out of the service's work, on purpose: the account's order (`event_account_seqs`), the delivery row
 * written with the event (the outbox, so a crash after the commit loses the delivery here), the attempt's outcome
 * record, retries, per-webhook in-flight caps, validation, rate limits, metrics and logs. It is the floor of the
 * same pipeline on the same machine, not an equivalent.
 *
 * Environment: PORT; DATABASE_URL (PostgreSQL only); BARE_KEYS, JSON `{ "<api key>": "<account id>" }`;
 * BARE_HOOK_URL, the receiver URL every event is delivered to; BARE_HOOK_SECRET (default `whsec_bench`);
 * BARE_HOOK_IN_FLIGHT (default 50). Prints `listening <port>` when ready. Loopback only.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pg from 'pg';
import { Pool } from 'undici';
import { readBody, send, serve } from './bare-http.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const keys = new Map<string, string>(Object.entries(JSON.parse(process.env.BARE_KEYS ?? '{}')));
const hook = new URL(process.env.BARE_HOOK_URL!);
const secret = process.env.BARE_HOOK_SECRET ?? 'whsec_bench';
const hexKey = Buffer.from(secret, 'utf8');
const standardKey = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
const sender = new Pool(hook.origin, {
  connections: Number(process.env.BARE_HOOK_IN_FLIGHT ?? 50),
  keepAliveTimeout: 30_000,
});

/** One signed POST of the event's envelope to the webhook URL; never retried (the bench counts arrivals at the receiver). */
async function deliver(envelope: Record<string, unknown>, eventId: string, eventType: string): Promise<void> {
  const body = Buffer.from(JSON.stringify(envelope));
  const id = randomUUID();
  const ts = Math.floor(Date.now() / 1000);
  try {
    const res = await sender.request({
      method: 'POST',
      path: hook.pathname,
      body,
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
      headers: {
        'content-type': 'application/json',
        'x-switchboard-signature': createHmac('sha256', hexKey).update(body).digest('hex'),
        'x-switchboard-event': eventType,
        'x-switchboard-event-id': eventId,
        'webhook-id': id,
        'webhook-timestamp': String(ts),
        'webhook-signature': `v1,${createHmac('sha256', standardKey).update(`${id}.${ts}.`).update(body).digest('base64')}`,
      },
    });
    await res.body.dump();
  } catch {
    // a lost delivery shows as a missing arrival at the receiver
  }
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const h = req.headers.authorization;
  const accountId = h?.startsWith('Bearer ') ? keys.get(h.slice(7)) : undefined;
  if (!accountId) return send(res, 401, { error: { code: 'UNAUTHENTICATED', message: 'missing or unknown API key' } });
  if (req.method !== 'POST' || req.url !== '/api/events')
    return send(res, 404, { error: { code: 'NOT_FOUND', message: 'no such route' } });
  const body = await readBody(req);
  const eventType = String(body.eventType);
  const channel = eventType.split('.')[0];
  const payload = JSON.stringify(body.payload ?? {});
  const { rows } = await pool.query({
    name: 'bare_e2e_event',
    text: 'INSERT INTO events (account_id, channel, event_type, payload, seq) VALUES ($1, $2, $3, $4, 0) RETURNING id, created_at',
    values: [accountId, channel, eventType, payload],
  });
  const id = String(rows[0]!.id);
  const timestamp = (rows[0]!.created_at as Date).toISOString();
  send(res, 202, { id, channel, eventType, timestamp });
  // After the 202, like the service's delivery after the commit (here without an outbox row).
  void deliver(
    { id, channel, eventType, payload: body.payload ?? {}, customerId: accountId, timestamp },
    id,
    eventType,
  );
}

serve(handle);
