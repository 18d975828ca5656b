import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSse, type SseClient } from '../helpers/sse.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import {
  eventually,
  type Front,
  historyIds,
  type Instance,
  killInstance,
  type OwnRedis,
  publishLoad,
  report,
  startFront,
  startInstance,
  startRedis,
} from './helpers.js';

/**
 * Fault test (issue 13): two instances of the service (src/main.ts as child processes) on PostgreSQL and a Redis
 * of the test's own, behind a TCP front, under a bounded publishing load. During the load one instance is killed
 * with SIGKILL (and started again), then the Redis server is (and started again). Afterwards every accepted (2xx)
 * event is in the history, reached the webhook receiver at least once with a valid signature, and reached a
 * reconnecting SSE client exactly once and in id order.
 */

const TOTAL = Number(process.env.FAULTS_EVENTS ?? 300);
const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

describe('faults: two instances on PostgreSQL + Redis, kill -9 of an instance and of Redis under load', () => {
  let redis: OwnRedis;
  let front: Front;
  let receiver: Receiver;
  let sse: SseClient | undefined;
  let dbUrl: string;
  let dbName: string;
  const instances: Instance[] = [];
  const env: Record<string, string> = {};

  beforeAll(async () => {
    const url = new URL(base);
    dbName = `${url.pathname.slice(1) || 'postgres'}_faults_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${dbName}"`);
    await admin.end();
    url.pathname = `/${dbName}`;
    dbUrl = url.toString();
    redis = await startRedis();
    front = await startFront();
    receiver = await startReceiver();
    Object.assign(env, {
      DATABASE_URL: dbUrl,
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: `faults-${randomBytes(3).toString('hex')}:`,
      SECRETS_KEY: randomBytes(32).toString('hex'),
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WORKER_POLL_MS: '200',
      EVENT_TAIL_CHECK_MS: '200',
      EVENT_STREAM_HEARTBEAT_MS: '1000',
      LOG_LEVEL: 'warn',
    });
  });

  afterAll(async () => {
    sse?.close();
    for (const i of instances) await killInstance(i);
    await front?.close();
    await receiver?.close();
    await redis?.stop();
    if (dbName) {
      const admin = new pg.Client({ connectionString: base });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch(() => {});
      await admin.end();
    }
  });

  it('loses no accepted event: history complete, webhooks at least once and signed, SSE exactly once in order', async () => {
    const started = Date.now();
    // The first instance creates the account and prints its key (BOOTSTRAP_ACCOUNT); LOG_LEVEL info shows the address.
    const one = await startInstance('one', { ...env, LOG_LEVEL: 'info', BOOTSTRAP_ACCOUNT: 'true' });
    const apiKey = one.proc.stdout().match(/(sb_[0-9a-f]{16}_[A-Za-z0-9_-]{43})/)?.[1];
    expect(apiKey).toBeTruthy();
    const two = await startInstance('two', { ...env, LOG_LEVEL: 'info', BOOTSTRAP_ACCOUNT: 'false' });
    instances.push(one, two);
    front.setBackends([one.port, two.port]);

    const hookPath = '/faults';
    const created = await fetch(`${front.url}/api/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.url}${hookPath}`, events: ['sms.*'] }),
    });
    expect(created.status).toBe(201);
    receiver.setSecrets(hookPath, [((await created.json()) as { secret: string }).secret]);

    // A browser-like client through the front: it reconnects with Last-Event-ID whenever its connection is cut.
    sse = openSse(`${front.url}/api/events?token=${apiKey}`, ['sms.sent']);
    await sse.opened();

    const kills: string[] = [];
    let restarted: Promise<void> = Promise.resolve();
    const load = await publishLoad(front.url, apiKey!, {
      total: TOTAL,
      concurrency: 4,
      run: 'faults',
      at: async (k) => {
        if (k === Math.floor(TOTAL / 3)) {
          // kill -9 an instance under load, then start a replacement (a new process on a new port).
          kills.push('instance one');
          front.setBackends([two.port]);
          await killInstance(one);
          restarted = startInstance('one-again', { ...env, LOG_LEVEL: 'info', BOOTSTRAP_ACCOUNT: 'false' }).then(
            (again) => {
              instances.push(again);
              front.setBackends([two.port, again.port]);
            },
          );
        }
        if (k === Math.floor((2 * TOTAL) / 3)) {
          kills.push('redis');
          await redis.kill();
          await new Promise((r) => setTimeout(r, 500));
          await redis.restart();
        }
      },
    });
    await restarted;
    const accepted = load.accepted.map((e) => e.id);
    expect(accepted.length).toBeGreaterThan(TOTAL / 2);

    // 1. Every accepted event is in the history.
    const history = new Set(await historyIds(front.url, apiKey!));
    const missingFromHistory = accepted.filter((id) => !history.has(id));

    // 2. Every accepted event reached the webhook receiver at least once, with a valid signature.
    // The webhook body is the spec 2.11 envelope (no log id): match by the payload's sequence number.
    const delivered = () => {
      const ns = new Set(
        receiver
          .on(hookPath)
          .filter((r) => r.signatureValid && r.standardValid)
          .map((r) => r.body?.payload?.n as number),
      );
      return load.accepted.filter((e) => !ns.has(e.n)).map((e) => e.id);
    };
    // A delivery whose attempt died with its instance is retried after the claim lease: wait for it generously.
    await eventually(() => delivered().length === 0, 240_000);
    const badSignatures = receiver.on(hookPath).filter((r) => !r.signatureValid || !r.standardValid).length;

    // 3. The SSE client got every accepted event exactly once, in id order.
    await eventually(() => {
      const got = new Set(sse!.messages.map((m) => m.id));
      return accepted.every((id) => got.has(id));
    }, 120_000);
    const sseIds = sse.messages.map((m) => m.id);
    const duplicates = sseIds.length - new Set(sseIds).size;
    const outOfOrder = sseIds.filter((id, i) => i > 0 && BigInt(id) <= BigInt(sseIds[i - 1]!)).length;
    const missingFromSse = accepted.filter((id) => !sseIds.includes(id));
    const deliveriesPerEvent = receiver.on(hookPath).length;

    report({
      test: 'distributed',
      published: TOTAL,
      accepted: accepted.length,
      refused: load.refused,
      cut: load.failed,
      kills,
      lostFromHistory: missingFromHistory.length,
      lostFromWebhooks: delivered().length,
      webhookDeliveries: deliveriesPerEvent,
      badSignatures,
      lostFromSse: missingFromSse.length,
      sseDuplicates: duplicates,
      sseOutOfOrder: outOfOrder,
      sseReconnects: sse.requests.length - 1,
      seconds: Math.round((Date.now() - started) / 1000),
    });
    expect(missingFromHistory).toEqual([]);
    expect(delivered()).toEqual([]);
    expect(badSignatures).toBe(0);
    expect(missingFromSse).toEqual([]);
    expect(duplicates).toBe(0);
    expect(outOfOrder).toBe(0);
  });
});
