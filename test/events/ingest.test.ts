import { describe, expect } from 'vitest';
import { Prisma } from '../../src/generated/prisma/client.js';
import { appTest } from '../helpers/fixture.js';

const it = appTest();

describe.concurrent('POST /api/events (ingest)', () => {
  it('stores an event, derives its channel and answers 202 with a monotonic id', async ({ a }) => {
    const payload = { id: 'msg-1', from: '+14155550100', to: '+14155550101', status: 'sent' };
    const first = await a.request('POST', '/api/events', { eventType: 'sms.sent', payload });
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ channel: 'sms', eventType: 'sms.sent' });
    expect(first.body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const second = await a.request('POST', '/api/events', { eventType: 'voice.ai.completed', payload: {} });
    expect(second.body.channel).toBe('voice');
    expect(BigInt(second.body.id)).toBeGreaterThan(BigInt(first.body.id));
  });

  it('refuses an unknown event type and a non-object payload, all at once, storing nothing', async ({ t, a }) => {
    const res = await a.request('POST', '/api/events', { eventType: 'sms.teleported', payload: [1] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual([
      'eventType:UNKNOWN_EVENT_TYPE',
      'payload:INVALID_TYPE',
    ]);
    expect(await t.app.ctx.db.event.count({ where: { accountId: a.accountId } })).toBe(0);
  });

  it.for(['10dlc.brand.status_changed', 'email.agent.response', 'webhook.disabled', 'did.purchased'])(
    'refuses %s, which only the service emits (SERVICE_EVENT_TYPE), storing nothing',
    async (eventType, { t, a }) => {
      const res = await a.request('POST', '/api/events', { eventType, payload: {} });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([
        expect.objectContaining({ code: 'SERVICE_EVENT_TYPE', field: 'eventType' }),
      ]);
      expect(await t.app.ctx.db.event.count({ where: { accountId: a.accountId } })).toBe(0);
    },
  );

  it('accepts did.state_changed from the telephony side', async ({ a }) => {
    const res = await a.request('POST', '/api/events', {
      eventType: 'did.state_changed',
      payload: { state: 'warming' },
    });
    expect(res.status).toBe(202);
  });

  it('requires the events:write scope (403 FORBIDDEN)', async ({ t }) => {
    const a = await t.newAccount(['events:read']);
    const res = await a.request('POST', '/api/events', { eventType: 'sms.sent', payload: {} });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  it('answers a missing eventType with REQUIRED', async ({ a }) => {
    const res = await a.request('POST', '/api/events', { payload: {} });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ field: 'eventType', details: [{ code: 'REQUIRED', field: 'eventType' }] });
  });
});

describe('EventLog.write preconditions (issue 24)', () => {
  it('a failed precondition stops its own write only: batched writes of the account still commit, in order', async ({
    t,
    a,
  }) => {
    const write = (n: number, ok: boolean) =>
      t.app.ctx.events.write({
        accountId: a.accountId,
        precondition: ok ? Prisma.sql`true` : Prisma.sql`false`,
        changes: [],
        events: [{ eventType: 'sms.sent', payload: { n } }],
      });
    // Issued at once: the first goes alone, the others wait for it and share the next statement (group commit).
    const results = await Promise.all([write(1, true), write(2, true), write(3, false), write(4, true)]);
    expect(results.map((r) => (r === null ? null : r.map((e) => e.payload.n)))).toEqual([[1], [2], null, [4]]);
    const stored = await t.app.ctx.db.event.findMany({ where: { accountId: a.accountId }, orderBy: { id: 'asc' } });
    expect(stored.map((e) => (e.payload as { n: number }).n)).toEqual([1, 2, 4]);
    expect(stored.map((e) => Number(e.seq))).toEqual([1, 2, 3]); // the refused write left no hole
  });
});
