import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { StoredEvent } from '../../domain/events/event.js';
import type { BusHealth, BusScope, BusSubscriber, EventBus } from '../../domain/events/event-bus.port.js';
import { EVENT_ID_ATTRIBUTE, inSpan, SpanKind, tracingEnabled } from '../tracing.js';
import { InProcessEventBus } from './memory-bus.js';

/** Control message on the Redis channel: "a publish was lost; resume by replay". Never a valid event. */
const GAP_MESSAGE = '{"gap":true}';

/**
 * The bus of several instances: Redis pub/sub through ioredis directly (one publishing and one subscribed
 * connection per instance, one Redis channel `<REDIS_KEY_PREFIX>events`, the stored event as JSON). Every
 * instance, including the publisher, receives events from Redis, so all subscribers see one order.
 *
 * ioredis reconnects on its own. While Redis is unreachable, publishes fail fast (no offline queue, so memory does
 * not grow) and are logged; subscribers are told about the gap when the connection drops, when it comes back, and
 * when they subscribe during an outage, so streams end and clients resume by replay from the database log; an
 * instance whose publish failed broadcasts the same "gap" to all instances once it reconnects. Redis
 * being down therefore degrades live delivery to replay-on-reconnect and never crashes the service.
 */
export class RedisEventBus implements EventBus {
  readonly #emitter = new EventEmitter().setMaxListeners(0);
  readonly #attached = new Map<BusSubscriber, () => void>();
  readonly #channel: string;
  readonly #pub: Redis;
  readonly #sub: Redis;
  #up = false;
  #closed = false;
  #lostPublish = false;
  /** Tracing was on when this bus was made (src/infra/tracing.ts). */
  readonly #traced = tracingEnabled();

  constructor(
    url: string,
    prefix: string,
    private readonly log: Logger,
  ) {
    this.#channel = `${prefix}events`;
    const retryStrategy = (times: number) => Math.min(100 * 2 ** Math.min(times, 6), 5_000);
    this.#pub = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy,
      lazyConnect: false,
    });
    this.#sub = new Redis(url, { retryStrategy, maxRetriesPerRequest: null, lazyConnect: false });
    let lastError = '';
    for (const [role, client] of [
      ['publisher', this.#pub],
      ['subscriber', this.#sub],
    ] as const) {
      client.on('error', (err: Error) => {
        // ioredis repeats the same error on every retry; log each distinct one once.
        if (err.message !== lastError) this.log.warn({ err: err.message, role }, 'redis event bus error');
        lastError = err.message;
      });
    }
    this.#sub.on('ready', () => {
      lastError = '';
      if (!this.#up) {
        this.#up = true;
        this.log.info({ channel: this.#channel }, 'redis event bus connected');
        this.#emitter.emit('gap');
      }
    });
    this.#sub.on('close', () => {
      if (this.#up && !this.#closed) {
        this.log.warn('redis event bus connection lost; streams resume by replay');
        this.#up = false;
        this.#emitter.emit('gap');
      }
      this.#up = false;
    });
    this.#pub.on('ready', () => {
      if (!this.#lostPublish) return;
      // Tell every instance that a publish was lost, so their streams resume by replay too.
      this.#lostPublish = false;
      this.#pub.publish(this.#channel, GAP_MESSAGE).catch(() => {
        this.#lostPublish = true;
      });
    });
    this.#sub.on('message', (channel: string, message: string) => {
      if (channel !== this.#channel) return;
      if (message === GAP_MESSAGE) {
        this.#emitter.emit('gap');
        return;
      }
      try {
        this.#emitter.emit('event', JSON.parse(message) as StoredEvent);
      } catch (err) {
        this.log.error({ err }, 'unreadable message on the redis event bus');
      }
    });
  }

  /** Subscribes the Redis channel; waits at most `timeoutMs` (Redis down at boot is logged, not fatal). */
  async start(timeoutMs = 5_000): Promise<void> {
    const subscribed = this.#sub.subscribe(this.#channel);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const outcome = await Promise.race([subscribed.then(() => 'ok' as const), timeout]).catch((err: Error) => {
      this.log.warn({ err: err.message }, 'redis event bus could not subscribe yet; retrying in the background');
      return 'failed' as const;
    });
    clearTimeout(timer);
    if (outcome === 'timeout') this.log.warn('redis event bus not reachable yet; retrying in the background');
  }

  /** Up while both connections are ready (the subscribed one has its channel, the publishing one can send). */
  health(): BusHealth {
    return { kind: 'redis', up: this.#up && this.#pub.status === 'ready' && !this.#closed };
  }

  /** Publishes the events in one pipeline (one round trip, in order on the one publishing connection). */
  async publish(events: StoredEvent[]): Promise<void> {
    if (events.length === 0) return;
    if (!this.#traced) return this.#publish(events);
    return inSpan(
      'redis PUBLISH',
      SpanKind.PRODUCER,
      {
        'messaging.system': 'redis',
        'messaging.destination.name': this.#channel,
        [EVENT_ID_ATTRIBUTE]: events.map((e) => e.id).join(','),
      },
      () => this.#publish(events),
    );
  }

  async #publish(events: StoredEvent[]): Promise<void> {
    let failed: string | undefined;
    try {
      const pipeline = this.#pub.pipeline();
      for (const event of events) pipeline.publish(this.#channel, JSON.stringify(event));
      const results = (await pipeline.exec()) ?? [];
      failed = results.find(([err]) => err)?.[0]?.message;
    } catch (err) {
      failed = (err as Error).message;
    }
    if (failed !== undefined) {
      this.log.warn({ err: failed, eventIds: events.map((e) => e.id) }, 'redis publish failed; replay covers it');
      this.#lostPublish = true;
      this.#emitter.emit('gap');
    }
  }

  subscribe(listener: (event: StoredEvent) => void, onGap?: () => void): () => void {
    this.#emitter.on('event', listener);
    const offGap = onGap ? this.onGap(onGap) : undefined;
    return () => {
      this.#emitter.off('event', listener);
      offGap?.();
    };
  }

  /** Raw buses are not what streams attach to (the ordered bus is): closures per subscriber are fine here. */
  attach(subscriber: BusSubscriber, _scope: BusScope): void {
    this.#attached.set(
      subscriber,
      this.subscribe(
        (event) => subscriber.deliver(event),
        () => subscriber.gap(),
      ),
    );
  }

  detach(subscriber: BusSubscriber, _scope: BusScope): void {
    this.#attached.get(subscriber)?.();
    this.#attached.delete(subscriber);
  }

  /** While the subscribing connection is lost and not yet resubscribed. */
  interrupted(): boolean {
    return !this.#up;
  }

  /** Tracks nothing: every publish reaches every subscriber. */
  async whenReady(_accountId: string): Promise<void> {}

  /** Also calls `listener` at once (next microtask) when Redis is down right now. */
  onGap(listener: () => void): () => void {
    this.#emitter.on('gap', listener);
    if (this.interrupted()) queueMicrotask(listener);
    return () => this.#emitter.off('gap', listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#emitter.removeAllListeners();
    this.#pub.disconnect();
    this.#sub.disconnect();
  }
}

/** The bus for this configuration: Redis pub/sub when `REDIS_URL` is set, otherwise in-process. */
export async function createEventBus(config: Config, log: Logger): Promise<EventBus> {
  if (!config.REDIS_URL) return new InProcessEventBus();
  const bus = new RedisEventBus(config.REDIS_URL, config.REDIS_KEY_PREFIX, log);
  await bus.start();
  return bus;
}
