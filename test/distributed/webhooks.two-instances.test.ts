import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { accountClient } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { logsOf, publish, registerWebhook } from '../webhooks/helpers.js';
import { useTwoInstances } from './two-instances.js';

describe('webhooks: two instances on one PostgreSQL share the outbox and never send the same attempt twice', () => {
  const clock = new ManualClock();
  const apps = useTwoInstances({ clock, env: { SECRETS_KEY: randomBytes(32).toString('hex') } });
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver(() => clock.now());
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('delivers every (delivery, attempt) exactly once while both dispatchers run concurrently', async () => {
    const { one, two } = apps;
    const a = await one.newAccount();
    const onTwo = accountClient(two.url, a.accountId, a.apiKey);
    // Not '*': that webhook would also get the second one's webhook.created, a delivery this count does not follow.
    const all = await registerWebhook(a, receiver, ['sms.*']);
    const sms = await registerWebhook(onTwo, receiver, ['sms.*']);
    // Every third delivery fails its first attempt, so retries are shared too.
    const seen = new Map<string, number>();
    const flaky = () => {
      return (r: { headers: Record<string, unknown> }) => {
        const id = String(r.headers['x-switchboard-delivery']);
        if (!seen.has(id)) seen.set(id, seen.size);
        return { status: r.headers['x-switchboard-attempt'] === '1' && seen.get(id)! % 3 === 0 ? 500 : 200 };
      };
    };
    receiver.respond(all.path, flaky());
    receiver.respond(sms.path, flaky());
    const events = 60;
    for (let i = 0; i < events; i++) await publish(i % 2 === 0 ? a : onTwo, 'sms.sent', { n: i });

    const rounds: [number, number][] = [];
    rounds.push(await Promise.all([one.drain(), two.drain()]));
    clock.advance(30_000);
    rounds.push(await Promise.all([one.drain(), two.drain()]));

    const got = [...receiver.on(all.path), ...receiver.on(sms.path)];
    const perAttempt = new Map<string, number>();
    for (const r of got) {
      expect(r.signatureValid && r.standardValid).toBe(true);
      const key = `${r.headers['x-switchboard-delivery']}#${r.headers['x-switchboard-attempt']}`;
      perAttempt.set(key, (perAttempt.get(key) ?? 0) + 1);
    }
    expect([...perAttempt.values()].filter((n) => n !== 1)).toEqual([]);
    expect(new Set(got.map((r) => r.headers['x-switchboard-delivery'])).size).toBe(events * 2);
    const retried = Math.ceil(events / 3) * 2;
    expect(got).toHaveLength(events * 2 + retried);
    // Both instances did part of the work, and together exactly every attempt.
    expect(rounds.reduce((s, [x, y]) => s + x + y, 0)).toBe(got.length);
    expect(rounds[0]![0]).toBeGreaterThan(0);
    expect(rounds[0]![1]).toBeGreaterThan(0);
    for (const hook of [all, sms]) {
      const logs = await logsOf(a, hook.id, 200);
      expect(logs).toHaveLength(events);
      expect(logs.every((l) => l.status === 'delivered')).toBe(true);
    }
  });
});
