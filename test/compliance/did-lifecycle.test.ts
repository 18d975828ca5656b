import { afterAll, beforeAll, describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import type { TestAccount } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { openSse } from '../helpers/sse.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { registerWebhook } from '../webhooks/helpers.js';
import { activeBrand, campaignBody, freshNumbers } from './fixtures.js';

const WARMUP = 60_000;
const COOLDOWN = 30_000;

const clock = new ManualClock();
const it = appTest({ clock, env: { DID_WARMUP_MS: String(WARMUP), DID_COOLDOWN_MS: String(COOLDOWN) } });

describe('number lifecycle: warming → active, cooling → unassigned (spec 3, issue 14)', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver(() => clock.now());
  });
  afterAll(async () => {
    await receiver.close();
  });

  async function numberOf(a: TestAccount, n: string) {
    const list = await a.request('GET', '/api/numbers?limit=200');
    return list.body.numbers.find((x: { number: string }) => x.number === n);
  }

  it('walks warming → active after assignment and approval, cooling → unassigned after removal: one did.state_changed per step on the stream and a webhook', async ({
    t,
    a,
  }) => {
    const hook = await registerWebhook(a, receiver, ['did.state_changed']);
    const sse = openSse(`${t.url}/api/events?token=${a.apiKey}&channels=did`, ['did.state_changed']);
    await sse.opened();
    const [n] = freshNumbers(1) as [string];
    expect((await a.request('POST', '/api/numbers', { numbers: [n] })).body.numbers[0]).toMatchObject({
      state: 'unassigned',
      assignmentStatus: null,
    });
    const brand = await activeBrand(t, a);
    const campaign = (await a.request('POST', '/compliance/campaigns', campaignBody(brand.id))).body;

    // Assigned before approval: linked, waiting in PENDING_ASSIGNMENT, not warming yet.
    expect(
      (await a.request('POST', `/compliance/campaigns/${campaign.id}/numbers/assign`, { numbers: [n] })).status,
    ).toBe(200);
    expect(await numberOf(a, n)).toMatchObject({
      campaignId: campaign.id,
      state: 'unassigned',
      assignmentStatus: 'PENDING_ASSIGNMENT',
    });

    clock.advance(40_000); // every carrier decides (approved)
    await t.drain();
    const warming = await numberOf(a, n);
    expect(warming).toMatchObject({ state: 'warming', assignmentStatus: 'ASSIGNED' });
    expect(Date.parse(warming.nextStateAt) - Date.parse(warming.stateChangedAt)).toBe(WARMUP);
    const mapping = await a.request('GET', '/compliance/did-mapping');
    expect(mapping.body.find((m: { number: string }) => m.number === n)).toMatchObject({
      campaignStatus: 'APPROVED',
      state: 'warming',
      assignmentStatus: 'ASSIGNED',
    });

    clock.advance(WARMUP - 1);
    await t.drain();
    expect((await numberOf(a, n)).state).toBe('warming');
    clock.advance(1);
    await t.drain();
    expect(await numberOf(a, n)).toMatchObject({ state: 'active', assignmentStatus: 'ASSIGNED', nextStateAt: null });
    const listed = await a.request('GET', `/compliance/campaigns/${campaign.id}/numbers`);
    expect(listed.body.numbers[0]).toMatchObject({ number: n, state: 'active', assignmentStatus: 'ASSIGNED' });

    expect(
      (await a.request('POST', `/compliance/campaigns/${campaign.id}/numbers/remove`, { numbers: [n] })).status,
    ).toBe(200);
    expect(await numberOf(a, n)).toMatchObject({
      campaignId: null,
      state: 'cooling',
      assignmentStatus: 'PENDING_UNASSIGNMENT',
    });
    const again = await a.request('POST', `/compliance/campaigns/${campaign.id}/numbers/assign`, { numbers: [n] });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'NUMBER_COOLING', field: 'numbers.0' });
    clock.advance(COOLDOWN);
    await t.drain();
    expect(await numberOf(a, n)).toMatchObject({ campaignId: null, state: 'unassigned', assignmentStatus: null });

    const expected = [
      ['unassigned', 'warming', 'CAMPAIGN_APPROVED'],
      ['warming', 'active', 'WARMUP_COMPLETE'],
      ['active', 'cooling', 'REMOVED'],
      ['cooling', 'unassigned', 'COOLDOWN_COMPLETE'],
    ];
    await sse.waitFor((m) => m.length >= 4);
    const streamed = sse.messages.map((m) => m.data.payload);
    expect(streamed.map((p) => [p.previousState, p.state, p.cause])).toEqual(expected);
    expect(streamed.every((p) => p.number === n && p.campaignId === campaign.id)).toBe(true);
    const delivered = await receiver.waitFor(hook.path, 4);
    expect(delivered.every((d) => d.signatureValid && d.body.eventType === 'did.state_changed')).toBe(true);
    expect(delivered.map((d) => [d.body.payload.previousState, d.body.payload.state, d.body.payload.cause])).toEqual(
      expected,
    );
    sse.close();
  });

  it('fails a pending assignment on a rejected campaign, warms on an approved one, cools on campaign deletion', async ({
    t,
    a,
  }) => {
    const [x, y] = freshNumbers(2) as [string, string];
    await a.request('POST', '/api/numbers', { numbers: [x, y] });
    const brand = await activeBrand(t, a);
    const rejected = (
      await a.request('POST', '/compliance/campaigns', campaignBody(brand.id, { subscriberOptIn: false }))
    ).body;
    await a.request('POST', `/compliance/campaigns/${rejected.id}/numbers/assign`, { numbers: [x] });
    clock.advance(40_000);
    await t.drain();
    expect(await numberOf(a, x)).toMatchObject({
      state: 'unassigned',
      assignmentStatus: 'FAILED_ASSIGNMENT',
      failureReasons: [expect.objectContaining({ code: 'CAMPAIGN_REJECTED' })],
    });

    const approved = (await a.request('POST', '/compliance/campaigns', campaignBody(brand.id))).body;
    clock.advance(40_000);
    await t.drain();
    await a.request('POST', `/compliance/campaigns/${approved.id}/numbers/assign`, { numbers: [y] });
    expect(await numberOf(a, y)).toMatchObject({ state: 'warming', assignmentStatus: 'ASSIGNED' });
    expect((await a.request('DELETE', `/compliance/campaigns/${approved.id}`)).status).toBe(200);
    expect(await numberOf(a, y)).toMatchObject({ campaignId: null, state: 'cooling' });
    clock.advance(COOLDOWN);
    await t.drain();
    expect(await numberOf(a, y)).toMatchObject({ state: 'unassigned', assignmentStatus: null });
    const history = await a.request('GET', '/api/events/history?channels=did');
    const changes = history.body.events
      .filter(
        (e: { eventType: string; payload: { number: string } }) =>
          e.eventType === 'did.state_changed' && e.payload.number === y,
      )
      .map((e: { payload: { state: string; cause: string } }) => `${e.payload.state}:${e.payload.cause}`);
    expect(changes).toEqual(['warming:ASSIGNED', 'cooling:CAMPAIGN_DELETED', 'unassigned:COOLDOWN_COMPLETE']);
  });

  it('ingest refuses did.state_changed with an unknown state (400 INVALID_DID_STATE) and accepts the four states', async ({
    a,
  }) => {
    const bad = await a.request('POST', '/api/events', {
      eventType: 'did.state_changed',
      payload: { number: '+14155550100', state: 'bogus', previousState: 'hot' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual([
      'payload.previousState:INVALID_DID_STATE',
      'payload.state:INVALID_DID_STATE',
    ]);
    const missing = await a.request('POST', '/api/events', { eventType: 'did.state_changed', payload: {} });
    expect(missing.status).toBe(400);
    const ok = await a.request('POST', '/api/events', {
      eventType: 'did.state_changed',
      payload: { number: '+14155550100', state: 'cooling', previousState: 'active' },
    });
    expect(ok.status).toBeLessThan(300);
  });
});
