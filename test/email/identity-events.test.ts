// Identities are observable (issue 22, item 2): creating, updating and deprovisioning an identity emit
// email.identity.created / .updated / .deprovisioned on the `email` channel, in history and on the stream, once each.
import { describe, expect } from 'vitest';
import { appTest } from '../helpers/fixture.js';

const it = appTest();

describe('email identity events', () => {
  it('emits created, updated and deprovisioned (once, even when the delete repeats)', async ({ a }) => {
    const created = await a.request('POST', '/api/email/identities', { localPart: `ev-${Date.now()}` });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await a.request('PATCH', `/api/email/identities/${id}`, { displayName: 'Support' })).status).toBe(200);
    expect((await a.request('DELETE', `/api/email/identities/${id}`)).status).toBe(200);
    expect((await a.request('DELETE', `/api/email/identities/${id}`)).status).toBe(200);
    const res = await a.request('GET', '/api/events/history?channels=email&limit=100');
    const events = res.body.events as { eventType: string; channel: string; payload: Record<string, unknown> }[];
    expect(events.map((e) => e.eventType)).toEqual([
      'email.identity.created',
      'email.identity.updated',
      'email.identity.deprovisioned',
    ]);
    expect(events.every((e) => e.channel === 'email')).toBe(true);
    expect(events[0]!.payload).toMatchObject({ identityId: id, address: created.body.address, status: 'active' });
    expect(events[1]!.payload).toMatchObject({ identityId: id, displayName: 'Support' });
    expect(events[2]!.payload).toMatchObject({ identityId: id, status: 'deprovisioning' });
    const catalog = await a.request('GET', '/api/events/catalog');
    expect(JSON.stringify(catalog.body)).toContain('email.identity.deprovisioned');
    expect(JSON.stringify(catalog.body)).toContain('webhook.created');
  });
});
