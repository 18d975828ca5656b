import { RedisPubSub } from 'graphql-redis-subscriptions';
import { PubSub, type PubSubEngine } from 'graphql-subscriptions';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { ChangeNotice, ChangeNotices } from '../../domain/events/change-notices.port.js';

/**
 * The change-notice adapter (port: src/domain/events/change-notices.port.ts) on a graphql-subscriptions
 * `PubSubEngine`: with REDIS_URL, `RedisPubSub` from graphql-redis-subscriptions over two ioredis connections
 * (publisher and subscriber), Redis channels `<REDIS_KEY_PREFIX>gql:<topic>`; otherwise the in-process `PubSub`.
 * A publish failure is logged, never thrown (the event is durable in the log; the subscriber's next notice or a
 * resume with lastEventId brings the change). When the subscriber connection drops or comes back, every listener
 * is told (`onGap`) so its subscription ends and the client resumes from the log.
 */
export class PubSubChangeNotices implements ChangeNotices {
  readonly #engine: PubSubEngine;
  readonly #prefix: string;
  readonly #gaps = new Set<() => void>();
  readonly #redis?: { pub: Redis; sub: Redis };
  #closed?: Promise<void>;

  constructor(
    config: Pick<Config, 'REDIS_URL' | 'REDIS_KEY_PREFIX'>,
    private readonly log: Logger,
  ) {
    this.#prefix = `${config.REDIS_KEY_PREFIX}gql:`;
    if (!config.REDIS_URL) {
      this.#engine = new PubSub();
      return;
    }
    const retryStrategy = (times: number) => Math.min(100 * 2 ** Math.min(times, 6), 5_000);
    const pub = new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy });
    const sub = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null, retryStrategy });
    let lastError = '';
    for (const [role, client] of [
      ['publisher', pub],
      ['subscriber', sub],
    ] as const) {
      client.on('error', (err: Error) => {
        if (err.message !== lastError) this.log.warn({ err: err.message, role }, 'redis change-notice pubsub error');
        lastError = err.message;
      });
    }
    let wasReady = false;
    sub.on('ready', () => {
      // Back after a drop: notices published meanwhile were missed.
      if (wasReady) this.#gap();
      wasReady = true;
    });
    sub.on('close', () => this.#gap());
    this.#redis = { pub, sub };
    // graphql-redis-subscriptions' types name its own nested ioredis 5; it only calls publish/subscribe/unsubscribe
    // and the message events, which ioredis 6 has unchanged, so our connections are passed through.
    type Options = NonNullable<ConstructorParameters<typeof RedisPubSub>[0]>;
    this.#engine = new RedisPubSub({
      publisher: pub as unknown as Options['publisher'],
      subscriber: sub as unknown as Options['subscriber'],
    });
  }

  #gap(): void {
    for (const gap of [...this.#gaps]) gap();
  }

  async publish(topic: string, notice: ChangeNotice): Promise<void> {
    try {
      await this.#engine.publish(this.#prefix + topic, notice);
    } catch (err) {
      this.log.warn({ err: (err as Error).message, topic }, 'change notice not published');
    }
  }

  async listen(topic: string, onNotice: (notice: ChangeNotice) => void, onGap: () => void): Promise<() => void> {
    if (this.#closed) throw new Error('change notices closed');
    const subId = await this.#engine.subscribe(this.#prefix + topic, (notice: ChangeNotice) => onNotice(notice), {});
    this.#gaps.add(onGap);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#gaps.delete(onGap);
      this.#engine.unsubscribe(subId);
    };
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      // Feeds were ended at shutdown (endAllChangeFeeds); dropping the listeners keeps the disconnect quiet.
      this.#gaps.clear();
      if (this.#redis) {
        this.#redis.pub.disconnect();
        this.#redis.sub.disconnect();
      }
    })();
    return this.#closed;
  }
}
