import { stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDue } from '../../src/domain/webhooks/webhook.dispatcher.js';
import { ManualClock } from '../../src/infra/clock.js';
import { accountClient, startApp, type TestApp, tempDir } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { logsOf, publish, registerWebhook } from './helpers.js';

describe('webhooks: a restart in the middle of the schedule loses nothing (PGlite on disk, generated key file)', () => {
  let dir: { dir: string; cleanup: () => Promise<void> };
  let receiver: Receiver;
  let clock: ManualClock;
  let t: TestApp | undefined;
  beforeAll(async () => {
    dir = await tempDir('switchboard-webhooks-');
    clock = new ManualClock();
    receiver = await startReceiver(() => clock.now());
  });
  afterAll(async () => {
    await t?.close();
    await receiver.close();
    await dir.cleanup();
  });

  it('continues the schedule, retries a claim whose instance died, and delivers events recorded before the stop', async () => {
    t = await startApp({ clock, dataDir: dir.dir });
    const a = await t.newAccount();
    const hook = await registerWebhook(a, receiver, ['sms.*']);
    const keyFile = await stat(path.join(dir.dir, 'secrets.key'));
    expect(keyFile.mode & 0o777).toBe(0o600);
    receiver.respond(hook.path, () => ({ status: 503 }));
    const start = clock.now().getTime();
    await publish(a, 'sms.sent', { id: 'before-restart' });
    await t.drain();
    clock.advance(30_000);
    await t.drain();
    expect(receiver.on(hook.path)).toHaveLength(2);
    // Attempt 3 is due; an instance claims it and dies before sending. Another event is recorded but not dispatched.
    clock.advance(120_000);
    const claimed = await claimDue(t.app.ctx);
    expect(claimed.ids).toHaveLength(1);
    await publish(a, 'sms.delivered', { id: 'unsent' });
    await t.close();

    clock = new ManualClock(clock.now());
    t = await startApp({ clock, dataDir: dir.dir });
    const again = accountClient(t.url, a.accountId, a.apiKey);
    receiver.respond(hook.path, () => ({ status: 200 }));
    await t.drain();
    // The new event goes out at once; the claimed delivery waits for its lease (timeout 10 s + 10 s) to pass.
    expect(receiver.on(hook.path).map((r) => r.body.payload.id)).toEqual([
      'before-restart',
      'before-restart',
      'unsent',
    ]);
    clock.advance(70_000);
    await t.drain();
    const got = receiver.on(hook.path);
    expect(got.map((r) => r.body.payload.id)).toEqual(['before-restart', 'before-restart', 'unsent', 'before-restart']);
    expect(got.every((r) => r.signatureValid && r.standardValid)).toBe(true);
    const logs = await logsOf(again, hook.id);
    expect(logs.map((l) => [l.eventType, l.status, l.attempts, l.responseCode])).toEqual([
      ['sms.delivered', 'delivered', 1, 200],
      ['sms.sent', 'delivered', 4, 200],
    ]);
    // The try lost with the first instance counts as attempt 3 (issue 13), at the time it was claimed.
    expect(logs[1].attemptHistory.map((h: any) => Date.parse(h.at) - start)).toEqual([0, 30_000, 150_000, 220_000]);
    expect(logs[1].attemptHistory[2]).toMatchObject({ attempt: 3, responseCode: null });
    expect(logs[1].attemptHistory[2].error).toMatch(/^lost: /);
    expect(
      new Set(got.filter((r) => r.body.payload.id === 'before-restart').map((r) => r.headers['webhook-id'])).size,
    ).toBe(1);
    // Two boots of PGlite in a new data directory take most of this test (11–14 s each on a loaded machine).
  }, 120_000);
});
