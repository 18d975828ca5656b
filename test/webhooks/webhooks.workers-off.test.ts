import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountClient, startApp, type TestApp, usingPostgres } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { logsOf, publish, registerWebhook } from './helpers.js';

// Instance roles (docs/configuration.md "Instance roles"): an instance started with WORKERS=false serves the API and
// enqueues deliveries in the event's transaction but sends nothing; an instance with workers on, on the same
// database, delivers them. On PGlite the two run one after the other on one data directory (it has one owner).
describe('webhooks: WORKERS=false enqueues, another instance delivers', () => {
  let receiver: Receiver;
  let dataDir: string | undefined;
  let ingest: TestApp | undefined;
  let deliver: TestApp | undefined;
  const env = { SECRETS_KEY: randomBytes(32).toString('hex') };
  beforeAll(async () => {
    receiver = await startReceiver();
    if (!usingPostgres) dataDir = await mkdtemp(path.join(tmpdir(), 'switchboard-workers-off-'));
  });
  afterAll(async () => {
    await ingest?.close();
    await deliver?.close();
    await receiver.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('accepts events and keeps their deliveries pending; the instance with workers delivers each once, signed', async () => {
    ingest = await startApp({ env: { ...env, WORKERS: 'false' }, dataDir });
    const a = await ingest.newAccount();
    const hook = await registerWebhook(a, receiver, ['sms.*']);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await publish(a, 'sms.delivered', { id: `m${i}` }));

    // Enqueued with the events, not attempted: no claim counted an attempt.
    const pending = await logsOf(a, hook.id, 50);
    expect(pending).toHaveLength(20);
    for (const entry of pending) expect(entry).toMatchObject({ status: 'pending', attempts: 0, responseCode: null });
    expect(receiver.on(hook.path)).toHaveLength(0);
    await ingest.close();
    ingest = undefined;

    deliver = await startApp({ env, dataDir });
    const got = await receiver.waitFor(hook.path, 20);
    expect(got.map((d) => d.headers['x-switchboard-event-id']).sort()).toEqual([...ids].sort());
    for (const d of got) {
      expect(d.signatureValid).toBe(true);
      expect(d.standardValid).toBe(true);
      expect(d.headers['x-switchboard-attempt']).toBe('1');
    }
    const b = accountClient(deliver.url, a.accountId, a.apiKey);
    await expect
      .poll(async () => (await logsOf(b, hook.id, 50)).map((e) => [e.status, e.attempts]))
      .toEqual(Array.from({ length: 20 }, () => ['delivered', 1]));
  });
});
