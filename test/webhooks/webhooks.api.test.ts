import { afterAll, beforeAll, describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { logsOf, publish, registerWebhook } from './helpers.js';

const clock = new ManualClock();
const it = appTest({ clock });

describe('webhooks: registration, fan-out, signatures, logs', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver(() => clock.now());
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('registers a webhook, returns the secret once, lists it without the secret', async ({ t, a }) => {
    const res = await a.request('POST', '/api/webhooks', { url: 'https://example.com/hook', events: ['sms.*'] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ url: 'https://example.com/hook', events: ['sms.*'], active: true });
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(res.body.secret.slice(6), 'base64')).toHaveLength(32);
    const list = await a.request('GET', '/api/webhooks');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      webhooks: [
        {
          id: res.body.id,
          url: 'https://example.com/hook',
          events: ['sms.*'],
          description: null,
          active: true,
          disabledReason: null,
          createdAt: res.body.createdAt,
        },
      ],
      nextCursor: null,
    });
    expect(JSON.stringify(list.body)).not.toContain(res.body.secret);
    const stored = await t.app.ctx.db.webhook.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(JSON.stringify(stored)).not.toContain(res.body.secret.slice(6));
  });

  it('refuses bad input naming every entry: unknown types, globs matching nothing, bad URLs, missing fields', async ({
    a,
  }) => {
    const res = await a.request('POST', '/api/webhooks', {
      url: 'ftp://example.com/x',
      events: ['sms.delivered', '*', 'sms.teleported', 'fax.*', 'voice.*'],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details.map((d: any) => `${d.field}:${d.code}`).sort()).toEqual([
      'events.2:UNKNOWN_EVENT_TYPE',
      'events.3:UNKNOWN_EVENT_TYPE',
      'url:INVALID_FORMAT',
    ]);
    const missing = await a.request('POST', '/api/webhooks', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.map((d: any) => `${d.field}:${d.code}`).sort()).toEqual([
      'events:REQUIRED',
      'url:REQUIRED',
    ]);
    for (const url of ['/relative', 'http://user:pw@example.com/', 'not a url']) {
      const bad = await a.request('POST', '/api/webhooks', { url, events: ['*'] });
      expect(bad.status, url).toBe(400);
      expect(bad.body.error.field).toBe('url');
    }
    const empty = await a.request('POST', '/api/webhooks', { url: 'https://example.com', events: [] });
    expect(empty.body.error.details[0]).toMatchObject({ field: 'events', code: 'TOO_FEW' });
    expect((await a.request('GET', '/api/webhooks')).body.webhooks).toEqual([]);
  });

  it('needs the webhooks scope and hides other accounts’ webhooks (404)', async ({ t, a }) => {
    const b = await t.newAccount();
    const noScope = await t.newAccount(['events:write']);
    expect((await noScope.request('GET', '/api/webhooks')).status).toBe(403);
    const hook = await registerWebhook(a, receiver, ['*']);
    for (const [method, path] of [
      ['GET', `/api/webhooks/${hook.id}/logs`],
      ['DELETE', `/api/webhooks/${hook.id}`],
      ['POST', `/api/webhooks/${hook.id}/rotate-secret`],
    ] as const) {
      const res = await b.request(method, path);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect((await b.request('GET', '/api/webhooks')).body.webhooks).toEqual([]);
  });

  it('a registered brand (one-statement write) reaches a webhook added after earlier writes of the account, once', async ({
    t,
    a,
  }) => {
    const brand = { name: 'Hook Brand LLC', ein: '12-3456789', vertical: 'RETAIL', entityType: 'PRIVATE_PROFIT' };
    // The first registration is written while the account has no webhook (the write remembers that) …
    const first = await a.request('POST', '/compliance/brands', { ...brand, referenceId: 'Ref-1' });
    expect(first.status).toBe(201);
    // … so the next one must notice the webhook added since, and write its delivery with the brand and the event.
    const hook = await registerWebhook(a, receiver, ['10dlc.brand.*']);
    const second = await a.request('POST', '/compliance/brands', { ...brand, referenceId: 'Ref-2' });
    expect(second.status).toBe(201);
    // A referenceId taken case-insensitively writes nothing at all: no brand, no event, no delivery.
    const taken = await a.request('POST', '/compliance/brands', { ...brand, referenceId: 'REF-2' });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: 'REFERENCE_ID_TAKEN', field: 'referenceId' });
    await t.drain();
    const got = receiver.on(hook.path).filter((r) => r.body.eventType === '10dlc.brand.registered');
    expect(got.map((r) => r.body.payload.brandId)).toEqual([second.body.id]);
    expect(got[0]!.signatureValid).toBe(true);
    expect(got[0]!.body).toMatchObject({
      channel: '10dlc',
      customerId: a.accountId,
      payload: { referenceId: 'Ref-2' },
    });
    const list = await a.request('GET', '/compliance/brands');
    expect(list.body.brands.map((b: { id: string }) => b.id)).toEqual([first.body.id, second.body.id]);
    const history = await a.request('GET', '/api/events/history?limit=100');
    const registered = history.body.events.filter((e: any) => e.eventType === '10dlc.brand.registered');
    expect(registered).toHaveLength(2);
  });

  it('ingests of several accounts share one statement: each account in order and gapless; a webhook added since gets its account’s later events once', async ({
    t,
    a,
    b,
  }) => {
    const c = await t.newAccount();
    const ingest = (acc: TestAccount, n: number) =>
      t.app.ctx.events.ingest({ accountId: acc.accountId, eventType: 'sms.sent', payload: { n } });
    // Issued in one turn, so written together: the accounts' first writes, none with a webhook yet (remembered).
    await Promise.all([a, b, c].flatMap((acc) => [ingest(acc, 1), ingest(acc, 2)]));
    // The next statement must notice b's new webhook (its read changed): b is sent again, a and c commit.
    const hook = await registerWebhook(b, receiver, ['sms.*']);
    const second = await Promise.all([a, b, c].flatMap((acc) => [ingest(acc, 3), ingest(acc, 4)]));
    expect(second.map((e) => [e.accountId, e.payload.n])).toEqual(
      [a, b, c].flatMap((acc) => [
        [acc.accountId, 3],
        [acc.accountId, 4],
      ]),
    );
    await t.drain();
    const got = receiver.on(hook.path);
    expect(got.map((r) => r.body.payload.n).sort()).toEqual([3, 4]);
    expect(got.every((r) => r.body.customerId === b.accountId && r.signatureValid)).toBe(true);
    for (const acc of [a, b, c]) {
      const stored = await t.app.ctx.db.event.findMany({ where: { accountId: acc.accountId }, orderBy: { id: 'asc' } });
      const sent = stored.filter((e) => e.eventType === 'sms.sent'); // b also has its webhook.created (or such)
      expect(sent.map((e) => (e.payload as { n: number }).n)).toEqual([1, 2, 3, 4]);
      expect(stored.map((e) => Number(e.seq))).toEqual(stored.map((_, i) => i + 1)); // gapless, increasing with id
    }
  });

  it('each delivery row names its event’s account and goes with its webhook: an account removed (operator SQL) leaves no delivery behind', async ({
    t,
  }) => {
    // The delivery's account has no foreign key of its own (migration 20261127120000): the webhook's references the
    // account, and deleting the account reaches the deliveries through its webhooks.
    const gone = await t.newAccount();
    const kept = await t.newAccount();
    const hooks = [await registerWebhook(gone, receiver, ['sms.*']), await registerWebhook(kept, receiver, ['sms.*'])];
    const ids = await Promise.all(
      [gone, kept].flatMap((acc) => [publish(acc, 'sms.sent'), publish(acc, 'sms.failed')]),
    );
    await t.drain();
    for (const [i, acc] of [gone, kept].entries()) {
      const got = receiver.on(hooks[i]!.path).map((r) => `${r.body.customerId} ${r.body.eventType}`);
      expect(got.sort()).toEqual([`${acc.accountId} sms.failed`, `${acc.accountId} sms.sent`]);
      const rows = await t.app.ctx.db.webhookDelivery.findMany({ where: { webhookId: hooks[i]!.id } });
      expect(rows.map((r) => [r.accountId, String(r.eventId), r.status]).sort()).toEqual(
        ids
          .slice(2 * i, 2 * i + 2)
          .map((id) => [acc.accountId, id, 'delivered'])
          .sort(),
      );
    }
    await t.app.ctx.db.$executeRaw`DELETE FROM accounts WHERE id = ${gone.accountId}`;
    expect(await t.app.ctx.db.webhookDelivery.count({ where: { accountId: gone.accountId } })).toBe(0);
    expect(await t.app.ctx.db.webhook.count({ where: { accountId: gone.accountId } })).toBe(0);
    expect(await t.app.ctx.db.webhookDelivery.count({ where: { accountId: kept.accountId } })).toBe(2);
  });

  it('delivers each event once per matching webhook, with globs (* crosses dots), signed and verified', async ({
    t,
    a,
  }) => {
    const all = await registerWebhook(a, receiver, ['*']);
    const voice = await registerWebhook(a, receiver, ['voice.*']);
    const sms = await registerWebhook(a, receiver, ['sms.{delivered,failed}']);
    const campaign = await registerWebhook(a, receiver, ['campaign.*']);
    await publish(a, 'voice.ai.completed', { callId: 'c1' });
    await publish(a, 'sms.delivered', { id: 'm1', from: '+14155550100', to: '+14155550101', status: 'delivered' });
    await publish(a, 'sms.sent', { id: 'm2' });
    await publish(a, 'campaign.call.human_connected', {});
    await t.drain();
    expect(receiver.on(all.path).map((r) => r.body.eventType)).toEqual(
      expect.arrayContaining(['voice.ai.completed', 'sms.delivered', 'sms.sent', 'campaign.call.human_connected']),
    );
    // `*` also matches the webhook.created of the three registered after it (the `webhook` channel).
    expect(receiver.on(all.path).filter((r) => !r.body.eventType.startsWith('webhook.'))).toHaveLength(4);
    expect(receiver.on(all.path).filter((r) => r.body.eventType === 'webhook.created')).toHaveLength(3);
    expect(receiver.on(voice.path).map((r) => r.body.eventType)).toEqual(['voice.ai.completed']);
    expect(receiver.on(sms.path).map((r) => r.body.eventType)).toEqual(['sms.delivered']);
    expect(receiver.on(campaign.path).map((r) => r.body.eventType)).toEqual(['campaign.call.human_connected']);
    const got = [all, voice, sms, campaign].flatMap((h) => receiver.on(h.path));
    for (const r of got) {
      expect(r.signatureValid).toBe(true);
      expect(r.standardValid).toBe(true);
      expect(r.headers['x-switchboard-event']).toBe(r.body.eventType);
      expect(r.headers['webhook-id']).toBe(r.headers['x-switchboard-delivery']);
      expect(r.headers['x-switchboard-signature']).toMatch(/^[0-9a-f]{64}$/);
      expect(r.headers['content-type']).toBe('application/json');
    }
    expect(new Set(got.map((r) => r.headers['x-switchboard-delivery'])).size).toBe(got.length);
    const smsDelivery = receiver.on(sms.path)[0]!;
    expect(smsDelivery.body).toEqual({
      channel: 'sms',
      eventType: 'sms.delivered',
      payload: { id: 'm1', from: '+14155550100', to: '+14155550101', status: 'delivered' },
      customerId: a.accountId,
      timestamp: clock.now().toISOString(),
    });
    // Another account's events never reach this account's webhooks.
    const b = await t.newAccount();
    await publish(b, 'sms.sent', {});
    await t.drain();
    // `*` also matches the webhook.created of the three registered after it (the `webhook` channel).
    expect(receiver.on(all.path).filter((r) => !r.body.eventType.startsWith('webhook.'))).toHaveLength(4);
    expect(receiver.on(all.path).filter((r) => r.body.eventType === 'webhook.created')).toHaveLength(3);
  });

  it('signs the exact raw bytes of non-ASCII payloads', async ({ t, a }) => {
    const hook = await registerWebhook(a, receiver, ['sms.received']);
    const text = 'Grüße 👋 — ¿qué tal? 你好 \u2028 "quoted" \\ back';
    await publish(a, 'sms.received', { id: 'm', from: '+14155550100', to: '+14155550101', status: 'received', text });
    await t.drain();
    const [r] = receiver.on(hook.path);
    expect(r!.signatureValid).toBe(true);
    expect(r!.standardValid).toBe(true);
    expect(r!.body.payload.text).toBe(text);
    expect(r!.raw.toString('utf8')).toContain('你好');
    expect(r!.raw.length).toBeGreaterThan(r!.raw.toString('utf8').length);
    // A signature over a re-encoded body (e.g. \u escapes) does not verify: it is over the bytes sent.
    const { verifySignature } = await import('../../src/webhooks-verify.js');
    expect(
      verifySignature(
        JSON.stringify(r!.body).replace('你', '\\u4f60'),
        hook.secret,
        r!.headers['x-switchboard-signature'] as string,
      ),
    ).toBe(false);
  });

  it('logs deliveries newest first with status, attempts, response code; default and max limit', async ({ t, a }) => {
    const hook = await registerWebhook(a, receiver, ['sms.*']);
    for (const type of ['sms.sent', 'sms.delivered', 'sms.failed']) {
      await publish(a, type);
      clock.advance(1000);
    }
    await t.drain();
    const logs = await logsOf(a, hook.id);
    expect(logs.map((l) => l.eventType)).toEqual(['sms.failed', 'sms.delivered', 'sms.sent']);
    for (const l of logs) {
      expect(l).toMatchObject({
        status: 'delivered',
        attempts: 1,
        responseCode: 200,
        kind: 'event',
        nextAttemptAt: null,
      });
      expect(l.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(l.attemptHistory).toEqual([expect.objectContaining({ attempt: 1, responseCode: 200, error: null })]);
    }
    expect((await logsOf(a, hook.id, 2)).map((l) => l.eventType)).toEqual(['sms.failed', 'sms.delivered']);
    const tooBig = await a.request('GET', `/api/webhooks/${hook.id}/logs?limit=201`);
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.field).toBe('query.limit');
    expect((await a.request('GET', `/api/webhooks/${hook.id}/logs?limit=200`)).status).toBe(200);
  });

  it('deletes a webhook, cancels its pending deliveries and stops delivering', async ({ t, a }) => {
    const hook = await registerWebhook(a, receiver, ['sms.sent']);
    receiver.respond(hook.path, () => ({ status: 500 }));
    await publish(a, 'sms.sent');
    await t.drain();
    const del = await a.request('DELETE', `/api/webhooks/${hook.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: hook.id, deleted: true, cancelledDeliveries: 1 });
    clock.advance(60 * 60 * 1000);
    await publish(a, 'sms.sent');
    await t.drain();
    expect(receiver.on(hook.path)).toHaveLength(1);
    expect((await a.request('GET', '/api/webhooks')).body.webhooks).toEqual([]);
    expect((await a.request('GET', `/api/webhooks/${hook.id}/logs`)).status).toBe(404);
    expect((await a.request('DELETE', `/api/webhooks/${hook.id}`)).status).toBe(404);
    const row = await t.app.ctx.db.webhookDelivery.findFirstOrThrow({ where: { webhookId: hook.id } });
    expect(row.status).toBe('cancelled');
    const stored = await t.app.ctx.db.webhook.findUniqueOrThrow({ where: { id: hook.id } });
    expect(stored.secretCiphertext).toBe('');
  });

  it('sends a signed test delivery of a chosen type and logs it', async ({ a }) => {
    const hook = await registerWebhook(a, receiver, ['voice.*']);
    const res = await a.request('POST', `/api/webhooks/${hook.id}/test`, { eventType: 'sms.delivered' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      eventType: 'sms.delivered',
      status: 'delivered',
      attempts: 1,
      responseCode: 200,
      kind: 'test',
      eventId: null,
    });
    const [r] = receiver.on(hook.path);
    expect(r!.signatureValid && r!.standardValid).toBe(true);
    expect(r!.headers['x-switchboard-test']).toBe('true');
    expect(r!.body).toMatchObject({ channel: 'sms', eventType: 'sms.delivered', customerId: a.accountId });
    expect((await logsOf(a, hook.id))[0].id).toBe(res.body.id);
    receiver.respond(hook.path, () => ({ status: 500 }));
    const failed = await a.request('POST', `/api/webhooks/${hook.id}/test`, { eventType: 'voice.amd' });
    expect(failed.body).toMatchObject({ status: 'failed', attempts: 1, responseCode: 500, nextAttemptAt: null });
    const bad = await a.request('POST', `/api/webhooks/${hook.id}/test`, { eventType: 'nope' });
    expect(bad.status).toBe(400);
    // Role mail's example has the real event's shape (test/email/role-mail.test.ts), so a receiver can be built on it.
    receiver.respond(hook.path, () => ({ status: 204 }));
    const role = await a.request('POST', `/api/webhooks/${hook.id}/test`, { eventType: 'email.role_mail.received' });
    expect(role.body).toMatchObject({ status: 'delivered', responseCode: 204 });
    const roleBody = receiver.on(hook.path).at(-1)!.body;
    expect(roleBody.payload.event).toBe('email.role_mail.received');
    expect(Object.keys(roleBody.payload.data).sort()).toEqual(['address', 'from', 'id', 'receivedAt', 'subject']);
  });

  it('rotates the secret: new secret once, both signatures for 24 h, then only the new one', async ({ t, a }) => {
    const hook = await registerWebhook(a, receiver, ['sms.sent']);
    const rot = await a.request('POST', `/api/webhooks/${hook.id}/rotate-secret`);
    expect(rot.status).toBe(200);
    expect(rot.body.secret).toMatch(/^whsec_/);
    expect(rot.body.secret).not.toBe(hook.secret);
    expect(rot.body.previousSecretExpiresAt).toBe(new Date(clock.now().getTime() + 24 * 3600 * 1000).toISOString());
    // A receiver that still only knows the old secret keeps verifying through the previous-secret signatures.
    receiver.setSecrets(hook.path, [hook.secret]);
    await publish(a, 'sms.sent');
    await t.drain();
    const during = receiver.on(hook.path)[0]!;
    expect(during.signatureValid).toBe(false);
    expect(during.previousSignatureValid).toBe(true);
    expect(during.standardValid).toBe(true);
    expect(during.standardSignatureCount).toBe(2);
    // Switched to the new secret: the main signatures verify.
    receiver.setSecrets(hook.path, [rot.body.secret]);
    await publish(a, 'sms.sent');
    await t.drain();
    const switched = receiver.on(hook.path)[1]!;
    expect(switched.signatureValid && switched.standardValid).toBe(true);
    clock.advance(24 * 3600 * 1000 + 1);
    await publish(a, 'sms.sent');
    await t.drain();
    const after = receiver.on(hook.path)[2]!;
    expect(after.signatureValid).toBe(true);
    expect(after.headers['x-switchboard-signature-previous']).toBeUndefined();
    expect(after.standardSignatureCount).toBe(1);
    receiver.setSecrets(hook.path, [hook.secret]);
    await publish(a, 'sms.sent');
    await t.drain();
    expect(receiver.on(hook.path)[3]!.standardValid).toBe(false);
  });

  it('Standard Webhooks: re-signed per attempt with a fresh timestamp; a stale timestamp fails verification', async ({
    t,
    a,
  }) => {
    const hook = await registerWebhook(a, receiver, ['sms.sent']);
    let calls = 0;
    receiver.respond(hook.path, () => ({ status: calls++ === 0 ? 500 : 200 }));
    await publish(a, 'sms.sent');
    await t.drain();
    clock.advance(30_000);
    await t.drain();
    const [first, second] = receiver.on(hook.path);
    expect(first!.standardValid && second!.standardValid).toBe(true);
    expect(first!.headers['webhook-id']).toBe(second!.headers['webhook-id']);
    expect(Number(second!.headers['webhook-timestamp']) - Number(first!.headers['webhook-timestamp'])).toBe(30);
    expect(second!.headers['webhook-signature']).not.toBe(first!.headers['webhook-signature']);
    expect(second!.headers['x-switchboard-attempt']).toBe('2');
    const { verifyStandardWebhook } = await import('../../src/webhooks-verify.js');
    const headers = {
      'webhook-id': first!.headers['webhook-id'] as string,
      'webhook-timestamp': first!.headers['webhook-timestamp'] as string,
      'webhook-signature': first!.headers['webhook-signature'] as string,
    };
    expect(verifyStandardWebhook(first!.raw, hook.secret, headers, { now: clock.now() })).toBe(true);
    clock.advance(10 * 60 * 1000);
    expect(verifyStandardWebhook(first!.raw, hook.secret, headers, { now: clock.now() })).toBe(false);
  });
});
