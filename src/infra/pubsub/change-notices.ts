import { EventEmitter } from 'node:events';
import { PubSub, type PubSubEngine } from 'graphql-subscriptions';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { ChangeNotice, ChangeNotices } from '../../domain/events/change-notices.port.js';

/**
 * A change-notice transport shared by instances: its `PubSubEngine`, a way to learn that notices may have been
 * missed (`onGap` is called when the connection drops or comes back), and how to close it. Built by
 * `redisNoticeEngine` (./redis-change-notices.ts) when REDIS_URL is set.
 */
export interface SharedNoticeEngine {
  engine: PubSubEngine;
  onGap(gap: () => void): void;
  close(): void;
}

/**
 * The change-notice adapter (port: src/domain/events/change-notices.port.ts) on a graphql-subscriptions
 * `PubSubEngine`: with REDIS_URL, `RedisPubSub` from graphql-redis-subscriptions over two ioredis connections
 * (publisher and subscriber), Redis channels `<REDIS_KEY_PREFIX>gql:<topic>` ({@link SharedNoticeEngine});
 * otherwise the in-process `PubSub`. A publish failure is logged, never thrown (the event is durable in the log; the
 * subscriber's next notice or a resume with lastEventId brings the change). When the subscriber connection drops or
 * comes back, every listener is told (`onGap`) so its subscription ends and the client resumes from the log.
 *
 * Issue 24: `publish` returns nothing and creates no promise in-process. Every appended event and every webhook
 * attempt publishes on its topics, nearly always with nobody listening; graphql-subscriptions' `PubSub.publish`
 * emits synchronously and returns `Promise.resolve()`, and awaiting that cost ≈ 3 promises per topic per event
 * (v8 promiseHooks, docs/performance.md). In-process the notice is emitted straight on the `PubSub`'s own emitter
 * (the same listeners, called in the same turn as before); with Redis the engine's publish goes out as before
 * (ioredis writes commands in call order, so notices keep their order) and its failure is caught and logged.
 */
export class PubSubChangeNotices implements ChangeNotices {
  readonly #engine: PubSubEngine;
  readonly #prefix: string;
  readonly #gaps = new Set<() => void>();
  readonly #shared?: SharedNoticeEngine;
  /** The in-process `PubSub`'s emitter (its subscribers are listeners named by topic); undefined with Redis. */
  readonly #local?: EventEmitter;
  #closed?: Promise<void>;

  constructor(
    config: Pick<Config, 'REDIS_KEY_PREFIX'>,
    private readonly log: Logger,
    shared?: SharedNoticeEngine,
  ) {
    this.#prefix = `${config.REDIS_KEY_PREFIX}gql:`;
    this.#shared = shared;
    if (shared) this.#engine = shared.engine;
    else {
      this.#local = new EventEmitter();
      this.#engine = new PubSub({ eventEmitter: this.#local });
    }
    shared?.onGap(() => this.#gap());
  }
  #gap(): void {
    for (const gap of [...this.#gaps]) gap();
  }

  publish(topic: string, notice: ChangeNotice): void {
    try {
      if (this.#local) {
        // What PubSub.publish does, without the promise it returns: no listener, no work.
        this.#local.emit(this.#prefix + topic, notice);
        return;
      }
      this.#engine.publish(this.#prefix + topic, notice).catch((err: unknown) => this.#failed(err, topic));
    } catch (err) {
      this.#failed(err, topic);
    }
  }

  listening(topic: string): boolean {
    // graphql-subscriptions' PubSub subscribes with `on(triggerName)`: its listeners are counted under the topic.
    return this.#local === undefined || this.#local.listenerCount(this.#prefix + topic) > 0;
  }

  #failed(err: unknown, topic: string): void {
    this.log.warn({ err: (err as Error).message, topic }, 'change notice not published');
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
      this.#shared?.close();
    })();
    return this.#closed;
  }
}
