import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { ManualClock } from '../../src/infra/clock.js';
import type { TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { brandBody, campaignBody } from './fixtures.js';

/** A request the fake TCR received. */
interface Received {
  method: string;
  path: string;
  authorization: string | undefined;
  body: any;
}

/**
 * A local stand-in for TCR's CSP API, written from its published description (php-campaignregistry docs/Api/*.md):
 * basic auth on every call (401 otherwise), `POST /brand/nonBlocking` → Brand with `B` + 6 chars,
 * `POST /campaignBuilder` → Campaign with `C` + 6 chars, `GET /campaign/{id}/operationStatus` → MNO id → status,
 * and 204 for nudges and deletes. `failNext` makes the next calls answer 503 (a registry outage).
 */
class FakeTcr {
  readonly received: Received[] = [];
  readonly operationStatus = new Map<string, Record<string, string>>();
  failNext = 0;
  refuseNext = 0;
  #server: Server;
  constructor(
    readonly key: string,
    readonly secret: string,
  ) {
    this.#server = createServer((req, res) => void this.#handle(req, res));
  }
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v2`;
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
  async #handle(req: IncomingMessage, res: import('node:http').ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '').replace(/^\/v2/, '');
    const body = text ? JSON.parse(text) : undefined;
    this.received.push({ method: req.method ?? '', path, authorization: req.headers.authorization, body });
    const send = (status: number, json?: unknown) => {
      res.writeHead(status, json === undefined ? {} : { 'content-type': 'application/json' });
      res.end(json === undefined ? undefined : JSON.stringify(json));
    };
    const expected = `Basic ${Buffer.from(`${this.key}:${this.secret}`).toString('base64')}`;
    if (req.headers.authorization !== expected) return send(401, { code: 401, description: 'Unauthorized' });
    if (this.failNext > 0) {
      this.failNext--;
      return send(503, { code: 503, description: 'Service Unavailable' });
    }
    if (this.refuseNext > 0) {
      this.refuseNext--;
      return send(400, [{ code: 502, field: 'ein', description: 'Invalid EIN' }]);
    }
    const id = (prefix: string) => `${prefix}${randomBytes(3).toString('hex').toUpperCase()}`;
    if (req.method === 'POST' && path === '/brand/nonBlocking') {
      return send(200, {
        ...body,
        brandId: id('B'),
        identityStatus: 'UNVERIFIED',
        createDate: new Date().toISOString(),
      });
    }
    if (req.method === 'POST' && path === '/campaignBuilder') {
      return send(200, { ...body, campaignId: id('C'), status: 'ACTIVE', createDate: new Date().toISOString() });
    }
    const op = /^\/campaign\/(C\w+)\/operationStatus$/.exec(path);
    if (req.method === 'GET' && op) return send(200, this.operationStatus.get(op[1]!) ?? {});
    if (req.method === 'POST' && /^\/brand\/B\w+\/externalVetting$/.test(path)) {
      return send(200, { ...body, vettingId: id('V'), vettingStatus: 'PENDING' });
    }
    return send(204);
  }
  calls(method: string, path: string | RegExp) {
    return this.received.filter(
      (r) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path)),
    );
  }
}

const KEY = 'csp-key-7f3a';
const SECRET = 'csp-secret-91bd';
const WEBHOOK_SECRET = 'tcr-webhook-secret-0123456789';

let tcr: FakeTcr;
const clock = new ManualClock(new Date('2026-11-22T06:00:00.000Z'));
const it = appTest(async ({ onCleanup }) => {
  tcr = new FakeTcr(KEY, SECRET);
  const url = await tcr.start();
  onCleanup(() => tcr.close());
  return {
    clock,
    env: {
      REGISTRY: 'tcr',
      TCR_API_URL: url,
      TCR_API_KEY: KEY,
      TCR_API_SECRET: SECRET,
      TCR_WEBHOOK_SECRET: WEBHOOK_SECRET,
    },
  };
});

describe('TCR registry adapter against a local fake of the CSP API (REGISTRY=tcr)', () => {
  /** The file's app, for the helpers below (tests get it as the `t` fixture). */
  let t: TestApp;
  it.beforeAll(({ t: app }) => {
    t = app;
  });

  const hook = async (body: unknown, secret: string | null = WEBHOOK_SECRET) => {
    const res = await fetch(`${t.url}/compliance/registry/tcr/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(secret ? { 'x-tcr-webhook-secret': secret } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const auth = `Basic ${Buffer.from(`${KEY}:${SECRET}`).toString('base64')}`;

  /** Registers a brand through REST, lets the job call TCR, and verifies it through the webhook. */
  const verifiedBrand = async (a: Awaited<ReturnType<TestApp['newAccount']>>, ein: string) => {
    const brand = (await a.request('POST', '/compliance/brands', brandBody({ ein }))).body;
    await t.drain();
    const call = tcr.calls('POST', '/brand/nonBlocking').find((c) => c.body.referenceId === brand.id)!;
    const tcrBrandId = (await t.app.ctx.db.tcrRef.findFirstOrThrow({ where: { localId: brand.id } })).tcrId;
    await hook({ eventType: 'BRAND_IDENTITY_STATUS_UPDATE', brandId: tcrBrandId, brandIdentityStatus: 'VERIFIED' });
    return { brand, call, tcrBrandId };
  };

  it('refuses REGISTRY=tcr without its settings, naming each missing one', () => {
    expect(() => loadConfig({ REGISTRY: 'tcr', TCR_API_KEY: 'k' })).toThrow(ConfigError);
    try {
      loadConfig({ REGISTRY: 'tcr', TCR_API_KEY: 'k' });
    } catch (err) {
      expect((err as ConfigError).problems).toEqual([
        'TCR_API_URL: required when REGISTRY=tcr',
        'TCR_API_SECRET: required when REGISTRY=tcr',
        'TCR_WEBHOOK_SECRET: required when REGISTRY=tcr',
      ]);
    }
    expect(loadConfig({}).REGISTRY).toBe('sandbox');
  });

  it('registers a brand at TCR with basic auth and the mapped fields; the webhook verifies it, once', async ({ a }) => {
    const created = await a.request('POST', '/compliance/brands', brandBody({ ein: '31-7000001' }));
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(tcr.calls('POST', '/brand/nonBlocking').filter((c) => c.body.referenceId === id)).toHaveLength(0);
    await t.drain();
    const [call, ...more] = tcr.calls('POST', '/brand/nonBlocking').filter((c) => c.body.referenceId === id);
    expect(more).toHaveLength(0);
    expect(call!.authorization).toBe(auth);
    expect(call!.body).toMatchObject({
      entityType: 'PRIVATE_PROFIT',
      displayName: 'Acme Widgets LLC',
      companyName: 'Acme Widgets LLC',
      ein: '31-7000001',
      einIssuingCountry: 'US',
      country: 'US',
      vertical: 'RETAIL',
      website: 'https://acme.example',
      email: 'compliance@acme.example',
      phone: '+14155550100',
      referenceId: id,
      mock: false,
    });
    const tcrBrandId = (await t.app.ctx.db.tcrRef.findFirstOrThrow({ where: { entity: 'brand', localId: id } })).tcrId;
    expect(tcrBrandId).toMatch(/^B[0-9A-F]{6}$/);

    // No sandbox behind it: time alone decides nothing.
    clock.advance(3_600_000);
    await t.drain();
    expect((await a.request('GET', `/compliance/brands/${id}`)).body.status).toBe('PENDING');

    const event = { eventType: 'BRAND_IDENTITY_STATUS_UPDATE', brandId: tcrBrandId, brandIdentityStatus: 'VERIFIED' };
    const wrong = await hook(event, 'not-the-secret-at-all');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('UNAUTHENTICATED');
    expect((await hook(event, null)).status).toBe(401);
    expect((await a.request('GET', `/compliance/brands/${id}`)).body.status).toBe('PENDING');
    expect((await a.request('GET', `/compliance/brands/${id}/history`)).body.transitions).toHaveLength(1);

    const ok = await hook(event);
    expect(ok).toEqual({ status: 200, body: { results: [{ eventType: event.eventType, outcome: 'applied' }] } });
    expect((await a.request('GET', `/compliance/brands/${id}`)).body).toMatchObject({
      status: 'ACTIVE',
      identityStatus: 'VERIFIED',
    });
    // TCR may repeat a notification: the second changes nothing and records nothing.
    expect((await hook(event)).body.results[0].outcome).toBe('unchanged');
    const history = (await a.request('GET', `/compliance/brands/${id}/history`)).body.transitions;
    expect(history.map((h: any) => `${h.from}→${h.to}:${h.cause}`)).toEqual([
      'null→PENDING:REGISTERED',
      'PENDING→ACTIVE:REGISTRY_DECISION',
    ]);
    const events = await t.app.ctx.db.event.findMany({ where: { accountId: a.accountId }, orderBy: { id: 'asc' } });
    expect(events.map((e) => e.eventType)).toEqual(['10dlc.brand.registered', '10dlc.brand.status_changed']);

    // Unknown brands and unmapped types are acknowledged, not applied; a body that is not an event is a 400.
    expect((await hook({ ...event, brandId: 'BZZZZZZ' })).body.results[0].outcome).toBe('unknown');
    expect((await hook({ eventType: 'CSP_ACTIVE' })).body.results[0].outcome).toBe('ignored');
    const bad = await hook({ brandId: tcrBrandId });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('an UNVERIFIED identity fails the brand with TCR’s description as feedback', async ({ a }) => {
    const brand = (await a.request('POST', '/compliance/brands', brandBody({ ein: '31-7000002' }))).body;
    await t.drain();
    const tcrBrandId = (await t.app.ctx.db.tcrRef.findFirstOrThrow({ where: { localId: brand.id } })).tcrId;
    const res = await hook({
      eventType: 'BRAND_IDENTITY_STATUS_UPDATE',
      brandId: tcrBrandId,
      brandIdentityStatus: 'UNVERIFIED',
      description: 'EIN does not match the legal name',
    });
    expect(res.body.results[0].outcome).toBe('applied');
    const after = (await a.request('GET', `/compliance/brands/${brand.id}`)).body;
    expect(after).toMatchObject({ status: 'FAILED', identityStatus: 'UNVERIFIED' });
  });

  it('submits a campaign through the campaign builder after a 503 (retried), then MNO events approve each carrier', async ({
    a,
  }) => {
    const { brand, tcrBrandId } = await verifiedBrand(a, '31-7000003');
    tcr.failNext = 1;
    const created = await a.request('POST', '/compliance/campaigns', campaignBody(brand.id));
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await t.drain();
    const row = await t.app.ctx.db.tcrSubmission.findFirstOrThrow({ where: { campaignId: id } });
    expect(row).toMatchObject({ status: 'pending', attempts: 1, responseCode: 503 });
    expect(await t.app.ctx.db.tcrRef.findFirst({ where: { localId: id } })).toBeNull();
    clock.advance(30_000); // TCR_SCHEDULE: the second attempt after 30 s
    await t.drain();
    const submits = tcr.calls('POST', '/campaignBuilder').filter((c) => c.body.referenceId === id);
    expect(submits).toHaveLength(2);
    expect(submits[1]!.authorization).toBe(auth);
    expect(submits[1]!.body).toMatchObject({
      brandId: tcrBrandId,
      usecase: 'CUSTOMER_CARE',
      description: campaignBody(brand.id).description,
      sample1: campaignBody(brand.id).sampleMessages[0],
      sample2: campaignBody(brand.id).sampleMessages[1],
      subscriberOptin: true,
      subscriberOptout: true,
      subscriberHelp: true,
      numberPool: false,
      mnoIds: [10017, 10035, 10037, 10038],
      referenceId: id,
    });
    expect(await t.app.ctx.db.tcrSubmission.findFirstOrThrow({ where: { id: row.id } })).toMatchObject({
      status: 'done',
      attempts: 2,
    });
    const tcrCampaignId = (await t.app.ctx.db.tcrRef.findFirstOrThrow({ where: { localId: id } })).tcrId;
    expect(tcrCampaignId).toMatch(/^C[0-9A-F]{6}$/);

    for (const mnoId of [10017, 10035, 10037]) {
      const res = await hook({ eventType: 'MNO_CAMPAIGN_OPERATION_APPROVED', campaignId: tcrCampaignId, mnoId });
      expect(res.body.results[0].outcome).toBe('applied');
    }
    expect((await a.request('GET', `/compliance/campaigns/${id}`)).body.status).toBe('PENDING');
    // REVIEW is our PENDING; the last carrier's approval comes as a batch (TCR may send several events).
    const batch = await hook([
      { eventType: 'MNO_CAMPAIGN_OPERATION_REVIEW', campaignId: tcrCampaignId, mnoId: 10038 },
      { eventType: 'MNO_CAMPAIGN_OPERATION_APPROVED', campaignId: tcrCampaignId, mnoId: '10038' },
    ]);
    expect(batch.body.results.map((r: any) => r.outcome)).toEqual(['unchanged', 'applied']);
    const carriers = (await a.request('GET', `/compliance/campaigns/${id}/carriers`)).body.carriers;
    expect(carriers.map((c: any) => [c.networkId, c.status])).toEqual([
      [10017, 'APPROVED'],
      [10035, 'APPROVED'],
      [10037, 'APPROVED'],
      [10038, 'APPROVED'],
    ]);
    expect((await a.request('GET', `/compliance/campaigns/${id}`)).body.status).toBe('APPROVED');
  });

  it('an MNO event without mnoId fetches the operation status from TCR; a nudge reaches TCR', async ({ a }) => {
    const { brand } = await verifiedBrand(a, '31-7000004');
    const id = (await a.request('POST', '/compliance/campaigns', campaignBody(brand.id))).body.id as string;
    await t.drain();
    const tcrCampaignId = (await t.app.ctx.db.tcrRef.findFirstOrThrow({ where: { localId: id } })).tcrId;
    tcr.operationStatus.set(tcrCampaignId, { 10017: 'REJECTED', 10035: 'APPROVED', 10037: 'REVIEW', 10038: 'REVIEW' });
    const res = await hook({
      eventType: 'MNO_CAMPAIGN_OPERATION_REJECTED',
      campaignId: tcrCampaignId,
      description: 'Samples lack opt-out language',
    });
    expect(res.body.results[0].outcome).toBe('queued');
    await t.drain();
    expect(tcr.calls('GET', `/campaign/${tcrCampaignId}/operationStatus`)).toHaveLength(1);
    const carriers = (await a.request('GET', `/compliance/campaigns/${id}/carriers`)).body.carriers;
    expect(Object.fromEntries(carriers.map((c: any) => [c.networkId, c.status]))).toEqual({
      10017: 'REJECTED',
      10035: 'APPROVED',
      10037: 'PENDING',
      10038: 'PENDING',
    });

    const nudge = await a.request('POST', `/compliance/campaigns/${id}/nudge`, { nudgeIntent: 'REVIEW' });
    expect(nudge.status).toBeLessThan(300);
    await t.drain();
    const [sent] = tcr.calls('POST', `/campaign/${tcrCampaignId}/nudge`);
    expect(sent).toMatchObject({ authorization: auth, body: { nudgeIntent: 'REVIEW' } });
  });

  it('a registration TCR refuses for good fails the brand with TCR’s answer instead of leaving it PENDING', async ({
    a,
  }) => {
    tcr.refuseNext = 1;
    const brand = (await a.request('POST', '/compliance/brands', brandBody({ ein: '31-7000005' }))).body;
    await t.drain();
    const row = await t.app.ctx.db.tcrSubmission.findFirstOrThrow({ where: { brandId: brand.id } });
    expect(row).toMatchObject({ status: 'failed', attempts: 1, responseCode: 400 });
    const after = (await a.request('GET', `/compliance/brands/${brand.id}`)).body;
    expect(after).toMatchObject({ status: 'FAILED', identityStatus: 'UNVERIFIED' });
    const feedback = (await a.request('GET', `/compliance/brands/${brand.id}/feedback`)).body;
    expect(feedback.category).toMatchObject([{ id: 'OTHERS', description: expect.stringContaining('Invalid EIN') }]);

    // A campaign TCR refuses for good: its pending carriers are rejected with TCR_REFUSED; deletion reaches TCR.
    const { brand: ok } = await verifiedBrand(a, '31-7000008');
    tcr.refuseNext = 1;
    const id = (await a.request('POST', '/compliance/campaigns', campaignBody(ok.id))).body.id as string;
    await t.drain();
    const carriers = (await a.request('GET', `/compliance/campaigns/${id}/carriers`)).body.carriers;
    expect(carriers.map((c: any) => [c.status, c.rejectionCode])).toEqual(Array(4).fill(['REJECTED', 'TCR_REFUSED']));
    expect((await a.request('GET', `/compliance/campaigns/${id}`)).body.status).toBe('REJECTED');
  });

  it('deleting a campaign deactivates it at TCR', async ({ a }) => {
    const { brand } = await verifiedBrand(a, '31-7000009');
    const id = (await a.request('POST', '/compliance/campaigns', campaignBody(brand.id))).body.id as string;
    await t.drain();
    const tcrCampaignId = (await t.app.ctx.db.tcrRef.findFirstOrThrow({ where: { localId: id } })).tcrId;
    expect((await a.request('DELETE', `/compliance/campaigns/${id}`)).status).toBe(200);
    await t.drain();
    expect(tcr.calls('DELETE', `/campaign/${tcrCampaignId}`)).toMatchObject([{ authorization: auth }]);
  });

  it('orders an external vetting at TCR; EVP_REPORT_SCORE completes it; deleting the brand deletes it at TCR', async ({
    a,
  }) => {
    const { brand, tcrBrandId } = await verifiedBrand(a, '31-7000006');
    const applied = await a.request('POST', `/compliance/brands/${brand.id}/vetting/apply`);
    expect(applied.status).toBeLessThan(300);
    await t.drain();
    const [order] = tcr.calls('POST', `/brand/${tcrBrandId}/externalVetting`);
    expect(order).toMatchObject({
      authorization: auth,
      body: { evpId: expect.any(String), vettingClass: expect.any(String) },
    });
    const vettingRef = await t.app.ctx.db.tcrRef.findFirstOrThrow({
      where: { entity: 'vetting', accountId: a.accountId },
    });
    const res = await hook({
      eventType: 'EVP_REPORT_SCORE',
      brandId: tcrBrandId,
      vettingId: vettingRef.tcrId,
      vettingScore: 85,
    });
    expect(res.body.results[0].outcome).toBe('applied');
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).body.identityStatus).toBe('VETTED_VERIFIED');
    const vetting = await t.app.ctx.db.vetting.findUniqueOrThrow({ where: { id: vettingRef.localId } });
    expect(vetting).toMatchObject({ status: 'APPROVED', vettingScore: 85 });
    expect(
      (await hook({ eventType: 'EVP_REPORT_SCORE', brandId: tcrBrandId, vettingId: vettingRef.tcrId })).body.results[0]
        .outcome,
    ).toBe('unchanged');

    expect((await a.request('DELETE', `/compliance/brands/${brand.id}`)).status).toBe(200);
    await t.drain();
    expect(tcr.calls('DELETE', `/brand/${tcrBrandId}`)).toMatchObject([{ authorization: auth }]);
  });

  it('an event that overtakes the recorded TCR id is matched by brandReferenceId (our id), not lost', async ({ a }) => {
    const brand = (await a.request('POST', '/compliance/brands', brandBody({ ein: '31-7000007' }))).body;
    // Not drained: the registration job has not recorded TCR's id yet.
    const res = await hook({
      eventType: 'BRAND_IDENTITY_STATUS_UPDATE',
      brandId: 'B9Z9Z9Z',
      brandReferenceId: brand.id,
      brandIdentityStatus: 'VERIFIED',
    });
    expect(res.body.results[0].outcome).toBe('applied');
    expect((await a.request('GET', `/compliance/brands/${brand.id}`)).body.status).toBe('ACTIVE');
    await t.drain();
  });
});
