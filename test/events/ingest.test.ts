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

  it('writes whose guards read only their own rows share a group commit; a false guard fails alone', async ({
    t,
    a,
  }) => {
    const events = t.app.ctx.events;
    const write = (guard?: boolean) =>
      events.write({
        accountId: a.accountId,
        ...(guard === undefined ? {} : { guard: guard ? Prisma.sql`true` : Prisma.sql`false`, guardOwnRows: true }),
        changes: [],
        events: [{ eventType: 'sms.sent', payload: { guard: guard ?? null } }],
      });
    // Sent together: on PostgreSQL the last three wait for the first statement and then share one (ANDed guards
    // false: each goes again alone under its own guard).
    const [first, yes, no, plain] = await Promise.all([write(), write(true), write(false), write()]);
    expect(first).toHaveLength(1);
    expect(yes).toHaveLength(1);
    expect(no).toBeNull();
    expect(plain).toHaveLength(1);
    const stored = await t.app.ctx.db.event.findMany({ where: { accountId: a.accountId }, orderBy: { seq: 'asc' } });
    expect(stored.map((e) => (e.payload as { guard: boolean | null }).guard).sort()).toEqual([null, null, true].sort());
    expect(stored.map((e) => Number(e.seq))).toEqual([1, 2, 3]);
  });

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
