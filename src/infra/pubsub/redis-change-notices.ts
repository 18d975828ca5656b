import { RedisPubSub } from 'graphql-redis-subscriptions';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { SharedNoticeEngine } from './change-notices.js';

/**
 * The change-notice transport of several instances (REDIS_URL): `RedisPubSub` from graphql-redis-subscriptions over
 * two ioredis connections to `url`, a publisher (no offline queue, so a publish during an outage fails fast and is
 * logged) and a subscriber; both reconnect with a backoff of 100 ms doubling to 5 s. A gap is reported when the
 * subscriber connection closes and when it is ready again after a drop (notices published meanwhile were missed).
 * Loaded only when REDIS_URL is set (docs/operations.md "Start-up").
 */
export function redisNoticeEngine(url: string, log: Logger): SharedNoticeEngine {
  const gaps: (() => void)[] = [];
  const gap = () => {
    for (const g of gaps) g();
  };
  const retryStrategy = (times: number) => Math.min(100 * 2 ** Math.min(times, 6), 5_000);
  const pub = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy });
  const sub = new Redis(url, { maxRetriesPerRequest: null, retryStrategy });
  let lastError = '';
  for (const [role, client] of [
    ['publisher', pub],
    ['subscriber', sub],
  ] as const) {
    client.on('error', (err: Error) => {
      // ioredis repeats the same error on every retry; log each distinct one once.
      if (err.message !== lastError) log.warn({ err: err.message, role }, 'redis change-notice pubsub error');
      lastError = err.message;
    });
  }
  let wasReady = false;
  sub.on('ready', () => {
    // Back after a drop: notices published meanwhile were missed.
    if (wasReady) gap();
    wasReady = true;
  });
  sub.on('close', gap);
  // graphql-redis-subscriptions' types name its own nested ioredis 5; it only calls publish/subscribe/unsubscribe
  // and the message events, which ioredis 6 has unchanged, so our connections are passed through.
  type Options = NonNullable<ConstructorParameters<typeof RedisPubSub>[0]>;
  const engine = new RedisPubSub({
    publisher: pub as unknown as Options['publisher'],
    subscriber: sub as unknown as Options['subscriber'],
  });
  return {
    engine,
    onGap: (g) => gaps.push(g),
    close: () => {
      pub.disconnect();
      sub.disconnect();
    },
  };
}
