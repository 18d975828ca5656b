import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { z } from 'zod';
import type { ErrorDetail } from '../errors.js';
import { type PageQuery, pageQuery } from '../paging.js';
import { decimalInt, resourceId } from '../validation.js';
import {
  ALT_BUSINESS_ID_TYPES,
  BRAND_RELATIONSHIPS,
  ENTITY_TYPES,
  EVP_IDS,
  NUDGE_INTENTS,
  STOCK_EXCHANGES,
  SUB_USECASES,
  subUsecaseBounds,
  USECASE_ALIASES,
  USECASES,
  VERTICALS,
  VETTING_CLASSES,
} from './compliance.enums.js';

/** Whether `value` is a valid phone number written in E.164 (`+` and digits only), per libphonenumber-js. */
export function isE164(value: string): boolean {
  if (!/^\+[1-9]\d{1,14}$/.test(value)) return false;
  const parsed = parsePhoneNumberFromString(value);
  return Boolean(parsed?.isValid() && parsed.number === value);
}

/** An E.164 phone number (spec 2.1 phone, 4.2 numbers), checked with libphonenumber-js metadata. */
export const e164 = z.string().refine(isE164, {
  message: 'must be a valid phone number in E.164 format, e.g. +14155550100',
  params: { code: 'INVALID_FORMAT' },
});

/** EIN `NN-NNNNNNN` (spec 2.1). */
export const einSchema = z.string().regex(/^\d{2}-\d{7}$/, 'must have the format NN-NNNNNNN');

const tcrText = (max: number) => z.string().trim().min(1).max(max);

/**
 * The fields of a brand body (registration and update), declared once: brandInput and brandUpdateInput parse them,
 * and the GraphQL CreateBrandInput / UpdateBrandInput take their fields from them.
 */
export const brandFields = {
  name: z.string().trim().min(1).max(255).describe('Legal business name (TCR companyName), at most 255 characters.'),
  companyName: tcrText(255)
    .optional()
    .describe('TCR name of the legal business name: an alias of `name` (equal to it when both are sent).'),
  displayName: tcrText(255)
    .nullish()
    .describe('Brand name consumers see (TCR displayName), at most 255; default `name`.'),
  ein: einSchema.describe('Employer Identification Number, NN-NNNNNNN. Sandbox magic prefixes: README.'),
  vertical: z.enum(VERTICALS).describe('Industry vertical (GET /compliance/enums/vertical).'),
  entityType: z.enum(ENTITY_TYPES).describe('Legal entity type (GET /compliance/enums/entityType).'),
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code, e.g. US')
    .default('US')
    .describe('ISO 3166-1 alpha-2 country code; default US.'),
  website: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .max(100)
    .nullish()
    .describe('Business website, http(s), at most 100 characters (TCR).'),
  email: z.email({ message: 'must be an email address' }).max(100).nullish().describe('At most 100 characters (TCR).'),
  phone: e164.nullish().describe('Contact phone, E.164; null clears it.'),
  street: tcrText(100).nullish().describe('Street address, at most 100 characters (TCR).'),
  city: tcrText(100).nullish().describe('City, at most 100 characters (TCR).'),
  state: tcrText(20).nullish().describe('State or region, at most 20; for US a 2-letter USPS code (TCR).'),
  postalCode: tcrText(10).nullish().describe('Postal code, at most 10; for US 5 digits or ZIP+4 (TCR).'),
  firstName: tcrText(100).nullish().describe('Required for SOLE_PROPRIETOR (TCR), at most 100.'),
  lastName: tcrText(100).nullish().describe('Required for SOLE_PROPRIETOR (TCR), at most 100.'),
  mobilePhone: e164
    .nullish()
    .describe('Required for SOLE_PROPRIETOR (TCR): the mobile number that receives the OTP, E.164.'),
  brandRelationship: z
    .enum(BRAND_RELATIONSHIPS)
    .nullish()
    .describe('TCR brandRelationship; default BASIC_ACCOUNT (not used for SOLE_PROPRIETOR).'),
  altBusinessId: tcrText(50).nullish().describe('DUNS, GIIN or LEI number, at most 50 (TCR).'),
  altBusinessIdType: z.enum(ALT_BUSINESS_ID_TYPES).nullish().describe('NONE, DUNS, GIIN or LEI (TCR).'),
  businessContactEmail: z
    .email({ message: 'must be an email address' })
    .max(100)
    .nullish()
    .describe('Auth+ verification contact; required for PUBLIC_PROFIT (TCR), at most 100.'),
  referenceId: tcrText(50)
    .nullish()
    .describe('Your reference, unique per account case-insensitively, at most 50; required for SOLE_PROPRIETOR (TCR).'),
  mock: z.boolean().default(false).describe('A test brand (TCR mock): never sent to carriers by a real registry.'),
  stockSymbol: z.string().trim().min(1).max(10).nullish().describe('Required for PUBLIC_PROFIT.'),
  stockExchange: z.enum(STOCK_EXCHANGES).nullish().describe('Required for PUBLIC_PROFIT.'),
};

/** Fields TCR requires per entity type beyond the always-required ones (research file §5.1, §5.2). */
const REQUIRED_BY_ENTITY_TYPE: Record<string, readonly string[]> = {
  PUBLIC_PROFIT: ['stockSymbol', 'stockExchange', 'businessContactEmail'],
  SOLE_PROPRIETOR: ['firstName', 'lastName', 'mobilePhone', 'referenceId'],
};

/**
 * TCR brand rules that span fields (run even when other fields fail, to report all): required-ness by entity type
 * (PUBLIC_PROFIT: stock fields and businessContactEmail; SOLE_PROPRIETOR: first/last name, mobile phone,
 * referenceId), altBusinessId with its type, US state and postal code formats, companyName equal to name.
 */
function brandRules(value: unknown, ctx: z.RefinementCtx): void {
  const v = (value ?? {}) as Record<string, unknown>;
  const issue = (path: string, message: string, code: string) =>
    ctx.addIssue({ code: 'custom', path: [path], message, params: { code } });
  const missing = (k: string) => v[k] === undefined || v[k] === null;
  for (const field of REQUIRED_BY_ENTITY_TYPE[String(v.entityType)] ?? []) {
    if (missing(field)) issue(field, `is required for entityType ${String(v.entityType)}`, 'REQUIRED');
  }
  const idType = v.altBusinessIdType;
  if (!missing('altBusinessId') && (missing('altBusinessIdType') || idType === 'NONE')) {
    issue('altBusinessIdType', 'is required with altBusinessId (DUNS, GIIN or LEI)', 'REQUIRED');
  }
  if (typeof idType === 'string' && idType !== 'NONE' && missing('altBusinessId')) {
    issue('altBusinessId', `is required with altBusinessIdType ${idType}`, 'REQUIRED');
  }
  if ((v.country ?? 'US') === 'US') {
    if (typeof v.state === 'string' && !/^[A-Z]{2}$/.test(v.state.trim())) {
      issue('state', 'must be a 2-letter USPS state code for country US, e.g. CA', 'INVALID_FORMAT');
    }
    if (typeof v.postalCode === 'string' && !/^\d{5}(-\d{4})?$/.test(v.postalCode.trim())) {
      issue('postalCode', 'must be a 5-digit ZIP code (or ZIP+4) for country US', 'INVALID_FORMAT');
    }
  }
  if (typeof v.companyName === 'string' && typeof v.name === 'string' && v.companyName.trim() !== v.name.trim()) {
    issue('companyName', 'is an alias of name and must equal it', 'CONFLICTING_FIELDS');
  }
}

/** `companyName` alone stands for `name` (TCR's spelling of the legal name). */
function companyNameAsName(input: unknown): unknown {
  if (input && typeof input === 'object' && !Array.isArray(input)) {
    const v = input as Record<string, unknown>;
    if (v.name === undefined && typeof v.companyName === 'string') return { ...v, name: v.companyName };
  }
  return input;
}

/** Read-only fields of a response; accepted and ignored on PUT so a client may send back what it read. */
function readOnly<K extends string>(keys: readonly K[]) {
  return Object.fromEntries(keys.map((k) => [k, z.unknown().optional()])) as Record<K, z.ZodOptional<z.ZodUnknown>>;
}

/** Body of POST /compliance/brands (spec 2.1 plus TCR's brand fields, research file §5.1). */
export const brandInput = z.preprocess(
  companyNameAsName,
  z
    .object(brandFields)
    .strict()
    .superRefine(brandRules, { when: () => true })
    .transform(({ companyName: _c, ...rest }) => rest),
);

const BRAND_READ_ONLY = [
  'id',
  'status',
  'identityStatus',
  'vettingScore',
  'throughput',
  'createdAt',
  'updatedAt',
] as const;

/**
 * Body of PUT /compliance/brands/{id}: the same fields as registration (optional fields left out are cleared);
 * the read-only fields of a brand are accepted and ignored.
 */
export const brandUpdateInput = z.preprocess(
  companyNameAsName,
  z
    .object({ ...brandFields, ...readOnly(BRAND_READ_ONLY) })
    .strict()
    .superRefine(brandRules, { when: () => true })
    .transform((v) => {
      const out: Record<string, unknown> = { ...v };
      for (const k of [...BRAND_READ_ONLY, 'companyName']) delete out[k];
      return out as Omit<typeof v, (typeof BRAND_READ_ONLY)[number] | 'companyName'>;
    }),
);
/** Parsed brandInput. */
export type BrandInput = z.output<typeof brandInput>;
/** Parsed brandUpdateInput. */
export type BrandUpdateInput = z.output<typeof brandUpdateInput>;

/** A use case, with the aliases of USECASE_ALIASES accepted. */
export const usecaseSchema = z.preprocess(
  (v) => (typeof v === 'string' && USECASE_ALIASES[v] ? USECASE_ALIASES[v] : v),
  z.enum(USECASES),
);

/** TCR keyword list: alphanumeric keywords, comma-separated without spaces, at most 255 characters. */
export const keywordsSchema = z
  .string()
  .max(255)
  .refine((v) => /^[A-Za-z0-9]+(,[A-Za-z0-9]+)*$/.test(v), {
    message: 'must be alphanumeric keywords separated by commas without spaces, e.g. STOP,QUIT',
    params: { code: 'INVALID_KEYWORDS' },
  });

const tcrMessage = (what: string) =>
  z.string().trim().min(20).max(320).nullish().describe(`${what}, 20–320 characters (TCR / Twilio).`);
const link = (what: string) =>
  z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .max(255)
    .nullish()
    .describe(`${what}, http(s), at most 255 characters.`);

const subUsecase = z.preprocess(
  (v) => (v === 'DELIVERY_NOTIFICATIONS' ? 'DELIVERY_NOTIFICATION' : v),
  z.enum(SUB_USECASES),
);

/**
 * The fields of a campaign body, declared once: campaignInput and campaignUpdateInput parse them, and the GraphQL
 * CreateCampaignInput / UpdateCampaignInput take their fields from them.
 */
export const campaignFields = {
  brandId: z.string().min(1).describe('Id of a registered brand of this account.'),
  usecase: usecaseSchema.describe('TCR use case (GET /compliance/enums/usecase).'),
  description: z.string().trim().min(40).max(4096).describe('Plain-language purpose, 40–4096 characters (TCR).'),
  sampleMessages: z
    .array(z.string().trim().min(20).max(1024))
    .min(2)
    .max(5)
    .describe('2 to 5 typical messages, each 20–1024 characters (spec 8, TCR).'),
  subscriberOptIn: z.boolean().describe('Confirms opt-in consent is collected.'),
  subscriberHelp: z.boolean().describe('Confirms the HELP keyword response is implemented.'),
  numberPool: z.boolean().default(false).describe('Whether several numbers send for the campaign.'),
  messageFlow: z
    .string()
    .trim()
    .min(40)
    .max(2048)
    .nullish()
    .describe('How subscribers opt in (every call to action), 40–2048 characters (TCR messageFlow).'),
  helpMessage: tcrMessage('Reply to HELP'),
  optinMessage: tcrMessage('Confirmation sent after opt-in'),
  optoutMessage: tcrMessage('Confirmation sent after opt-out'),
  helpKeywords: keywordsSchema.nullish().describe('HELP keywords, e.g. HELP,INFO (TCR format).'),
  optinKeywords: keywordsSchema.nullish().describe('Opt-in keywords, e.g. START,YES (TCR format).'),
  optoutKeywords: keywordsSchema.nullish().describe('Opt-out keywords, e.g. STOP,QUIT,END (TCR format).'),
  embeddedLink: z.boolean().default(false).describe('Messages carry links (TCR embeddedLink).'),
  embeddedPhone: z.boolean().default(false).describe('Messages carry phone numbers (TCR embeddedPhone).'),
  ageGated: z.boolean().default(false).describe('Age-gated content such as alcohol (TCR).'),
  directLending: z.boolean().default(false).describe('Direct lending or loan arrangements (TCR).'),
  affiliateMarketing: z.boolean().default(false).describe('Affiliate marketing (TCR).'),
  subUsecases: z
    .array(subUsecase)
    .max(5)
    .default([])
    .describe('Sub-use cases of MIXED (2–5), LOW_VOLUME / CARRIER_EXEMPT (1–5), PROXY/SOCIAL/CHARITY/POLITICAL (0–5).'),
  privacyPolicyLink: link('Privacy policy'),
  termsAndConditionsLink: link('Terms and conditions'),
};

/**
 * TCR sub-use-case rules: the count within the use case's bounds ({@link subUsecaseBounds}) and no repeats.
 * @returns one detail per violation (code SUBUSECASE_COUNT or DUPLICATE_SUBUSECASE, field subUsecases).
 */
export function subUsecaseIssues(usecase: string, subUsecases: readonly string[]): ErrorDetail[] {
  const { min, max } = subUsecaseBounds(usecase);
  const out: ErrorDetail[] = [];
  if (subUsecases.length < min || subUsecases.length > max) {
    out.push({
      code: 'SUBUSECASE_COUNT',
      field: 'subUsecases',
      message:
        max === 0
          ? `${usecase} takes no subUsecases`
          : `${usecase} needs ${min === max ? min : `${min} to ${max}`} subUsecases, got ${subUsecases.length}`,
    });
  }
  if (new Set(subUsecases).size !== subUsecases.length) {
    out.push({ code: 'DUPLICATE_SUBUSECASE', field: 'subUsecases', message: 'must not repeat a sub-use case' });
  }
  return out;
}

function campaignRules(value: unknown, ctx: z.RefinementCtx): void {
  const v = (value ?? {}) as { usecase?: unknown; subUsecases?: unknown };
  if (typeof v.usecase !== 'string' || !(USECASES as readonly string[]).includes(v.usecase)) return;
  const subs = Array.isArray(v.subUsecases) ? v.subUsecases.filter((s) => typeof s === 'string') : [];
  for (const d of subUsecaseIssues(v.usecase, subs)) {
    ctx.addIssue({ code: 'custom', path: ['subUsecases'], message: d.message, params: { code: d.code } });
  }
}

/** Body of POST /compliance/campaigns (spec 2.3 plus TCR's campaign fields, research file §5.4). */
export const campaignInput = z
  .object(campaignFields)
  .strict()
  .superRefine(campaignRules, { when: () => true });
/** Parsed campaignInput. */
export type CampaignInput = z.output<typeof campaignInput>;

const CAMPAIGN_READ_ONLY = [
  'id',
  'status',
  'expedited',
  'numberCount',
  'carriers',
  'sendable',
  'blockingReasons',
  'throughput',
  'createdAt',
  'updatedAt',
] as const;

/**
 * Body of PUT /compliance/campaigns/{id}: any of the campaign fields; fields left out keep their value, null clears
 * an optional text field. brandId and usecase may be sent but not changed (TCR: a campaign's brand and use case are
 * fixed); the read-only fields of a campaign are accepted and ignored.
 */
export const campaignUpdateInput = z
  .object({
    ...readOnly(CAMPAIGN_READ_ONLY),
    brandId: campaignFields.brandId.optional(),
    usecase: usecaseSchema.optional(),
    description: campaignFields.description.optional(),
    sampleMessages: campaignFields.sampleMessages.optional(),
    subscriberOptIn: z.boolean().optional(),
    subscriberHelp: z.boolean().optional(),
    numberPool: z.boolean().optional(),
    messageFlow: campaignFields.messageFlow,
    helpMessage: campaignFields.helpMessage,
    optinMessage: campaignFields.optinMessage,
    optoutMessage: campaignFields.optoutMessage,
    helpKeywords: campaignFields.helpKeywords,
    optinKeywords: campaignFields.optinKeywords,
    optoutKeywords: campaignFields.optoutKeywords,
    embeddedLink: z.boolean().optional(),
    embeddedPhone: z.boolean().optional(),
    ageGated: z.boolean().optional(),
    directLending: z.boolean().optional(),
    affiliateMarketing: z.boolean().optional(),
    subUsecases: z.array(subUsecase).max(5).optional(),
    privacyPolicyLink: campaignFields.privacyPolicyLink,
    termsAndConditionsLink: campaignFields.termsAndConditionsLink,
  })
  .strict()
  .transform((v) => {
    const out: Record<string, unknown> = { ...v };
    for (const k of CAMPAIGN_READ_ONLY) delete out[k];
    return out as Omit<typeof v, (typeof CAMPAIGN_READ_ONLY)[number]>;
  });
/** Parsed campaignUpdateInput. */
export type CampaignUpdateInput = z.output<typeof campaignUpdateInput>;

/** `?dryRun=true` of POST/PUT /compliance/campaigns: lint the request and write nothing. */
export const dryRunQuery = z
  .object({
    dryRun: z
      .enum(['true', 'false'])
      .optional()
      .transform((v) => v === 'true')
      .describe('true: answer the lint report of this request (POST /compliance/campaigns/lint) and write nothing.'),
  })
  .strict();

/**
 * Optional body of POST /compliance/campaigns/{id}/nudge (TCR nudge). Spec 4.2 sends nothing, so no body, `null`
 * or `{}` is the TCR intent REVIEW (nudge pending carrier reviews); APPEAL_REJECTION must be asked for.
 */
export const nudgeInput = z
  .object({
    nudgeIntent: z
      .enum(NUDGE_INTENTS)
      .default('REVIEW')
      .describe('REVIEW (pending carriers, the default) or APPEAL_REJECTION (rejected carriers).'),
    description: z.string().max(1024).optional().describe('Note to the reviewers, at most 1024 characters.'),
  })
  .strict();
/** Parsed nudgeInput. */
export type NudgeInput = z.output<typeof nudgeInput>;
/** What no body, `null` or `{}` means for a nudge (spec 4.2): intent REVIEW. */
export const NUDGE_DEFAULTS: NudgeInput = nudgeInput.parse({});

/** Optional body of POST /compliance/brands/{id}/vetting/apply. */
export const vettingApplyInput = z
  .object({
    evpId: z.enum(EVP_IDS).default('AEGIS').describe('Vetting provider; default AEGIS.'),
    vettingClass: z.enum(VETTING_CLASSES).default('STANDARD').describe('Vetting class; default STANDARD.'),
  })
  .strict();
/** Parsed vettingApplyInput. */
export type VettingApplyInput = z.output<typeof vettingApplyInput>;
/** What no body, `null` or `{}` means for a vetting order: AEGIS, STANDARD. */
export const VETTING_APPLY_DEFAULTS: VettingApplyInput = vettingApplyInput.parse({});

/** Body of number provisioning, assignment and removal: `{numbers: string[]}`, E.164, 1 to 100 per call. */
export const numbersInput = z
  .object({ numbers: z.array(e164).min(1).max(100).describe('E.164 numbers, 1 to 100.') })
  .strict();
/** Parsed numbersInput. */
export type NumbersInput = z.output<typeof numbersInput>;

/** `?limit&cursor` of the paged lists: the one paging rule's schema (src/domain/paging.ts), re-exported. */
export { type PageQuery, pageQuery };

/**
 * `?limit&cursor` of GET /compliance/brands: without `limit`, every brand after `cursor` (spec 4.1: "all brands of
 * the account"); with it, one page (1–200).
 */
export const brandListQuery = pageQuery
  .extend({
    limit: decimalInt(1, 200)
      .optional()
      .describe('Page size, 1–200; omitted: every item (spec 4.1/4.2), streamed, with nextCursor null.'),
  })
  .strict();
/** Parsed brandListQuery. */
export type BrandListQuery = z.output<typeof brandListQuery>;

/** `?limit&cursor&brandId` of GET /compliance/campaigns (without `limit`: every campaign, spec 4.2). */
export const campaignListQuery = brandListQuery
  .extend({ brandId: resourceId.optional().describe('Only campaigns of this brand.') })
  .strict();
/** Parsed campaignListQuery. */
export type CampaignListQuery = z.output<typeof campaignListQuery>;

/** `?limit&cursor` of GET /compliance/did-mapping (a bare array per spec 2.5; next cursor in `x-next-cursor`). */
export const didMappingQuery = z
  .object({
    limit: decimalInt(1, 100_000)
      .default(100_000)
      .describe('Optional page size, 1–100000; by default every DID of the account (spec 4.3).'),
    cursor: z.string().min(1).max(200).optional().describe('`x-next-cursor` header of the previous page.'),
  })
  .strict();
/** Parsed didMappingQuery. */
export type DidMappingQuery = z.output<typeof didMappingQuery>;
