import { randomInt } from 'node:crypto';
import { expect } from 'vitest';
import { isE164 } from '../../src/domain/compliance/compliance.schemas.js';
import type { ManualClock } from '../../src/infra/clock.js';
import type { TestAccount, TestApp } from '../helpers/app.js';

/** A valid registration body; `ein` defaults to one that the sandbox verifies. */
export function brandBody(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Acme Widgets LLC',
    ein: '12-3456789',
    vertical: 'RETAIL',
    entityType: 'PRIVATE_PROFIT',
    website: 'https://acme.example',
    email: 'compliance@acme.example',
    phone: '+14155550100',
    ...overrides,
  };
}

/** A valid campaign body for `brandId`. */
export function campaignBody(brandId: string, overrides: Record<string, unknown> = {}) {
  return {
    brandId,
    usecase: 'CUSTOMER_CARE',
    description: 'Order updates and support conversations with customers who contacted Acme.',
    sampleMessages: [
      'Acme: your order #1234 has shipped. Reply STOP to opt out.',
      'Acme support: we received your request and will reply within 1 hour.',
    ],
    subscriberOptIn: true,
    subscriberHelp: true,
    numberPool: false,
    ...overrides,
  };
}

/** Fresh valid US numbers that no earlier run provisioned (the table persists on PostgreSQL). */
export function freshNumbers(count: number): string[] {
  const out = new Set<string>();
  while (out.size < count) {
    const n = `+1415${randomInt(2, 10)}${String(randomInt(0, 1_000_000)).padStart(6, '0')}`;
    if (isE164(n)) out.add(n);
  }
  return [...out];
}

/** Registers a brand and runs the sandbox until it is ACTIVE. */
export async function activeBrand(t: TestApp, a: TestAccount, overrides: Record<string, unknown> = {}) {
  const res = await a.request('POST', '/compliance/brands', brandBody(overrides));
  expect(res.status).toBe(201);
  (t.clock as ManualClock).advance(5_000);
  await t.drain();
  const brand = await a.request('GET', `/compliance/brands/${res.body.id}`);
  expect(brand.body.status).toBe('ACTIVE');
  return brand.body as { id: string; status: string; identityStatus: string };
}

/** Creates a campaign under a new ACTIVE brand. */
export async function newCampaign(t: TestApp, a: TestAccount, overrides: Record<string, unknown> = {}) {
  const brand = await activeBrand(t, a);
  const res = await a.request('POST', '/compliance/campaigns', campaignBody(brand.id, overrides));
  expect(res.status).toBe(201);
  return { brand, campaign: res.body as { id: string; status: string } };
}

/** The details of an error body as `field:code` strings, sorted. */
export function detailCodes(body: { error: { details?: { field: string; code: string }[] } }): string[] {
  return (body.error.details ?? []).map((d) => `${d.field}:${d.code}`).sort();
}
