// Batched, account-scoped loaders of the compliance area (rows from the stores) for GraphQL's nested fields (one query per field per
// request, however many parents: the DataLoader plugin in src/graphql calls these with every parent's key at once).
// Each returns one entry per requested key, in the keys' order; a key of another account (or unknown) gives null
// or an empty list, never another account's row.

import { type Actor, requireScope } from '../accounts/account.service.js';
import type { DomainContext } from '../kernel/context.js';
import type { BrandFeedback } from './brand.service.js';
import { type BrandRecord, brandsIn, countBrandRows, vettingsOfBrands } from './brand.store.js';
import { campaignsWithStateIn, countCampaignRows } from './campaign.store.js';
import {
  type BrandDto,
  brandDto,
  type CampaignDto,
  campaignDto,
  numberState,
  type VettingDto,
  vettingDto,
} from './compliance.dto.js';
import type { AssignedNumberDto } from './number.service.js';
import { countNumberRows, numbersOfCampaigns } from './number.store.js';
import type { FeedbackItem } from './registry.port.js';

/** Groups `rows` by `key(row)` into lists aligned with `keys`. */
function groupBy<T>(keys: readonly string[], rows: T[], key: (row: T) => string): T[][] {
  const byKey = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = byKey.get(k);
    if (list) list.push(row);
    else byKey.set(k, [row]);
  }
  return keys.map((k) => byKey.get(k) ?? []);
}

/** Brand rows of the actor's account by id (null where not the account's). Scope: compliance. */
export async function brandRowsByIds(
  ctx: DomainContext,
  actor: Actor,
  ids: readonly string[],
): Promise<(BrandRecord | null)[]> {
  requireScope(actor, 'compliance');
  const rows = await brandsIn(ctx.db, actor.accountId, ids);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id) ?? null);
}

/** Brands (API shape) of the actor's account by id, null where not the account's. Scope: compliance. */
export async function brandsByIds(
  ctx: DomainContext,
  actor: Actor,
  ids: readonly string[],
): Promise<(BrandDto | null)[]> {
  return (await brandRowsByIds(ctx, actor, ids)).map((b) => (b ? brandDto(b) : null));
}

/** Registry feedback of one brand row (GET /compliance/brands/{id}/feedback shape). */
export function brandFeedbackOf(brand: BrandRecord): BrandFeedback {
  return {
    brandId: brand.id,
    status: brand.status,
    identityStatus: brand.identityStatus,
    category: (brand.feedback ?? []) as unknown as FeedbackItem[],
  };
}

/** Campaigns (API shape, readiness computed) of the actor's account by id, null where not the account's. */
export async function campaignsByIds(
  ctx: DomainContext,
  actor: Actor,
  ids: readonly string[],
): Promise<(CampaignDto | null)[]> {
  requireScope(actor, 'compliance');
  const rows = await campaignsWithStateIn(ctx.db, actor.accountId, ids);
  const byId = new Map(rows.map((r) => [r.id, campaignDto(r)]));
  return ids.map((id) => byId.get(id) ?? null);
}

/** Numbers assigned to each campaign (ascending), empty for campaigns not of the account. Scope: compliance. */
export async function numbersByCampaignIds(
  ctx: DomainContext,
  actor: Actor,
  campaignIds: readonly string[],
): Promise<AssignedNumberDto[][]> {
  requireScope(actor, 'compliance');
  const rows = await numbersOfCampaigns(ctx.db, actor.accountId, campaignIds);
  return groupBy(campaignIds, rows, (n) => n.campaignId!).map((list) =>
    list.map((n) => ({
      number: n.number,
      assignedAt: (n.assignedAt ?? n.createdAt).toISOString(),
      ...numberState(n),
    })),
  );
}

/** Vetting records of each brand, newest first; empty for brands not of the account. Scope: compliance. */
export async function vettingsByBrandIds(
  ctx: DomainContext,
  actor: Actor,
  brandIds: readonly string[],
): Promise<VettingDto[][]> {
  requireScope(actor, 'compliance');
  const rows = await vettingsOfBrands(ctx.db, actor.accountId, brandIds);
  return groupBy(brandIds, rows, (v) => v.brandId).map((list) => list.map(vettingDto));
}

/** How many brands the account has (a connection's `totalCount`). Scope: compliance. */
export async function countBrands(ctx: DomainContext, actor: Actor): Promise<number> {
  requireScope(actor, 'compliance');
  return countBrandRows(ctx.db, actor.accountId);
}

/** How many campaigns the account (or one of its brands) has. Scope: compliance. */
export async function countCampaigns(
  ctx: DomainContext,
  actor: Actor,
  filter: { brandId?: string } = {},
): Promise<number> {
  requireScope(actor, 'compliance');
  return countCampaignRows(ctx.db, actor.accountId, filter.brandId);
}

/** How many numbers the account has provisioned. Scope: compliance. */
export async function countNumbers(ctx: DomainContext, actor: Actor): Promise<number> {
  requireScope(actor, 'compliance');
  return countNumberRows(ctx.db, actor.accountId);
}
