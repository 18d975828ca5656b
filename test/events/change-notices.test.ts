import { promiseHooks } from 'node:v8';
import type { PubSubEngine } from 'graphql-subscriptions';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ChangeNotice } from '../../src/domain/events/change-notices.port.js';
import { PubSubChangeNotices } from '../../src/infra/pubsub/change-notices.js';

const config = { REDIS_KEY_PREFIX: 'sb:' };
const notice = {
  kind: 'webhook.delivery.attempted',
  accountId: 'a',
  webhookId: 'w',
  deliveryId: 'd',
  attempt: 1,
  status: 'delivered',
  timestamp: '2026-11-27T00:00:00.000Z',
} as const;

/** A logger that keeps the messages of its lines. */
function capturingLog() {
  const lines: { msg: string; topic?: string }[] = [];
  const log = pino({ level: 'warn' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { log, lines };
}

/** Promises created while `fn` runs (v8 promiseHooks). */
function promisesDuring(fn: () => void): number {
  let n = 0;
  const stop = promiseHooks.onInit(() => {
    n++;
  });
  try {
    fn();
  } finally {
    stop();
  }
  return n;
}

describe('change notices (issue 24: no promise per notice in-process)', () => {
  it('in-process: a listener has the notice when publish returns, `listening` says who listens; with nobody listening, publishing creates no promise', async () => {
    const { log } = capturingLog();
    const notices = new PubSubChangeNotices(config, log);
    expect(promisesDuring(() => notices.publish('a:webhookDelivery:w', notice))).toBe(0);
    expect(notices.listening('a:webhookDelivery:w')).toBe(false);
    const got: ChangeNotice[] = [];
    const stop = await notices.listen(
      'a:webhookDelivery:w',
      (n) => got.push(n),
      () => {},
    );
    expect(notices.listening('a:webhookDelivery:w')).toBe(true);
    expect(notices.listening('a:webhookDelivery:other')).toBe(false);
    const returned = notices.publish('a:webhookDelivery:w', notice);
    expect(returned).toBeUndefined();
    expect(got).toEqual([notice]);
    notices.publish('a:webhookDelivery:other', notice);
    expect(got).toHaveLength(1);
    stop();
    expect(notices.listening('a:webhookDelivery:w')).toBe(false);
    notices.publish('a:webhookDelivery:w', notice);
    expect(got).toHaveLength(1);
    await notices.close();
  });

  it('shared engine: every notice goes out, in order, and a failed publish (rejected or thrown) is logged, never thrown', async () => {
    const { log, lines } = capturingLog();
    const sent: string[] = [];
    let mode: 'ok' | 'reject' | 'throw' = 'ok';
    const engine = {
      publish(trigger: string) {
        if (mode === 'throw') throw new Error('down');
        sent.push(trigger);
        return mode === 'reject' ? Promise.reject(new Error('down')) : Promise.resolve();
      },
    } as unknown as PubSubEngine;
    const notices = new PubSubChangeNotices(config, log, { engine, onGap: () => {}, close: () => {} });
    // Listeners may be on other instances: a shared engine always counts as listened to.
    expect(notices.listening('a:t:1')).toBe(true);
    notices.publish('a:t:1', notice);
    notices.publish('a:t:2', notice);
    expect(sent).toEqual(['sb:gql:a:t:1', 'sb:gql:a:t:2']);
    mode = 'reject';
    expect(() => notices.publish('a:t:3', notice)).not.toThrow();
    mode = 'throw';
    expect(() => notices.publish('a:t:4', notice)).not.toThrow();
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => [l.msg, l.topic])).toEqual([
      ['change notice not published', 'a:t:4'],
      ['change notice not published', 'a:t:3'],
    ]);
    await notices.close();
  });
});
