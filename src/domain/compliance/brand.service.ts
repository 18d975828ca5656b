import { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { ConflictError, NotFoundError, UnprocessableError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import type { Db, Tx } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';
import { decodeCursor, encodeCursor, everyItem, type KeysetWindow, keysetPage } from '../paging.js';
import {
  BRAND_COLUMNS,
  type BrandRecord,
  countCampaignsOfBrand,
  deleteBrandRow,
  findBrand,
  findPendingVetting,
  insertBrand,
  insertBrandSql,
  insertVetting,
  readBrandPage,
  readBrandRow,
  referenceIdFree,
  referenceIdTaken,
  resetBrandForRevet,
  updateBrandFields,
  vettingsOfBrand,
} from './brand.store.js';
import { minMsgSamples } from './campaign.lint.js';
import { type BrandDto, brandDto, type VettingDto, vettingDto } from './compliance.dto.js';
import { CARRIERS, SPECIAL_USECASES, subUsecaseBounds, USECASES, VETTED_USECASES } from './compliance.enums.js';
import {
  type BrandInput,
  type BrandUpdateInput,
  brandFields,
  type PageQuery,
  usecaseSchema,
  VETTING_APPLY_DEFAULTS,
  type VettingApplyInput,
} from './compliance.schemas.js';
import type { FeedbackItem } from './registry.port.js';
import { brandTier, campaignThroughput } from './throughput.rules.js';

/**
 * Brand fields whose change sends the brand back to the registry's identity check (TCR re-vets a brand when its
 * legal identity changes): name, ein, entityType, country, stockSymbol, stockExchange. vertical, website, email and
 * phone change without re-vetting.
 */
export const IDENTITY_FIELDS = ['name', 'ein', 'entityType', 'country', 'stockSymbol', 'stockExchange'] as const;

/** Loads a brand of the actor's account. @throws NotFoundError (404) for a missing or another account's brand. */
export async function findOwnBrand(db: Db | Tx, actor: Actor, id: string, field?: string): Promise<BrandRecord> {
  const brand = await findBrand(db, actor.accountId, id);
  if (!brand) throw new NotFoundError('brand', id, field);
  return brand;
}

/**
 * The brand columns a body sets, in column order (so `changedFields` keeps its order): every field of the domain's
 * brand body (brandFields) that is a column, but `mock` (fixed at registration).
 */
const CLIENT_FIELDS = BRAND_COLUMNS.filter((c) => c !== 'mock' && Object.hasOwn(brandFields, c)) as Exclude<
  keyof typeof brandFields & keyof BrandRecord,
  'mock'
>[];
/** The stored fields of a body: each of {@link CLIENT_FIELDS}, null when left out. */
type ClientFields = { [K in (typeof CLIENT_FIELDS)[number]]: BrandRecord[K] };

/**
 * The stored brand fields of a registration or update body: every client field of the brand (CLIENT_FIELDS, in column
 * order), null when left out. TCR requires brandRelationship for every entity type but sole
 * proprietors; the spec's examples lack it, so it defaults to BASIC_ACCOUNT (null for SOLE_PROPRIETOR).
 */
function brandData(input: BrandInput): ClientFields {
  const data = {} as Record<string, unknown>;
  for (const f of CLIENT_FIELDS) data[f] = (input as Record<string, unknown>)[f] ?? null;
  data.brandRelationship =
    input.brandRelationship ?? (input.entityType === 'SOLE_PROPRIETOR' ? null : ('BASIC_ACCOUNT' as const));
  return data as ClientFields;
}

function referenceIdConflict(referenceId: string): ConflictError {
  return new ConflictError(
    'REFERENCE_ID_TAKEN',
    `Another brand of this account has referenceId ${referenceId} (unique, case-insensitive).`,
    'referenceId',
  );
}

/**
 * Registers a brand (spec 4.1 POST /compliance/brands): status PENDING, identityStatus SELF_DECLARED, submitted to
 * the registry for its identity check. Emits 10dlc.brand.registered.
 * `data` is parsed at the door by `brandInput` (spec 2.1; TCR limits and required-ness by entity type, research
 * file §5.1: a 400 listing every violated rule).
 * @throws ConflictError 409 REFERENCE_ID_TAKEN when another brand of the account has the referenceId.
 */
export async function registerBrand(ctx: DomainContext, actor: Actor, data: BrandInput): Promise<BrandDto> {
  requireScope(actor, 'compliance');
  const now = ctx.clock.now();
  const brand: BrandRecord = {
    id: uuidv7(),
    accountId: actor.accountId,
    ...brandData(data),
    mock: data.mock,
    vettingScore: null,
    status: 'PENDING',
    identityStatus: 'SELF_DECLARED',
    feedback: [],
    createdAt: now,
    updatedAt: now,
  };
  const dto = brandDto(brand);
  const payload = { brandId: brand.id, ...dto };
  const registryChanges = ctx.registry.submitNewBrandChanges?.(brand);
  if (registryChanges) {
    // One SQL statement (one round trip, issue 9): the brand, its registry submission and its event commit together.
    const events = await ctx.events.write({
      accountId: actor.accountId,
      // Only a referenceId needs a guard; unguarded registrations of one account share a statement (group commit).
      ...(brand.referenceId ? { guard: referenceIdFree(actor.accountId, brand.referenceId) } : {}),
      changes: [insertBrandSql(brand), ...registryChanges],
      events: [{ eventType: '10dlc.brand.registered', payload }],
    });
    if (!events) throw referenceIdConflict(data.referenceId!);
  } else {
    await ctx.events.transaction(async (tx, emit) => {
      if (await referenceIdTaken(tx, actor.accountId, brand.referenceId)) throw referenceIdConflict(data.referenceId!);
      await insertBrand(tx, brand);
      await ctx.registry.submitBrand(tx, brand);
      await emit(actor.accountId, '10dlc.brand.registered', payload);
    });
  }
  return dto;
}

/** Brands of the account in a keyset window, ascending by id (creation order; descending when `inverted`). */
export async function pageBrands(ctx: DomainContext, actor: Actor, window: KeysetWindow): Promise<BrandDto[]> {
  requireScope(actor, 'compliance');
  const rows = await readBrandPage(ctx, actor.accountId, window);
  return rows.map(brandDto);
}

/**
 * GET /compliance/brands: `{brands, nextCursor}`, oldest first, `?limit` (1–200, default 50) and `?cursor`.
 * @throws BadRequestError 400 INVALID_CURSOR.
 */
export async function listBrands(
  ctx: DomainContext,
  actor: Actor,
  q: PageQuery,
): Promise<{ brands: BrandDto[]; nextCursor: string | null }> {
  const after = decodeCursor(q.cursor);
  const page = await keysetPage(q.limit, (limit) => pageBrands(ctx, actor, { after, limit }));
  return { brands: page.items, nextCursor: page.last ? encodeCursor(page.last.id) : null };
}

/**
 * GET /compliance/brands without `limit` (spec 4.1: all brands of the account): every brand after `cursor`, oldest
 * first, in chunks of STREAM_CHUNK read one statement at a time (the list is never held whole).
 * @throws ForbiddenError; BadRequestError INVALID_CURSOR (both before the first chunk).
 */
export function allBrands(ctx: DomainContext, actor: Actor, cursor: string | undefined): AsyncGenerator<BrandDto[]> {
  requireScope(actor, 'compliance');
  return everyItem(
    decodeCursor(cursor),
    (w) => pageBrands(ctx, actor, w),
    (b) => b.id,
  );
}

/** GET /compliance/brands/{id}. @throws NotFoundError. */
export function getBrand(ctx: DomainContext, actor: Actor, id: string): Promise<BrandDto> {
  // A rejected promise, never a synchronous throw, as the async function this was; `.then` instead of async/await
  // saves a promise per read (issue 24).
  try {
    requireScope(actor, 'compliance');
  } catch (err) {
    return Promise.reject(err);
  }
  return readBrandRow(ctx, actor.accountId, id).then((row) => {
    if (!row) throw new NotFoundError('brand', id);
    return brandDto(row);
  });
}

/**
 * PUT /compliance/brands/{id}: replaces the brand's fields (same body as registration). When an identity field
 * ({@link IDENTITY_FIELDS}) changes, the brand goes back to PENDING / SELF_DECLARED and is resubmitted to the
 * registry (re-vetting; an earlier VETTED_VERIFIED is reset). Emits 10dlc.brand.updated (with `changedFields` and
 * `revetting`) and, when the status moved, 10dlc.brand.status_changed.
 * `parsed` is parsed at the door by `brandUpdateInput`. @throws NotFoundError; ConflictError REFERENCE_ID_TAKEN.
 */
export async function updateBrand(
  ctx: DomainContext,
  actor: Actor,
  id: string,
  parsed: BrandUpdateInput,
): Promise<BrandDto> {
  requireScope(actor, 'compliance');
  const data = brandData(parsed);
  const now = ctx.clock.now();
  const brand = await ctx.events.transaction(async (tx, emit) => {
    const current = await findOwnBrand(tx, actor, id);
    if (parsed.mock !== current.mock) {
      throw new UnprocessableError('IMMUTABLE_FIELD', 'mock is fixed at registration (TCR).', 'mock');
    }
    if (await referenceIdTaken(tx, actor.accountId, data.referenceId, id)) throw referenceIdConflict(data.referenceId!);
    const changedFields = (Object.keys(data) as (keyof typeof data)[]).filter((k) => data[k] !== current[k]);
    const revetting = changedFields.some((f) => (IDENTITY_FIELDS as readonly string[]).includes(f));
    const updated = await updateBrandFields(tx, id, data, now, revetting);
    if (revetting) await ctx.registry.submitBrand(tx, updated);
    await emit(actor.accountId, '10dlc.brand.updated', { brandId: id, changedFields, revetting });
    if (updated.status !== current.status) {
      await emit(actor.accountId, '10dlc.brand.status_changed', {
        brandId: id,
        previousStatus: current.status,
        status: updated.status,
        identityStatus: updated.identityStatus,
        feedback: [],
      });
    }
    return updated;
  });
  return brandDto(brand);
}

/**
 * DELETE /compliance/brands/{id}: removes the brand, its vettings and its pending registry work. Emits
 * 10dlc.brand.deleted.
 * @throws NotFoundError; ConflictError 409 BRAND_HAS_CAMPAIGNS while any campaign of the brand exists (spec 7;
 *   every existing campaign counts as active, since a deleted campaign is gone).
 */
export async function deleteBrand(
  ctx: DomainContext,
  actor: Actor,
  id: string,
): Promise<{ id: string; deleted: true }> {
  requireScope(actor, 'compliance');
  await ctx.events.transaction(async (tx, emit) => {
    await findOwnBrand(tx, actor, id);
    const campaigns = await countCampaignsOfBrand(tx, id);
    if (campaigns > 0) {
      throw new ConflictError(
        'BRAND_HAS_CAMPAIGNS',
        `The brand has ${campaigns} active campaign(s); delete them first.`,
        'id',
      );
    }
    await ctx.registry.withdrawBrand(tx, id);
    await deleteBrandRow(tx, id);
    await emit(actor.accountId, '10dlc.brand.deleted', { brandId: id });
  });
  return { id, deleted: true };
}

/** Per-carrier use-case metadata of {@link qualifyBrand} (TCR qualify / campaign builder `mnoMetadata`). */
export interface CarrierQualification {
  networkId: number;
  carrier: string;
  /** Whether this carrier accepts the use case from this brand (TCR `qualify`). */
  qualifies: boolean;
  /** The carrier reviews campaigns of this use case by hand (TCR `mnoReview`). */
  carrierReviewRequired: boolean;
  /** Minimum sample messages this carrier asks for (TCR `minMsgSamples`). */
  minMsgSamples: number;
  /** TCR `reqSubscriberOptin` / `reqSubscriberOptout` / `reqSubscriberHelp`. */
  subscriberOptInRequired: boolean;
  subscriberOptOutRequired: boolean;
  subscriberHelpRequired: boolean;
  /** Inverse of TCR `noEmbeddedLink` / `noEmbeddedPhone`. */
  embeddedLinksAllowed: boolean;
  embeddedPhoneAllowed: boolean;
  /** Effective limit of a campaign of this use case (throughput.rules.ts): T-Mobile messages/day per brand. */
  dailyCap: number | null;
  /** AT&T messages per minute per campaign, and its message class. */
  messagesPerMinute: number | null;
  messageClass: string | null;
}

/**
 * What the opt-in confirmation, opt-out confirmation, HELP reply and samples must carry (codes the lint checks:
 * research file §5.4; Sinch campaign-fields, Twilio 30893). Same for every carrier.
 */
export interface MessageRequirements {
  optinMessage: string[];
  optoutMessage: string[];
  helpMessage: string[];
  sampleMessages: string[];
}

const MESSAGE_REQUIREMENTS: MessageRequirements = {
  optinMessage: [
    'BRAND_NAME',
    'MESSAGE_FREQUENCY',
    'MSG_AND_DATA_RATES_MAY_APPLY',
    'HELP_INSTRUCTIONS',
    'STOP_INSTRUCTIONS',
  ],
  optoutMessage: ['BRAND_NAME', 'NO_FURTHER_MESSAGES'],
  helpMessage: ['BRAND_NAME', 'SUPPORT_CONTACT'],
  sampleMessages: ['BRAND_NAME', 'OPT_OUT_LANGUAGE', 'EMBEDDED_LINK_AND_PHONE_FLAGS_MATCH', 'NO_PUBLIC_URL_SHORTENERS'],
};

/** Qualification of one use case (TCR `UsecaseMetadata` plus the reason when it does not qualify). */
export interface UsecaseQualification {
  usecase: string;
  /** STANDARD or SPECIAL (TCR usecase class). */
  usecaseClass: 'STANDARD' | 'SPECIAL';
  qualifies: boolean;
  /** Why it does not qualify (null when it does). */
  reason: string | null;
  /** An approved external vetting (VETTED_VERIFIED) is needed. */
  vettingRequired: boolean;
  minSubUsecases: number;
  maxSubUsecases: number;
  messageRequirements: MessageRequirements;
  carriers: CarrierQualification[];
}

/** Result of GET /compliance/brands/{id}/qualify. */
export interface BrandQualification {
  brandId: string;
  qualified: boolean;
  status: string;
  identityStatus: string;
  /** The brand's throughput tier (throughput.rules.ts). */
  throughputTier: string;
  usecases: UsecaseQualification[];
}

/** `?usecase=` of GET /compliance/brands/{id}/qualify. */
export const qualifyQuery = z
  .object({ usecase: usecaseSchema.optional().describe('Only this use case (TCR campaign builder /usecase/{uc}).') })
  .strict();
/** Parsed qualifyQuery. */
export type QualifyQuery = z.output<typeof qualifyQuery>;

/**
 * GET /compliance/brands/{id}/qualify[?usecase=]: whether the brand may run 10DLC campaigns (status ACTIVE) and, per
 * use case and carrier, TCR's campaign-builder data (research file §4.8; TCR `GET /campaignBuilder/brand/{id}
 * [/usecase/{uc}]`): qualifies, carrier review, minimum samples, opt-in/opt-out/help requirements, embedded
 * link/phone rules, and the throughput a campaign would get. `?usecase=` answers that one use case only.
 * `q` is parsed at the door by `qualifyQuery` (400 for an unknown usecase). @throws NotFoundError.
 */
export async function qualifyBrand(
  ctx: DomainContext,
  actor: Actor,
  id: string,
  q: QualifyQuery = {},
): Promise<BrandQualification> {
  requireScope(actor, 'compliance');
  const brand = await findOwnBrand(ctx.db, actor, id);
  const result = qualification(brand);
  return q.usecase ? { ...result, usecases: result.usecases.filter((u) => u.usecase === q.usecase) } : result;
}

/**
 * The qualification rules of {@link qualifyBrand}, for a loaded brand (TCR): every use case needs an ACTIVE brand;
 * POLITICAL, SWEEPSTAKE, CHARITY and UCAAS_HIGH need VETTED_VERIFIED; SOLE_PROPRIETOR is the only use case of a
 * sole-proprietor brand and only for one. Special use cases need carrier review; SOLE_PROPRIETOR and LOW_VOLUME
 * disallow embedded phone numbers; SOLE_PROPRIETOR disallows embedded links.
 */
export function qualification(brand: BrandRecord): BrandQualification {
  const active = brand.status === 'ACTIVE';
  const soleProp = brand.entityType === 'SOLE_PROPRIETOR';
  const usecases = USECASES.map((usecase): UsecaseQualification => {
    const needsVetting = VETTED_USECASES.includes(usecase);
    let reason: string | null = null;
    if (!active) reason = `The brand is ${brand.status}; it must be ACTIVE.`;
    else if (soleProp && usecase !== 'SOLE_PROPRIETOR') {
      reason = 'A SOLE_PROPRIETOR brand may only use the SOLE_PROPRIETOR use case.';
    } else if (!soleProp && usecase === 'SOLE_PROPRIETOR') {
      reason = 'Only SOLE_PROPRIETOR brands may use the SOLE_PROPRIETOR use case.';
    } else if (needsVetting && brand.identityStatus !== 'VETTED_VERIFIED') {
      reason = 'Needs an approved external vetting (identityStatus VETTED_VERIFIED).';
    }
    const special = (SPECIAL_USECASES as readonly string[]).includes(usecase);
    const bounds = subUsecaseBounds(usecase);
    const throughput = campaignThroughput(brand, usecase);
    return {
      usecase,
      usecaseClass: special ? 'SPECIAL' : 'STANDARD',
      qualifies: reason === null,
      reason,
      vettingRequired: needsVetting,
      minSubUsecases: bounds.min,
      maxSubUsecases: bounds.max,
      messageRequirements: MESSAGE_REQUIREMENTS,
      carriers: CARRIERS.map((c) => {
        const limit = throughput.carriers.find((l) => l.networkId === c.networkId);
        return {
          networkId: c.networkId,
          carrier: c.name,
          qualifies: reason === null,
          carrierReviewRequired: special || (c.networkId === 10035 && usecase === 'MIXED'),
          minMsgSamples: minMsgSamples(usecase, c.networkId),
          subscriberOptInRequired: true,
          subscriberOptOutRequired: true,
          subscriberHelpRequired: true,
          embeddedLinksAllowed: usecase !== 'SOLE_PROPRIETOR',
          embeddedPhoneAllowed: usecase !== 'SOLE_PROPRIETOR' && usecase !== 'LOW_VOLUME',
          dailyCap: limit?.dailyCap ?? null,
          messagesPerMinute: limit?.messagesPerMinute ?? null,
          messageClass: limit?.messageClass ?? null,
        };
      }),
    };
  });
  return {
    brandId: brand.id,
    qualified: active,
    status: brand.status,
    identityStatus: brand.identityStatus,
    throughputTier: brandTier(brand),
    usecases,
  };
}

/**
 * POST /compliance/brands/{id}/revet: resubmits the brand to the registry's identity check after corrections
 * (TCR revet): status PENDING, identityStatus SELF_DECLARED, a new decision scheduled. Emits
 * 10dlc.brand.status_changed.
 * @throws NotFoundError; ConflictError 409 BRAND_PENDING while a check is already running.
 */
export async function revetBrand(ctx: DomainContext, actor: Actor, id: string): Promise<BrandDto> {
  requireScope(actor, 'compliance');
  const now = ctx.clock.now();
  const brand = await ctx.events.transaction(async (tx, emit) => {
    const current = await findOwnBrand(tx, actor, id);
    if (current.status === 'PENDING') {
      throw new ConflictError('BRAND_PENDING', 'The brand is already being verified; wait for the decision.', 'id');
    }
    const updated = await resetBrandForRevet(tx, id, now);
    await ctx.registry.submitBrand(tx, updated);
    await emit(actor.accountId, '10dlc.brand.status_changed', {
      brandId: id,
      previousStatus: current.status,
      status: 'PENDING',
      identityStatus: 'SELF_DECLARED',
      feedback: [],
      revet: true,
    });
    return updated;
  });
  return brandDto(brand);
}

/** Result of GET /compliance/brands/{id}/feedback (TCR brand feedback: `category` items). */
export interface BrandFeedback {
  brandId: string;
  status: string;
  identityStatus: string;
  category: FeedbackItem[];
}

/** GET /compliance/brands/{id}/feedback: the registry's reasons and required corrections (empty unless FAILED). */
export async function getBrandFeedback(ctx: DomainContext, actor: Actor, id: string): Promise<BrandFeedback> {
  requireScope(actor, 'compliance');
  const brand = await findOwnBrand(ctx.db, actor, id);
  return {
    brandId: brand.id,
    status: brand.status,
    identityStatus: brand.identityStatus,
    category: (brand.feedback ?? []) as unknown as FeedbackItem[],
  };
}

/**
 * POST /compliance/brands/{id}/vetting/apply: orders an external vetting (optional body `{evpId, vettingClass}`,
 * defaults AEGIS / STANDARD). While one is PENDING it is returned instead of ordering a second (`created: false`).
 * Emits 10dlc.vetting.requested for a new order.
 * @throws NotFoundError; UnprocessableError 422 BRAND_NOT_ACTIVE unless the brand is ACTIVE.
 */
export async function applyForVetting(
  ctx: DomainContext,
  actor: Actor,
  id: string,
  input?: VettingApplyInput | null,
): Promise<{ vetting: VettingDto; created: boolean }> {
  requireScope(actor, 'compliance');
  const data = input ?? VETTING_APPLY_DEFAULTS;
  const now = ctx.clock.now();
  return ctx.events.transaction(async (tx, emit) => {
    const brand = await findOwnBrand(tx, actor, id);
    if (brand.status !== 'ACTIVE') {
      throw new UnprocessableError(
        'BRAND_NOT_ACTIVE',
        `The brand is ${brand.status}; vetting needs an ACTIVE brand.`,
        'id',
      );
    }
    const pending = await findPendingVetting(tx, id);
    if (pending) return { vetting: vettingDto(pending), created: false };
    const vetting = await insertVetting(tx, {
      id: uuidv7(),
      accountId: actor.accountId,
      brandId: id,
      evpId: data.evpId,
      vettingClass: data.vettingClass,
      status: 'PENDING',
      createdAt: now,
    });
    await ctx.registry.submitVetting(tx, vetting, brand);
    await emit(actor.accountId, '10dlc.vetting.requested', {
      brandId: id,
      vettingId: vetting.id,
      evpId: vetting.evpId,
      vettingClass: vetting.vettingClass,
    });
    return { vetting: vettingDto(vetting), created: true };
  });
}

/** GET /compliance/brands/{id}/vettings: every vetting record of the brand, newest first (spec 2.2). */
export async function listVettings(ctx: DomainContext, actor: Actor, id: string): Promise<VettingDto[]> {
  requireScope(actor, 'compliance');
  await findOwnBrand(ctx.db, actor, id);
  const rows = await vettingsOfBrand(ctx.db, id);
  return rows.map(vettingDto);
}
