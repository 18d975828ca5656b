import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { type Brand, Prisma } from '../../generated/prisma/client.js';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { ConflictError, NotFoundError, UnprocessableError } from '../errors.js';
import { WRITE_OK } from '../events/event-log.js';
import type { DomainContext } from '../kernel/context.js';
import type { Db, Statement, Tx } from '../kernel/db.js';
import { decodeCursor, encodeCursor, everyItem, type KeysetWindow, keysetPage } from '../paging.js';
import { minMsgSamples } from './campaign.lint.js';
import { type BrandDto, type BrandRow, brandDto, type VettingDto, vettingDto } from './compliance.dto.js';
import { CARRIERS, SPECIAL_USECASES, subUsecaseBounds, USECASES, VETTED_USECASES } from './compliance.enums.js';
import {
  type BrandInput,
  type BrandUpdateInput,
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
export async function findOwnBrand(db: Db | Tx, actor: Actor, id: string, field?: string): Promise<Brand> {
  const brand = await db.brand.findFirst({ where: { id, accountId: actor.accountId } });
  if (!brand) throw new NotFoundError('brand', id, field);
  return brand;
}

function brandData(input: BrandInput) {
  return {
    name: input.name,
    ein: input.ein,
    vertical: input.vertical,
    entityType: input.entityType,
    country: input.country,
    website: input.website ?? null,
    email: input.email ?? null,
    phone: input.phone ?? null,
    stockSymbol: input.stockSymbol ?? null,
    stockExchange: input.stockExchange ?? null,
    displayName: input.displayName ?? null,
    street: input.street ?? null,
    city: input.city ?? null,
    state: input.state ?? null,
    postalCode: input.postalCode ?? null,
    firstName: input.firstName ?? null,
    lastName: input.lastName ?? null,
    mobilePhone: input.mobilePhone ?? null,
    // TCR requires brandRelationship for every entity type but sole proprietors; the spec's examples lack it.
    brandRelationship:
      input.brandRelationship ?? (input.entityType === 'SOLE_PROPRIETOR' ? null : ('BASIC_ACCOUNT' as const)),
    altBusinessId: input.altBusinessId ?? null,
    altBusinessIdType: input.altBusinessIdType ?? null,
    businessContactEmail: input.businessContactEmail ?? null,
    referenceId: input.referenceId ?? null,
  };
}

/**
 * Whether a brand of `accountId` other than `exceptId` has `referenceId`, compared case-insensitively and exactly
 * (TCR). `lower(a) = lower(b)`, not Prisma's `mode: 'insensitive'`, which is ILIKE and would read `_` and `%` in a
 * referenceId as wildcards (the register path's guard compares the same way).
 */
async function referenceIdTaken(
  tx: Tx,
  accountId: string,
  referenceId: string | null,
  exceptId?: string,
): Promise<boolean> {
  if (!referenceId) return false;
  const [row] = await tx.$queryRaw<
    { free: boolean }[]
  >`SELECT ${referenceIdFree(accountId, referenceId, exceptId)} AS free`;
  return row?.free === false;
}

function referenceIdConflict(referenceId: string): ConflictError {
  return new ConflictError(
    'REFERENCE_ID_TAKEN',
    `Another brand of this account has referenceId ${referenceId} (unique, case-insensitive).`,
    'referenceId',
  );
}

/** SQL: true when no brand of `accountId` (other than `exceptId`) has `referenceId`, case-insensitively (TCR): the one predicate of the rule, used by the register guard and by {@link referenceIdTaken}. */
function referenceIdFree(accountId: string, referenceId: string, exceptId?: string): Prisma.Sql {
  return Prisma.sql`NOT EXISTS (
    SELECT 1 FROM compliance_brands o WHERE o.account_id = ${accountId} AND lower(o.reference_id) = lower(${referenceId}::text)
       ${exceptId ? Prisma.sql`AND o.id <> ${exceptId}` : Prisma.empty})`;
}

/** A change of a single-statement write (see WRITE_OK): inserts the new brand row `b`. */
function insertBrandSql(b: Brand): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO compliance_brands (id, account_id, name, ein, vertical, entity_type, country, website, email, phone,
      stock_symbol, stock_exchange, display_name, street, city, state, postal_code, first_name, last_name,
      mobile_phone, brand_relationship, alt_business_id, alt_business_id_type, business_contact_email, reference_id,
      mock, vetting_score, status, identity_status, feedback, created_at, updated_at)
    SELECT ${b.id}, ${b.accountId}, ${b.name}, ${b.ein}, ${b.vertical}, ${b.entityType}, ${b.country}, ${b.website},
      ${b.email}, ${b.phone}, ${b.stockSymbol}, ${b.stockExchange}, ${b.displayName}, ${b.street}, ${b.city},
      ${b.state}, ${b.postalCode}, ${b.firstName}, ${b.lastName}, ${b.mobilePhone}, ${b.brandRelationship},
      ${b.altBusinessId}, ${b.altBusinessIdType}, ${b.businessContactEmail}, ${b.referenceId}, ${b.mock},
      ${b.vettingScore}::int, ${b.status}, ${b.identityStatus}, '[]'::jsonb, ${b.createdAt}::timestamptz,
      ${b.updatedAt}::timestamptz
    WHERE ${WRITE_OK}`;
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
  const brand: Brand = {
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
      await tx.$executeRaw`WITH write_ok AS (SELECT true AS ok) ${insertBrandSql(brand)}`;
      await ctx.registry.submitBrand(tx, brand);
      await emit(actor.accountId, '10dlc.brand.registered', payload);
    });
  }
  return dto;
}

/**
 * The brand columns the API shows, aliased to the Prisma field names so {@link brandDto} maps a raw row and a Prisma
 * row alike. The hot reads (one brand, a page of brands) run as prepared statements below Prisma (issue 9).
 */
const BRAND_SELECT = `SELECT id, name, ein, vertical, entity_type AS "entityType", country, website, email, phone,
  stock_symbol AS "stockSymbol", stock_exchange AS "stockExchange", display_name AS "displayName", street, city,
  state, postal_code AS "postalCode", first_name AS "firstName", last_name AS "lastName",
  mobile_phone AS "mobilePhone", brand_relationship AS "brandRelationship", alt_business_id AS "altBusinessId",
  alt_business_id_type AS "altBusinessIdType", business_contact_email AS "businessContactEmail",
  reference_id AS "referenceId", mock, vetting_score AS "vettingScore", status, identity_status AS "identityStatus",
  created_at AS "createdAt", updated_at AS "updatedAt" FROM compliance_brands`;

const BRAND_BY_ID: Statement = { name: 'brand_by_id', text: `${BRAND_SELECT} WHERE id = $1 AND account_id = $2` };

/** One prepared statement per keyset-window shape (cursor after/before, order), so each keeps its index range. */
const brandPageStatements = new Map<string, Statement>();
function brandPageStatement(after: boolean, before: boolean, inverted: boolean): Statement {
  const name = `brand_page_${after ? 'a' : ''}${before ? 'b' : ''}_${inverted ? 'desc' : 'asc'}`;
  let statement = brandPageStatements.get(name);
  if (!statement) {
    const where = ['account_id = $1'];
    if (after) where.push(`id > $${where.length + 1}`);
    if (before) where.push(`id < $${where.length + 1}`);
    const text = `${BRAND_SELECT} WHERE ${where.join(' AND ')} ORDER BY id ${inverted ? 'DESC' : 'ASC'} LIMIT $${where.length + 1}`;
    statement = { name, text };
    brandPageStatements.set(name, statement);
  }
  return statement;
}

/** Brands of the account in a keyset window, ascending by id (creation order; descending when `inverted`). */
export async function pageBrands(ctx: DomainContext, actor: Actor, window: KeysetWindow): Promise<BrandDto[]> {
  requireScope(actor, 'compliance');
  const params: unknown[] = [actor.accountId];
  if (window.after !== undefined) params.push(window.after);
  if (window.before !== undefined) params.push(window.before);
  params.push(window.limit);
  const statement = brandPageStatement(window.after !== undefined, window.before !== undefined, !!window.inverted);
  const rows = await ctx.database.read<BrandRow>(statement, params);
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
export async function getBrand(ctx: DomainContext, actor: Actor, id: string): Promise<BrandDto> {
  requireScope(actor, 'compliance');
  const [row] = await ctx.database.read<BrandRow>(BRAND_BY_ID, [id, actor.accountId]);
  if (!row) throw new NotFoundError('brand', id);
  return brandDto(row);
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
    const updated = await tx.brand.update({
      where: { id },
      data: {
        ...data,
        updatedAt: now,
        ...(revetting ? { status: 'PENDING', identityStatus: 'SELF_DECLARED', feedback: [] } : {}),
      },
    });
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
    const campaigns = await tx.campaign.count({ where: { brandId: id } });
    if (campaigns > 0) {
      throw new ConflictError(
        'BRAND_HAS_CAMPAIGNS',
        `The brand has ${campaigns} active campaign(s); delete them first.`,
        'id',
      );
    }
    await ctx.registry.withdrawBrand(tx, id);
    await tx.brand.delete({ where: { id } });
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
export function qualification(brand: Brand): BrandQualification {
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
    const updated = await tx.brand.update({
      where: { id },
      data: { status: 'PENDING', identityStatus: 'SELF_DECLARED', feedback: [], updatedAt: now },
    });
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
    const pending = await tx.vetting.findFirst({ where: { brandId: id, status: 'PENDING' } });
    if (pending) return { vetting: vettingDto(pending), created: false };
    const vetting = await tx.vetting.create({
      data: {
        id: uuidv7(),
        accountId: actor.accountId,
        brandId: id,
        evpId: data.evpId,
        vettingClass: data.vettingClass,
        status: 'PENDING',
        createdAt: now,
      },
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
  const rows = await ctx.db.vetting.findMany({
    where: { brandId: id },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  return rows.map(vettingDto);
}
