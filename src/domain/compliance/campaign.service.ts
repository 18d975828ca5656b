import { type Actor, requireScope } from '../accounts/account.service.js';
import { NotFoundError, UnprocessableError, ValidationError } from '../errors.js';
import type { Emit } from '../events/event-log.js';
import type { DomainContext } from '../kernel/context.js';
import type { Db, Tx } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';
import { decodeCursor, encodeCursor, everyItem, type KeysetWindow, keysetPage } from '../paging.js';
import { findOwnBrand, qualification } from './brand.service.js';
import { carrierName } from './campaign.rules.js';
import {
  type CampaignRecord,
  campaignPage,
  campaignWithState,
  carriersOf,
  deleteCampaignRow,
  findCampaign,
  insertCampaign,
  insertCarriers,
  updateCampaignFields,
  updateCarrier,
} from './campaign.store.js';
import { type CampaignDto, type CarrierDto, campaignDto, carrierDto } from './compliance.dto.js';
import { CARRIERS } from './compliance.enums.js';
import {
  type CampaignInput,
  type CampaignListQuery,
  type CampaignUpdateInput,
  NUDGE_DEFAULTS,
  type NudgeInput,
  subUsecaseIssues,
} from './compliance.schemas.js';
import { startCooldown } from './did-lifecycle.js';
import { numbersOfCampaign } from './number.store.js';
import { refreshCampaignStatus } from './registry.decisions.js';

/** Loads a campaign of the actor's account. @throws NotFoundError (404), also for another account's campaign. */
export async function findOwnCampaign(db: Db | Tx, actor: Actor, id: string): Promise<CampaignRecord> {
  const campaign = await findCampaign(db, actor.accountId, id);
  if (!campaign) throw new NotFoundError('campaign', id);
  return campaign;
}

async function loadDto(db: Db | Tx, id: string): Promise<CampaignDto> {
  return campaignDto(await campaignWithState(db, id));
}

/** Puts `networkIds` back to PENDING with the registry's expected decision times; emits carrier changes. */
async function markCarriersPending(
  tx: Tx,
  emit: Emit,
  campaign: CampaignRecord,
  due: Map<number, Date>,
  now: Date,
  previous: Map<number, string>,
  cause: 'RESUBMITTED' | 'APPEAL',
): Promise<void> {
  for (const [networkId, dueAt] of due) {
    await updateCarrier(
      tx,
      campaign.id,
      networkId,
      { status: 'PENDING', approvedAt: null, rejectionReason: null, rejectionCode: null, estimatedDecisionAt: dueAt },
      now,
    );
    const before = previous.get(networkId);
    if (before !== 'PENDING') {
      await emit(campaign.accountId, '10dlc.carrier.status_changed', {
        campaignId: campaign.id,
        networkId,
        carrier: carrierName(networkId),
        previousStatus: before ?? null,
        status: 'PENDING',
        reason: null,
        cause,
      });
    }
  }
}

/**
 * POST /compliance/campaigns (spec 4.2): creates a campaign in PENDING with one PENDING review row per carrier
 * (TCR network ids), submitted to the registry. Emits 10dlc.campaign.created.
 * `data` is parsed at the door by `campaignInput`.
 * @throws NotFoundError (field brandId) for an unknown brand; UnprocessableError 422
 *   BRAND_NOT_ACTIVE unless the brand is ACTIVE ("registered and vetted", spec 1), 422 USECASE_NOT_QUALIFIED when
 *   the use case needs an external vetting the brand lacks (see qualify).
 */
export async function createCampaign(ctx: DomainContext, actor: Actor, data: CampaignInput): Promise<CampaignDto> {
  requireScope(actor, 'compliance');
  const now = ctx.clock.now();
  return ctx.events.transaction(async (tx, emit) => {
    const brand = await findOwnBrand(tx, actor, data.brandId, 'brandId');
    if (brand.status !== 'ACTIVE') {
      throw new UnprocessableError(
        'BRAND_NOT_ACTIVE',
        `The brand is ${brand.status}; campaigns need an ACTIVE brand.`,
        'brandId',
      );
    }
    const q = qualification(brand).usecases.find((u) => u.usecase === data.usecase);
    if (!q?.qualifies) {
      throw new UnprocessableError(
        'USECASE_NOT_QUALIFIED',
        `${data.usecase}: ${q?.reason ?? 'not available'}`,
        'usecase',
      );
    }
    const campaign = await insertCampaign(tx, {
      id: uuidv7(),
      accountId: actor.accountId,
      ...data,
      status: 'PENDING',
      createdAt: now,
      updatedAt: now,
    });
    const due = await ctx.registry.submitCampaign(
      tx,
      campaign,
      CARRIERS.map((c) => c.networkId),
    );
    await insertCarriers(
      tx,
      CARRIERS.map((c) => ({
        campaignId: campaign.id,
        networkId: c.networkId,
        carrier: c.name,
        status: 'PENDING',
        estimatedDecisionAt: due.get(c.networkId) ?? null,
        updatedAt: now,
      })),
    );
    await emit(actor.accountId, '10dlc.campaign.created', {
      campaignId: campaign.id,
      brandId: campaign.brandId,
      usecase: campaign.usecase,
      status: campaign.status,
    });
    return loadDto(tx, campaign.id);
  });
}

/** Campaigns of the account in a keyset window, ascending by id (creation order). */
export async function pageCampaigns(
  ctx: DomainContext,
  actor: Actor,
  window: KeysetWindow,
  filter: { brandId?: string } = {},
): Promise<CampaignDto[]> {
  requireScope(actor, 'compliance');
  const rows = await campaignPage(ctx.db, actor.accountId, window, filter.brandId);
  return rows.map(campaignDto);
}

/**
 * GET /compliance/campaigns: `{campaigns, nextCursor}`, oldest first, `?limit` (1–200, default 50), `?cursor`,
 * optionally only one brand's (`?brandId`; an unknown brand gives an empty list).
 */
export async function listCampaigns(
  ctx: DomainContext,
  actor: Actor,
  q: CampaignListQuery,
): Promise<{ campaigns: CampaignDto[]; nextCursor: string | null }> {
  const after = decodeCursor(q.cursor);
  const page = await keysetPage(q.limit ?? 50, (limit) => pageCampaigns(ctx, actor, { after, limit }, q));
  return { campaigns: page.items, nextCursor: page.last ? encodeCursor(page.last.id) : null };
}

/**
 * GET /compliance/campaigns without `limit` (spec 4.2: all campaigns): every campaign (of `q.brandId` when given)
 * after `q.cursor`, oldest first, in chunks of STREAM_CHUNK (never held whole).
 * @throws ForbiddenError; BadRequestError INVALID_CURSOR (both before the first chunk).
 */
export function allCampaigns(ctx: DomainContext, actor: Actor, q: CampaignListQuery): AsyncGenerator<CampaignDto[]> {
  requireScope(actor, 'compliance');
  return everyItem(
    decodeCursor(q.cursor),
    (w) => pageCampaigns(ctx, actor, w, q),
    (c) => c.id,
  );
}

/** GET /compliance/campaigns/{id}: the campaign with carriers, `sendable` and `blockingReasons`. @throws NotFoundError. */
export async function getCampaign(ctx: DomainContext, actor: Actor, id: string): Promise<CampaignDto> {
  requireScope(actor, 'compliance');
  await findOwnCampaign(ctx.db, actor, id);
  return loadDto(ctx.db, id);
}

/**
 * Fields whose change sends a campaign back to carrier review (TCR: content and consent changes are re-reviewed):
 * everything a carrier reviews, i.e. every campaign field except numberPool.
 */
export const REVIEW_FIELDS = [
  'description',
  'sampleMessages',
  'subscriberOptIn',
  'subscriberHelp',
  'messageFlow',
  'helpMessage',
  'optinMessage',
  'optoutMessage',
  'helpKeywords',
  'optinKeywords',
  'optoutKeywords',
  'embeddedLink',
  'embeddedPhone',
  'ageGated',
  'directLending',
  'affiliateMarketing',
  'subUsecases',
  'privacyPolicyLink',
  'termsAndConditionsLink',
] as const;

/**
 * PUT /compliance/campaigns/{id}: changes any of description, sampleMessages, subscriberOptIn, subscriberHelp,
 * numberPool (fields left out keep their value). A change of a {@link REVIEW_FIELDS} field puts every carrier back
 * to PENDING with a new review schedule (carrier re-review), so the campaign returns to PENDING. Emits
 * 10dlc.campaign.updated (`changedFields`, `carrierReview`) and the resulting carrier/campaign status changes.
 * `data` is parsed at the door by `campaignUpdateInput`.
 * @throws ValidationError for sub-use cases the campaign's use case does not allow; NotFoundError; UnprocessableError
 *   422 IMMUTABLE_FIELD when brandId or usecase differ.
 */
export async function updateCampaign(
  ctx: DomainContext,
  actor: Actor,
  id: string,
  data: CampaignUpdateInput,
): Promise<CampaignDto> {
  requireScope(actor, 'compliance');
  const now = ctx.clock.now();
  return ctx.events.transaction(async (tx, emit) => {
    const current = await findOwnCampaign(tx, actor, id);
    for (const field of ['brandId', 'usecase'] as const) {
      if (data[field] !== undefined && data[field] !== current[field]) {
        throw new UnprocessableError(
          'IMMUTABLE_FIELD',
          `${field} of a campaign cannot change; create a new campaign.`,
          field,
        );
      }
    }
    const { brandId: _b, usecase: _u, ...changes } = data;
    if (changes.subUsecases !== undefined) {
      const issues = subUsecaseIssues(current.usecase, changes.subUsecases);
      if (issues.length > 0) throw new ValidationError(issues);
    }
    const changedFields = (Object.keys(changes) as (keyof typeof changes)[]).filter(
      (k) => changes[k] !== undefined && JSON.stringify(changes[k]) !== JSON.stringify(current[k]),
    );
    const carrierReview = changedFields.some((f) => (REVIEW_FIELDS as readonly string[]).includes(f));
    const updated = await updateCampaignFields(tx, id, changes, now);
    await emit(actor.accountId, '10dlc.campaign.updated', { campaignId: id, changedFields, carrierReview });
    if (carrierReview) {
      const carriers = await carriersOf(tx, id);
      const due = await ctx.registry.submitCampaign(
        tx,
        updated,
        carriers.map((c) => c.networkId),
      );
      await markCarriersPending(
        tx,
        emit,
        updated,
        due,
        now,
        new Map(carriers.map((c) => [c.networkId, c.status])),
        'RESUBMITTED',
      );
      await refreshCampaignStatus(tx, emit, updated, now, ctx);
    }
    return loadDto(tx, id);
  });
}

/**
 * DELETE /compliance/campaigns/{id}: deletes the campaign, unlinks every DID assigned to it (spec 3) and withdraws
 * its pending reviews. Warming or active numbers start cooling (did-lifecycle.ts, one did.state_changed each). Emits
 * 10dlc.numbers.removed (when numbers were linked) and 10dlc.campaign.deleted.
 * @returns `{id, deleted: true, unlinkedNumbers}`. @throws NotFoundError.
 */
export async function deleteCampaign(
  ctx: DomainContext,
  actor: Actor,
  id: string,
): Promise<{ id: string; deleted: true; unlinkedNumbers: string[] }> {
  requireScope(actor, 'compliance');
  return ctx.events.transaction(async (tx, emit) => {
    const campaign = await findOwnCampaign(tx, actor, id);
    const linked = await numbersOfCampaign(tx, id);
    const unlinkedNumbers = linked.map((n) => n.number);
    await startCooldown(ctx, tx, emit, linked, 'CAMPAIGN_DELETED', ctx.clock.now());
    await ctx.registry.withdrawCampaign(tx, id);
    await deleteCampaignRow(tx, id);
    if (unlinkedNumbers.length > 0) {
      await emit(actor.accountId, '10dlc.numbers.removed', { campaignId: id, numbers: unlinkedNumbers });
    }
    await emit(actor.accountId, '10dlc.campaign.deleted', {
      campaignId: id,
      brandId: campaign.brandId,
      unlinkedNumbers,
    });
    return { id, deleted: true as const, unlinkedNumbers };
  });
}

/**
 * POST /compliance/campaigns/{id}/nudge `{nudgeIntent, description?}` (TCR nudge): REVIEW asks every PENDING carrier
 * to decide sooner (the sandbox halves their remaining time); APPEAL_REJECTION sends every REJECTED carrier back
 * to review. Emits 10dlc.campaign.nudged (and carrier/campaign status changes for an appeal).
 * @returns the campaign detail with the new `estimatedDecisionAt`s.
 * `input` is parsed at the door by `nudgeInput`; none means {@link NUDGE_DEFAULTS} (REVIEW).
 * @throws NotFoundError; UnprocessableError 422 NOTHING_TO_NUDGE (no pending carrier) or
 *   NOTHING_TO_APPEAL (no rejected carrier).
 */
export async function nudgeCampaign(
  ctx: DomainContext,
  actor: Actor,
  id: string,
  input?: NudgeInput | null,
): Promise<CampaignDto> {
  requireScope(actor, 'compliance');
  const data = input ?? NUDGE_DEFAULTS;
  const now = ctx.clock.now();
  return ctx.events.transaction(async (tx, emit) => {
    const campaign = await findOwnCampaign(tx, actor, id);
    const carriers = await carriersOf(tx, id, { ordered: true });
    const registry = ctx.registry;
    const wanted = data.nudgeIntent === 'REVIEW' ? 'PENDING' : 'REJECTED';
    const targets = carriers.filter((c) => c.status === wanted).map((c) => c.networkId);
    if (targets.length === 0) {
      throw data.nudgeIntent === 'REVIEW'
        ? new UnprocessableError('NOTHING_TO_NUDGE', 'No carrier review is pending.', 'nudgeIntent')
        : new UnprocessableError('NOTHING_TO_APPEAL', 'No carrier rejected the campaign.', 'nudgeIntent');
    }
    if (data.nudgeIntent === 'REVIEW') {
      const due = await registry.nudgeReview(tx, campaign, targets);
      for (const [networkId, dueAt] of due) {
        await updateCarrier(tx, id, networkId, { estimatedDecisionAt: dueAt }, now);
      }
    } else {
      const due = await registry.appealRejection(tx, campaign, targets);
      await markCarriersPending(
        tx,
        emit,
        campaign,
        due,
        now,
        new Map(carriers.map((c) => [c.networkId, c.status])),
        'APPEAL',
      );
      await refreshCampaignStatus(tx, emit, campaign, now, ctx);
    }
    await emit(actor.accountId, '10dlc.campaign.nudged', {
      campaignId: id,
      nudgeIntent: data.nudgeIntent,
      description: data.description ?? null,
      networkIds: targets,
    });
    return loadDto(tx, id);
  });
}

/**
 * POST /compliance/campaigns/{id}/expedite: expedited review of every PENDING carrier (may incur fees at a real
 * registry; the sandbox decides them 1 s, 2 s, 3 s … from now, scaled). Sets `expedited`. Emits
 * 10dlc.campaign.updated with `expedited: true`.
 * @throws NotFoundError; UnprocessableError 422 NOTHING_TO_EXPEDITE when no carrier is pending.
 */
export async function expediteCampaign(ctx: DomainContext, actor: Actor, id: string): Promise<CampaignDto> {
  requireScope(actor, 'compliance');
  const now = ctx.clock.now();
  return ctx.events.transaction(async (tx, emit) => {
    const campaign = await findOwnCampaign(tx, actor, id);
    const pending = await carriersOf(tx, id, { status: 'PENDING', ordered: true });
    if (pending.length === 0) {
      throw new UnprocessableError('NOTHING_TO_EXPEDITE', 'No carrier review is pending.', 'id');
    }
    const due = await ctx.registry.expedite(
      tx,
      campaign,
      pending.map((c) => c.networkId),
    );
    for (const [networkId, dueAt] of due) {
      await updateCarrier(tx, id, networkId, { estimatedDecisionAt: dueAt }, now);
    }
    await updateCampaignFields(tx, id, { expedited: true }, now);
    await emit(actor.accountId, '10dlc.campaign.updated', {
      campaignId: id,
      changedFields: ['expedited'],
      expedited: true,
    });
    return loadDto(tx, id);
  });
}

/** GET /compliance/campaigns/{id}/carriers (spec 2.4): `{campaignId, carriers}`. @throws NotFoundError. */
export async function getCampaignCarriers(
  ctx: DomainContext,
  actor: Actor,
  id: string,
): Promise<{ campaignId: string; carriers: CarrierDto[] }> {
  requireScope(actor, 'compliance');
  await findOwnCampaign(ctx.db, actor, id);
  const rows = await carriersOf(ctx.db, id, { ordered: true });
  return { campaignId: id, carriers: rows.map(carrierDto) };
}
