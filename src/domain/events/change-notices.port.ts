import type { StoredEvent } from './event.js';

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
  /**
   * Publishes `notice` on `topic` (already account-scoped, see {@link changeTopic}) and returns at once: listeners of
   * this instance are called before it returns, a shared transport's send is under way (in call order). Never throws:
   * failures are logged.
   */
  publish(topic: string, notice: ChangeNotice): void;
  /**
   * Whether a notice published on `topic` now could reach a listener: false only when the notices stay in this
   * process and nobody here listens on `topic`; always true with a shared transport (Redis), whose listeners may be on
   * other instances. Lets a publisher skip building a notice nobody receives (issue 24: a webhook attempt's notice,
   * nearly always unheard). Cheap (one map look-up), never throws.
   */
  listening(topic: string): boolean;
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

/**
 * The account-scoped topic of one object: `<accountId>:<kind>:<id>` (kind: brand, campaign, numbers, thread,
 * identity, webhook, webhookDelivery); with id {@link EVERY} (`*`), the topic of every object of that kind in the
 * account (the subscriptions whose id argument is omitted, issue 22).
 */
export function changeTopic(accountId: string, kind: string, id: string): string {
  return `${accountId}:${kind}:${id}`;
}

/** The id of an account-wide topic: `<accountId>:<kind>:*` carries the notices of every object of that kind. */
export const EVERY = '*';

/**
 * The topics an event is a notice for, from its payload, each prefixed by the event's account and each also on its
 * kind's account-wide topic (`<kind>:*`, {@link EVERY}): `brand:<brandId>`, `campaign:<campaignId>`,
 * `numbers:<accountId>` (number assignment events), `thread:<identityId>` (email events: `data.identityId`),
 * `identity:<identityId>` (`email.identity.*`), `webhook:<webhookId>` (the `webhook` channel's lifecycle and health
 * events). An event about nothing typed has none.
 */
export function topicsOfEvent(event: StoredEvent): string[] {
  const topics: string[] = [];
  const add = (kind: string, id: string) => {
    topics.push(changeTopic(event.accountId, kind, id), changeTopic(event.accountId, kind, EVERY));
  };
  const field = (key: string) => {
    const v = event.payload[key];
    return typeof v === 'string' && v.length > 0 ? v : undefined;
  };
  const brandId = field('brandId');
  if (brandId && event.channel === '10dlc') add('brand', brandId);
  const campaignId = field('campaignId');
  if (campaignId && event.channel === '10dlc') add('campaign', campaignId);
  if (event.eventType === '10dlc.numbers.assigned' || event.eventType === '10dlc.numbers.removed')
    topics.push(changeTopic(event.accountId, 'numbers', event.accountId));
  const data = event.payload.data as Record<string, unknown> | undefined;
  const identityId = typeof data?.identityId === 'string' ? data.identityId : undefined;
  if (event.channel === 'email' && identityId) add('thread', identityId);
  const ownIdentityId = field('identityId');
  if (event.eventType.startsWith('email.identity.') && ownIdentityId) add('identity', ownIdentityId);
  const webhookId = field('webhookId');
  if (event.channel === 'webhook' && webhookId) add('webhook', webhookId);
  return topics;
}
