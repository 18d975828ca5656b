/**
 * Issue 24 round 7, counted in isolation: CPU per attempt of the signed headers as undici receives them (the object
 * deliveryHeaders built before, flattened by the transport, against the flat list it builds now) and of the attempt
 * notice with nobody listening (built and emitted before, against the `listening` check now). Prints ns per attempt
 * (process.cpuUsage over `n` calls, best of `runs`). Usage: `npx tsx test/bench/headers-notice-count.ts [n] [runs]`.
 * Measurement only; nothing in src depends on it.
 */
import pino from 'pino';
import { changeTopic } from '../../src/domain/events/change-notices.port.js';
import {
  deliveryHeaders,
  hexSignature,
  signingKey,
  standardSignature,
} from '../../src/domain/webhooks/webhook.signing.js';
import { PubSubChangeNotices } from '../../src/infra/pubsub/change-notices.js';

const N = Number(process.argv[2] ?? 200_000);
const RUNS = Number(process.argv[3] ?? 5);
const secrets = { current: signingKey(`whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`) };
const body = Buffer.from(JSON.stringify({ id: 'x', type: 'message.received', data: { text: 'y'.repeat(400) } }));
const input = {
  deliveryId: '01931a2b-3c4d-7e5f-8a9b-0c1d2e3f4a5b',
  eventType: 'message.received',
  eventId: '123456',
  attempt: 1,
  timestamp: 1_795_000_000,
  test: false,
};

/** deliveryHeaders as it was before (an object), and the transport's flattening of it. */
function before(): string[] {
  const h = input;
  const signatures = [secrets.current];
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Switchboard-Webhooks/1.0',
    'x-switchboard-signature': hexSignature(secrets.current, body),
    'x-switchboard-event': h.eventType,
    'x-switchboard-delivery': h.deliveryId,
    'x-switchboard-attempt': String(h.attempt),
    'webhook-id': h.deliveryId,
    'webhook-timestamp': String(h.timestamp),
    'webhook-signature': signatures.map((s) => `v1,${standardSignature(s, h.deliveryId, h.timestamp, body)}`).join(' '),
  };
  if (h.eventId) headers['x-switchboard-event-id'] = h.eventId;
  const flat: string[] = [];
  for (const name in headers) flat.push(name, headers[name]!);
  return flat;
}
const after = () => deliveryHeaders(body, secrets, input);
/** The HMACs alone (both signatures), to tell the headers' own assembly from the signing. */
const signing = () => [
  hexSignature(secrets.current, body),
  standardSignature(secrets.current, input.deliveryId, input.timestamp, body),
];
if (JSON.stringify(before()) !== JSON.stringify(after())) throw new Error('headers differ');

const notices = new PubSubChangeNotices({ REDIS_KEY_PREFIX: 'sb:' }, pino({ level: 'silent' }));
const o = { attempt: 1, next: 'delivered', now: new Date() };
const noticeBefore = () =>
  notices.publish(changeTopic('acc-1', 'webhookDelivery', 'wh-1'), {
    kind: 'webhook.delivery.attempted',
    accountId: 'acc-1',
    webhookId: 'wh-1',
    deliveryId: input.deliveryId,
    attempt: o.attempt,
    status: o.next,
    timestamp: o.now.toISOString(),
  });
const noticeAfter = () => {
  const topic = changeTopic('acc-1', 'webhookDelivery', 'wh-1');
  if (!notices.listening(topic)) return;
  noticeBefore();
};

function ns(f: () => unknown): number {
  let best = Infinity;
  let sink = 0;
  for (let r = 0; r < RUNS; r++) {
    const t = process.cpuUsage();
    for (let i = 0; i < N; i++) sink += f() === undefined ? 0 : 1;
    const u = process.cpuUsage(t);
    best = Math.min(best, ((u.user + u.system) * 1000) / N);
  }
  return sink >= 0 ? best : -1;
}
for (let k = 0; k < 2; k++) {
  console.log(
    `headers (sign + flat list): before ${ns(before).toFixed(0)} ns, after ${ns(after).toFixed(0)} ns ` +
      `(of which the two HMACs ${ns(signing).toFixed(0)} ns); ` +
      `notice, nobody listening: before ${ns(noticeBefore).toFixed(0)} ns, after ${ns(noticeAfter).toFixed(0)} ns`,
  );
}
