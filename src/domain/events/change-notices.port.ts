import type { StoredEvent } from './event-log.js';

/**
 * The change-notice port: after an event commits, the event log publishes it, as a notice, on the topics of the
 * objects it is about (see {@link topicsOfEvent}); typed GraphQL subscriptions listen on one topic. Implemented in
 * src/infra/pubsub with graphql-subscriptions' `PubSubEngine`: `RedisPubSub` (graphql-redis-subscriptions over
 * ioredis) when REDIS_URL is set, so every instance's listeners see every instance's notices, else the in-process
 * `PubSub`. Notices are live only: the event log stays the source of truth for replay (docs/graphql.md).
 */
/**
 * A notice that is not an event: one attempt of a webhook delivery was recorded (attempts are rows of the delivery
 * log, not events; topic `webhookDelivery:<webhookId>`).
 */
export interface DeliveryAttemptNotice {
  kind: 'webhook.delivery.attempted';
  accountId: string;
  webhookId: string;
  deliveryId: string;
  /** 1-based attempt number. */
  attempt: number;
  /** The delivery's status after the attempt (pending, delivered, failed). */
  status: string;
  /** When the attempt was recorded (ISO 8601 UTC). */
  timestamp: string;
}

/** What travels on a topic: a committed event, or a delivery-attempt notice. */
export type ChangeNotice = StoredEvent | DeliveryAttemptNotice;

/** True for a delivery-attempt notice (not an event). */
export function isAttemptNotice(n: ChangeNotice): n is DeliveryAttemptNotice {
  return (n as DeliveryAttemptNotice).kind === 'webhook.delivery.attempted';
}

export interface ChangeNotices {
  /** Publishes `notice` on `topic` (already account-scoped, see {@link changeTopic}). Never throws: failures are logged. */
  publish(topic: string, notice: ChangeNotice): Promise<void>;
  /**
   * Calls `onNotice` for every notice published on `topic` from now on (on any instance) and `onGap` when live
   * delivery may have missed notices (the Redis connection dropped or came back; shutdown). Resolves once the
   * subscription is active (Redis acknowledged SUBSCRIBE), so what is published afterwards is received.
   * @returns the unsubscribe function. @throws when the subscription cannot be made (Redis down).
   */
  listen(topic: string, onNotice: (notice: ChangeNotice) => void, onGap: () => void): Promise<() => void>;
  /** Ends every listener (their `onGap`) and closes the connections. Idempotent. */
  close(): Promise<void>;
}

/** The account-scoped topic of one object: `<accountId>:<kind>:<id>` (kind: brand, campaign, numbers, thread, webhookDelivery). */
export function changeTopic(accountId: string, kind: string, id: string): string {
  return `${accountId}:${kind}:${id}`;
}

/**
 * The topics an event is a notice for, from its payload: `brand:<brandId>`, `campaign:<campaignId>`,
 * `numbers:<accountId>` (number assignment events), `thread:<identityId>` (email events: `data.identityId`), each prefixed by the
 * event's account. An event about nothing typed has none.
 */
export function topicsOfEvent(event: StoredEvent): string[] {
  const topics: string[] = [];
  const field = (key: string) => {
    const v = event.payload[key];
    return typeof v === 'string' && v.length > 0 ? v : undefined;
  };
  const brandId = field('brandId');
  if (brandId) topics.push(changeTopic(event.accountId, 'brand', brandId));
  const campaignId = field('campaignId');
  if (campaignId) topics.push(changeTopic(event.accountId, 'campaign', campaignId));
  if (event.eventType === '10dlc.numbers.assigned' || event.eventType === '10dlc.numbers.removed')
    topics.push(changeTopic(event.accountId, 'numbers', event.accountId));
  const data = event.payload.data as Record<string, unknown> | undefined;
  const identityId = typeof data?.identityId === 'string' ? data.identityId : undefined;
  if (event.channel === 'email' && identityId) topics.push(changeTopic(event.accountId, 'thread', identityId));
  return topics;
}
