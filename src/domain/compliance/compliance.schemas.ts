import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { z } from 'zod';
import {
  ENTITY_TYPES,
  EVP_IDS,
  NUDGE_INTENTS,
  STOCK_EXCHANGES,
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

const brandFields = {
  name: z.string().trim().min(1).max(255).describe('Legal business name.'),
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
    .max(2048)
    .nullish(),
  email: z.email({ message: 'must be an email address' }).max(320).nullish(),
  phone: e164.nullish().describe('Contact phone, E.164; null clears it.'),
  stockSymbol: z.string().trim().min(1).max(10).nullish().describe('Required for PUBLIC_PROFIT.'),
  stockExchange: z.enum(STOCK_EXCHANGES).nullish().describe('Required for PUBLIC_PROFIT.'),
};

/** TCR rule: PUBLIC_PROFIT needs stockSymbol and stockExchange (runs even when other fields fail, to report all). */
function requireStockFields(value: unknown, ctx: z.RefinementCtx): void {
  const v = (value ?? {}) as { entityType?: unknown; stockSymbol?: unknown; stockExchange?: unknown };
  if (v.entityType !== 'PUBLIC_PROFIT') return;
  for (const field of ['stockSymbol', 'stockExchange'] as const) {
    if (v[field] === undefined || v[field] === null) {
      ctx.addIssue({
        code: 'custom',
        path: [field],
        message: 'is required for entityType PUBLIC_PROFIT',
        params: { code: 'REQUIRED' },
      });
    }
  }
}

/** Read-only fields of a response; accepted and ignored on PUT so a client may send back what it read. */
function readOnly<K extends string>(keys: readonly K[]) {
  return Object.fromEntries(keys.map((k) => [k, z.unknown().optional()])) as Record<K, z.ZodOptional<z.ZodUnknown>>;
}

/** Body of POST /compliance/brands (spec 2.1). */
export const brandInput = z
  .object(brandFields)
  .strict()
  .superRefine(requireStockFields, { when: () => true });

const BRAND_READ_ONLY = ['id', 'status', 'identityStatus', 'createdAt', 'updatedAt'] as const;

/**
 * Body of PUT /compliance/brands/{id}: the same fields as registration (optional fields left out are cleared);
 * the read-only fields of a brand are accepted and ignored.
 */
export const brandUpdateInput = z
  .object({ ...brandFields, ...readOnly(BRAND_READ_ONLY) })
  .strict()
  .superRefine(requireStockFields, { when: () => true })
  .transform(({ id: _i, status: _s, identityStatus: _is, createdAt: _c, updatedAt: _u, ...rest }) => rest);
/** Parsed brandInput. */
export type BrandInput = z.output<typeof brandInput>;

const usecaseSchema = z.preprocess(
  (v) => (typeof v === 'string' && USECASE_ALIASES[v] ? USECASE_ALIASES[v] : v),
  z.enum(USECASES),
);

const campaignFields = {
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
};

/** Body of POST /compliance/campaigns (spec 2.3). */
export const campaignInput = z.object(campaignFields).strict();
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
  'createdAt',
  'updatedAt',
] as const;

/**
 * Body of PUT /compliance/campaigns/{id}: any of the campaign fields; fields left out keep their value. brandId
 * and usecase may be sent but not changed (TCR: a campaign's brand and use case are fixed); the read-only fields
 * of a campaign are accepted and ignored.
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
  })
  .strict()
  .transform((v) => {
    const out: Record<string, unknown> = { ...v };
    for (const k of CAMPAIGN_READ_ONLY) delete out[k];
    return out as Omit<typeof v, (typeof CAMPAIGN_READ_ONLY)[number]>;
  });
/** Parsed campaignUpdateInput. */
export type CampaignUpdateInput = z.output<typeof campaignUpdateInput>;

/** Body of POST /compliance/campaigns/{id}/nudge (TCR nudge). */
export const nudgeInput = z
  .object({
    nudgeIntent: z.enum(NUDGE_INTENTS).describe('REVIEW (pending carriers) or APPEAL_REJECTION (rejected carriers).'),
    description: z.string().max(1024).optional().describe('Note to the reviewers, at most 1024 characters.'),
  })
  .strict();
/** Parsed nudgeInput. */
export type NudgeInput = z.output<typeof nudgeInput>;

/** Optional body of POST /compliance/brands/{id}/vetting/apply. */
export const vettingApplyInput = z
  .object({
    evpId: z.enum(EVP_IDS).default('AEGIS').describe('Vetting provider; default AEGIS.'),
    vettingClass: z.enum(VETTING_CLASSES).default('STANDARD').describe('Vetting class; default STANDARD.'),
  })
  .strict();
/** Parsed vettingApplyInput. */
export type VettingApplyInput = z.output<typeof vettingApplyInput>;

/** Body of number provisioning, assignment and removal: `{numbers: string[]}`, E.164, 1 to 100 per call. */
export const numbersInput = z
  .object({ numbers: z.array(e164).min(1).max(100).describe('E.164 numbers, 1 to 100.') })
  .strict();
/** Parsed numbersInput. */
export type NumbersInput = z.output<typeof numbersInput>;

/** `?limit&cursor` of the paged lists (README "Paging"). */
export const pageQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(200).default(50).describe('Page size, 1–200, default 50.'),
    cursor: z.string().min(1).max(200).optional().describe('`nextCursor` of the previous page.'),
  })
  .strict();
/** Parsed pageQuery. */
export type PageQuery = z.output<typeof pageQuery>;

/** `?limit&cursor&brandId` of GET /compliance/campaigns. */
export const campaignListQuery = pageQuery
  .extend({ brandId: z.string().min(1).optional().describe('Only campaigns of this brand.') })
  .strict();

/** `?limit&cursor` of GET /compliance/did-mapping (a bare array per spec 2.5; next cursor in `x-next-cursor`). */
export const didMappingQuery = z
  .object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(100_000)
      .describe('Optional page size, 1–100000; by default every DID of the account (spec 4.3).'),
    cursor: z.string().min(1).max(200).optional().describe('`x-next-cursor` header of the previous page.'),
  })
  .strict();
