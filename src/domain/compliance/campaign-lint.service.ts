import { type Actor, requireScope } from '../accounts/account.service.js';
import type { DomainContext } from '../kernel/context.js';
import type { Db, Tx } from '../kernel/db.js';
import { detailsFromZod } from '../validation.js';
import { qualification } from './brand.service.js';
import { type BrandRecord, findBrand } from './brand.store.js';
import {
  type CarrierPrediction,
  type LintBrand,
  type LintCampaign,
  type LintFinding,
  lintRules,
  predictCarriers,
} from './campaign.lint.js';
import { findOwnCampaign } from './campaign.service.js';
import type { CampaignRecord } from './campaign.store.js';
import { campaignInput, campaignUpdateInput } from './compliance.schemas.js';

/** Result of POST /compliance/campaigns/lint (and of `?dryRun=true`). */
export interface LintReport {
  /** True when no finding is an error: every carrier would approve (the sandbox's carriers do). */
  passes: boolean;
  errorCount: number;
  warningCount: number;
  findings: LintFinding[];
  /** Each carrier's predicted decision. */
  carriers: CarrierPrediction[];
}

/** Codes of validation details the content rules report themselves (with a fix), so they are not listed twice. */
const COVERED = new Set(['description:TOO_SHORT', 'messageFlow:TOO_SHORT', 'subUsecases:SUBUSECASE_COUNT']);

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const strOrNull = (v: unknown) => (typeof v === 'string' ? v : v === null ? null : undefined);
const bool = (v: unknown) => (typeof v === 'boolean' ? v : undefined);
const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);

/** The readable parts of a raw request body (wrongly typed fields are left out; validation reports them). */
export function draftOf(raw: Record<string, unknown>): LintCampaign {
  const usecase = str(raw.usecase);
  return {
    usecase: usecase === 'DELIVERY_NOTIFICATION' ? 'DELIVERY_NOTIFICATIONS' : usecase,
    description: str(raw.description),
    sampleMessages: strings(raw.sampleMessages)?.map((s) => s.trim()),
    subscriberOptIn: bool(raw.subscriberOptIn),
    subscriberHelp: bool(raw.subscriberHelp),
    messageFlow: strOrNull(raw.messageFlow),
    helpMessage: strOrNull(raw.helpMessage),
    optinMessage: strOrNull(raw.optinMessage),
    optoutMessage: strOrNull(raw.optoutMessage),
    optoutKeywords: strOrNull(raw.optoutKeywords),
    embeddedLink: bool(raw.embeddedLink),
    embeddedPhone: bool(raw.embeddedPhone),
    subUsecases: strings(raw.subUsecases),
  };
}

/**
 * Lints a draft against its brand: loads the brand (of the actor's account) and runs the content rules. Unknown
 * brands give a BRAND_NOT_FOUND finding. Writes nothing.
 */
export async function lintDraft(
  db: Db | Tx,
  actor: Actor,
  brandId: string | undefined,
  draft: LintCampaign,
  extra: LintFinding[] = [],
): Promise<LintReport> {
  const findings = [...extra];
  let brand: LintBrand | null = null;
  if (brandId) {
    const row = await findBrand(db, actor.accountId, brandId);
    if (!row) {
      findings.push({
        code: 'BRAND_NOT_FOUND',
        severity: 'error',
        field: 'brandId',
        message: `No brand ${brandId} in this account.`,
        fix: 'Register the brand first (POST /compliance/brands) and use its id.',
        networkIds: [],
      });
    } else {
      const q = draft.usecase ? qualification(row).usecases.find((u) => u.usecase === draft.usecase) : undefined;
      brand = {
        name: row.name,
        displayName: row.displayName,
        status: row.status,
        usecaseBlockedReason: q && !q.qualifies ? q.reason : null,
      };
    }
  }
  findings.push(...lintRules(draft, brand));
  const errorCount = findings.filter((f) => f.severity === 'error').length;
  return {
    passes: errorCount === 0,
    errorCount,
    warningCount: findings.length - errorCount,
    findings,
    carriers: predictCarriers(findings),
  };
}

/** Validation details of a body as error findings (carriers do not decide on them: the request would be refused). */
export function validationFindings(details: { code: string; field: string; message: string }[]): LintFinding[] {
  return details
    .filter((d) => !COVERED.has(`${d.field}:${d.code}`))
    .map((d) => ({
      code: d.code,
      severity: 'error' as const,
      field: d.field,
      message: `${d.field} ${d.message}`,
      fix: 'Correct the field; POST /compliance/campaigns answers 400 with this detail.',
      networkIds: [],
    }));
}

/**
 * POST /compliance/campaigns/lint (issue 14): the body of POST /compliance/campaigns, checked for every likely
 * rejection cause (campaign.lint.ts) plus its validation errors, without writing anything. Always 200 for a JSON
 * object; `passes` says whether the campaign would be approved.
 */
export async function lintCampaign(ctx: DomainContext, actor: Actor, input: unknown): Promise<LintReport> {
  requireScope(actor, 'compliance');
  const raw = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  const parsed = campaignInput.safeParse(raw);
  const extra = parsed.success ? [] : validationFindings(detailsFromZod(parsed.error, raw));
  return lintDraft(ctx.db, actor, str(raw.brandId), draftOf(raw), extra);
}

/**
 * PUT /compliance/campaigns/{id}?dryRun=true: the campaign as it would be after the update, linted; writes nothing.
 * @throws NotFoundError for a campaign of another account.
 */
export async function lintCampaignUpdate(
  ctx: DomainContext,
  actor: Actor,
  id: string,
  input: unknown,
): Promise<LintReport> {
  requireScope(actor, 'compliance');
  const current = await findOwnCampaign(ctx.db, actor, id);
  const raw = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  const parsed = campaignUpdateInput.safeParse(raw);
  const extra = parsed.success ? [] : validationFindings(detailsFromZod(parsed.error, raw));
  const merged: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(raw)) if (k !== 'brandId' && k !== 'usecase') merged[k] = v;
  return lintDraft(ctx.db, actor, current.brandId, draftOf(merged), extra);
}

/**
 * The findings a carrier review decides on, for a stored campaign and its brand (used by the sandbox registry's
 * carriers, src/infra/registry/sandbox.rules.ts, so its decisions match the lint).
 */
export function reviewFindings(campaign: CampaignRecord, brand: BrandRecord): LintFinding[] {
  const q = qualification(brand).usecases.find((u) => u.usecase === campaign.usecase);
  return lintRules(draftOf(campaign as unknown as Record<string, unknown>), {
    name: brand.name,
    displayName: brand.displayName,
    status: brand.status,
    usecaseBlockedReason: q && !q.qualifies ? q.reason : null,
  });
}
