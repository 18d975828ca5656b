import { applyBrandDecision, applyCarrierDecision } from '../../../domain/compliance/registry.decisions.js';
import type { CampaignRegistry } from '../../../domain/compliance/registry.port.js';
import type { DomainContext } from '../../../domain/kernel/context.js';
import { uuidv7 } from '../../../domain/kernel/ids.js';
import {
  type Brand,
  type Campaign,
  Prisma,
  type TcrSubmission,
  type Vetting,
} from '../../../generated/prisma/client.js';
import type { Tx } from '../../db.js';
import { type ClaimedJob, type JobKind, nextAttemptAt, type RetrySchedule } from '../../jobs/job-queue.js';
import { TcrApiError, type TcrBrandRequest, type TcrCampaignRequest, type TcrClient } from './tcr-client.js';
import { applyOperationStatus } from './tcr-events.js';

/** The job kind of TCR CSP API calls in the one job queue (docs/jobs.md). */
export const TCR_JOB = 'tcr-submission';

/**
 * Retries of one CSP API call: 8 attempts, after 30 s, 2 min, 10 min, then hourly (spec 8's schedule, extended:
 * a registry outage of a few hours must not lose a registration). 4xx answers other than 408/429 are final.
 */
export const TCR_SCHEDULE: RetrySchedule = {
  maxAttempts: 8,
  delaysMs: [30_000, 120_000, 600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000],
};

/**
 * The `estimatedDecisionAt` shown for a carrier while TCR has not answered, in ms after submission. TCR publishes
 * no review time; carriers commonly decide within days, so 5 days is shown (an estimate, never a schedule).
 */
export const TCR_EXPECTED_REVIEW_MS = 5 * 86_400_000;

/** Operations of the outbox (`compliance_tcr_submissions.op`). */
export type TcrOp =
  | 'BRAND_SUBMIT'
  | 'VETTING_ORDER'
  | 'CAMPAIGN_SUBMIT'
  | 'CAMPAIGN_NUDGE'
  | 'BRAND_DELETE'
  | 'CAMPAIGN_DELETE'
  | 'OPERATION_STATUS_SYNC';

/** Raised by an op that must wait for an earlier one (e.g. a campaign before its brand has a TCR id): retried. */
class NotYet extends Error {}

const nonEmpty = (v: string | null | undefined): string | undefined =>
  v === null || v === undefined || v === '' ? undefined : v;

/**
 * Our brand as TCR's `createBrand` body (research §5.1). `referenceId` is our brand id: TCR wants it unique per CSP,
 * which the caller's referenceId (unique per account only) is not; it makes a registration retried after a lost
 * answer recognisable at TCR, and webhook events carry it back as `brandReferenceId`.
 */
export function tcrBrandBody(brand: Brand): TcrBrandRequest {
  const soleProp = brand.entityType === 'SOLE_PROPRIETOR';
  return {
    entityType: brand.entityType,
    displayName: brand.displayName ?? brand.name,
    companyName: soleProp ? undefined : brand.name,
    ein: soleProp ? undefined : nonEmpty(brand.ein),
    einIssuingCountry: soleProp ? undefined : brand.country,
    firstName: nonEmpty(brand.firstName),
    lastName: nonEmpty(brand.lastName),
    phone: nonEmpty(brand.phone),
    mobilePhone: nonEmpty(brand.mobilePhone),
    street: nonEmpty(brand.street),
    city: nonEmpty(brand.city),
    state: nonEmpty(brand.state),
    postalCode: nonEmpty(brand.postalCode),
    country: brand.country,
    email: nonEmpty(brand.email),
    stockSymbol: nonEmpty(brand.stockSymbol),
    stockExchange: nonEmpty(brand.stockExchange),
    website: nonEmpty(brand.website),
    vertical: brand.vertical,
    brandRelationship: nonEmpty(brand.brandRelationship),
    altBusinessId: nonEmpty(brand.altBusinessId),
    altBusinessIdType: nonEmpty(brand.altBusinessIdType),
    businessContactEmail: nonEmpty(brand.businessContactEmail),
    referenceId: brand.id,
    mock: brand.mock,
  };
}

/**
 * Our campaign as TCR's `CampaignRequest` (campaign builder). Samples become sample1..sample5; `subscriberOptout` is
 * always true (opt-out handling is mandatory for every carrier and our campaigns have no opt-out switch).
 */
export function tcrCampaignBody(campaign: Campaign, tcrBrandId: string, networkIds: number[]): TcrCampaignRequest {
  const samples: Record<string, string> = {};
  campaign.sampleMessages.slice(0, 5).forEach((s, i) => {
    samples[`sample${i + 1}`] = s;
  });
  return {
    brandId: tcrBrandId,
    usecase: campaign.usecase,
    subUsecases: campaign.subUsecases,
    description: campaign.description,
    ...samples,
    messageFlow: nonEmpty(campaign.messageFlow),
    helpMessage: nonEmpty(campaign.helpMessage),
    optinMessage: nonEmpty(campaign.optinMessage),
    optoutMessage: nonEmpty(campaign.optoutMessage),
    helpKeywords: nonEmpty(campaign.helpKeywords),
    optinKeywords: nonEmpty(campaign.optinKeywords),
    optoutKeywords: nonEmpty(campaign.optoutKeywords),
    subscriberOptin: campaign.subscriberOptIn,
    subscriberOptout: true,
    subscriberHelp: campaign.subscriberHelp,
    embeddedLink: campaign.embeddedLink,
    embeddedPhone: campaign.embeddedPhone,
    numberPool: campaign.numberPool,
    ageGated: campaign.ageGated,
    directLending: campaign.directLending,
    affiliateMarketing: campaign.affiliateMarketing,
    privacyPolicyLink: nonEmpty(campaign.privacyPolicyLink),
    termsAndConditionsLink: nonEmpty(campaign.termsAndConditionsLink),
    mnoIds: networkIds,
    referenceId: campaign.id,
    autoRenewal: true,
  };
}

/**
 * The TCR registry adapter (REGISTRY=tcr; docs/compliance.md "TCR adapter"). Every port call writes an outbox row
 * in the domain's transaction (`compliance_tcr_submissions`) and notifies the job queue; the `tcr-submission` job
 * makes the CSP API call outside any transaction, with retries ({@link TCR_SCHEDULE}), and records TCR's ids in
 * `compliance_tcr_refs`. Decisions come back through the inbound webhook (tcr-events.ts). A call TCR refuses for
 * good is not dropped: the brand fails (feedback OTHERS) or the campaign's pending carriers are rejected
 * (code TCR_REFUSED) with TCR's answer as the reason, and the row stays `failed` with the error.
 */
export class TcrRegistry implements CampaignRegistry {
  readonly name = 'tcr';

  constructor(
    private readonly ctx: DomainContext,
    private readonly client: TcrClient,
  ) {}

  /** Writes one outbox row (inside `tx`) and wakes the job on commit. */
  async enqueue(
    tx: Tx,
    row: { accountId: string; op: TcrOp; brandId?: string; vettingId?: string; campaignId?: string; payload?: object },
  ): Promise<void> {
    const now = this.ctx.clock.now();
    await tx.tcrSubmission.create({
      data: {
        id: uuidv7(),
        accountId: row.accountId,
        op: row.op,
        brandId: row.brandId ?? null,
        vettingId: row.vettingId ?? null,
        campaignId: row.campaignId ?? null,
        payload: (row.payload ?? {}) as Prisma.InputJsonValue,
        nextAttemptAt: now,
        createdAt: now,
      },
    });
    await this.ctx.jobs.notify(tx, TCR_JOB);
  }

  /** Cancels rows not yet claimed (a claimed one finishes; later ops wait for it). */
  async #cancelPending(tx: Tx, where: Prisma.TcrSubmissionWhereInput): Promise<void> {
    await tx.tcrSubmission.updateMany({
      where: { ...where, status: 'pending', lockedBy: null },
      data: { status: 'cancelled', completedAt: this.ctx.clock.now() },
    });
  }

  #estimates(networkIds: number[]): Map<number, Date> {
    const at = new Date(this.ctx.clock.now().getTime() + TCR_EXPECTED_REVIEW_MS);
    return new Map(networkIds.map((n) => [n, at]));
  }

  async submitBrand(tx: Tx, brand: Brand): Promise<void> {
    await this.#cancelPending(tx, { brandId: brand.id, op: 'BRAND_SUBMIT' });
    await this.enqueue(tx, { accountId: brand.accountId, op: 'BRAND_SUBMIT', brandId: brand.id });
  }

  async submitVetting(tx: Tx, vetting: Vetting, brand: Brand): Promise<void> {
    await this.enqueue(tx, {
      accountId: brand.accountId,
      op: 'VETTING_ORDER',
      brandId: brand.id,
      vettingId: vetting.id,
      payload: { evpId: vetting.evpId, vettingClass: vetting.vettingClass },
    });
  }

  async submitCampaign(tx: Tx, campaign: Campaign, networkIds: number[]): Promise<Map<number, Date>> {
    await this.#cancelPending(tx, { campaignId: campaign.id, op: 'CAMPAIGN_SUBMIT' });
    await this.enqueue(tx, {
      accountId: campaign.accountId,
      op: 'CAMPAIGN_SUBMIT',
      brandId: campaign.brandId,
      campaignId: campaign.id,
      payload: { networkIds },
    });
    return this.#estimates(networkIds);
  }

  async #nudge(tx: Tx, campaign: Campaign, networkIds: number[], intent: 'REVIEW' | 'APPEAL_REJECTION', why: string) {
    await this.enqueue(tx, {
      accountId: campaign.accountId,
      op: 'CAMPAIGN_NUDGE',
      campaignId: campaign.id,
      payload: { intent, networkIds, description: why },
    });
    return this.#estimates(networkIds);
  }

  nudgeReview(tx: Tx, campaign: Campaign, networkIds: number[]): Promise<Map<number, Date>> {
    return this.#nudge(tx, campaign, networkIds, 'REVIEW', 'Review requested by the CSP.');
  }

  appealRejection(tx: Tx, campaign: Campaign, networkIds: number[]): Promise<Map<number, Date>> {
    return this.#nudge(tx, campaign, networkIds, 'APPEAL_REJECTION', 'Appeal of the rejection requested by the CSP.');
  }

  /** TCR has no expedite call (research: no public anchor); it is sent as a REVIEW nudge saying so. */
  expedite(tx: Tx, campaign: Campaign, networkIds: number[]): Promise<Map<number, Date>> {
    return this.#nudge(tx, campaign, networkIds, 'REVIEW', 'Expedited review requested by the CSP.');
  }

  async withdrawBrand(tx: Tx, brandId: string): Promise<void> {
    const brand = await tx.brand.findUnique({ where: { id: brandId } });
    await this.#cancelPending(tx, { brandId });
    if (brand) await this.enqueue(tx, { accountId: brand.accountId, op: 'BRAND_DELETE', brandId });
  }

  async withdrawCampaign(tx: Tx, campaignId: string): Promise<void> {
    const campaign = await tx.campaign.findUnique({ where: { id: campaignId } });
    await this.#cancelPending(tx, { campaignId });
    if (campaign) await this.enqueue(tx, { accountId: campaign.accountId, op: 'CAMPAIGN_DELETE', campaignId });
  }

  async #ref(entity: 'brand' | 'campaign' | 'vetting', localId: string): Promise<string | undefined> {
    const ref = await this.ctx.db.tcrRef.findUnique({ where: { entity_localId: { entity, localId } } });
    return ref?.tcrId;
  }

  async #saveRef(entity: 'brand' | 'campaign' | 'vetting', localId: string, tcrId: string, accountId: string) {
    await this.ctx.db.tcrRef.upsert({
      where: { entity_localId: { entity, localId } },
      create: { entity, localId, tcrId, accountId, createdAt: this.ctx.clock.now() },
      update: { tcrId },
    });
  }

  /** Whether an earlier op on the same entity is still unfinished (so this one must wait). */
  async #earlierPending(row: TcrSubmission, where: Prisma.TcrSubmissionWhereInput): Promise<boolean> {
    const n = await this.ctx.db.tcrSubmission.count({
      where: { ...where, status: 'pending', createdAt: { lte: row.createdAt }, id: { not: row.id } },
    });
    return n > 0;
  }

  async #brandRef(brandId: string): Promise<string> {
    const id = await this.#ref('brand', brandId);
    if (!id) throw new NotYet(`brand ${brandId} has no TCR id yet`);
    return id;
  }

  /** Performs one op's HTTP call(s). @throws TcrApiError or NotYet. */
  async #perform(row: TcrSubmission): Promise<void> {
    const payload = (row.payload ?? {}) as Record<string, unknown>;
    switch (row.op as TcrOp) {
      case 'BRAND_SUBMIT': {
        const brand = row.brandId ? await this.ctx.db.brand.findUnique({ where: { id: row.brandId } }) : null;
        if (!brand) return;
        const body = tcrBrandBody(brand);
        const tcrId = await this.#ref('brand', brand.id);
        if (tcrId) {
          await this.client.updateBrand(tcrId, body);
          await this.client.revetBrand(tcrId);
        } else {
          const created = await this.client.createBrand(body);
          if (!created?.brandId) throw new TcrApiError(200, 'createBrand answered without brandId', true);
          await this.#saveRef('brand', brand.id, created.brandId, brand.accountId);
        }
        return;
      }
      case 'VETTING_ORDER': {
        const tcrBrandId = await this.#brandRef(row.brandId ?? '');
        const res = await this.client.orderVetting(tcrBrandId, String(payload.evpId), String(payload.vettingClass));
        if (res?.vettingId && row.vettingId)
          await this.#saveRef('vetting', row.vettingId, res.vettingId, row.accountId);
        return;
      }
      case 'CAMPAIGN_SUBMIT': {
        const campaign = row.campaignId
          ? await this.ctx.db.campaign.findUnique({ where: { id: row.campaignId } })
          : null;
        if (!campaign) return;
        const tcrBrandId = await this.#brandRef(campaign.brandId);
        const networkIds = (payload.networkIds as number[] | undefined) ?? [];
        const body = tcrCampaignBody(campaign, tcrBrandId, networkIds);
        const tcrId = await this.#ref('campaign', campaign.id);
        if (tcrId) {
          // Re-review after an update: TCR edits only some fields (research §4 table), then a REVIEW nudge.
          const { description, messageFlow, helpMessage, sample1, sample2, sample3, sample4, sample5 } = body;
          await this.client.updateCampaign(tcrId, {
            description,
            messageFlow,
            helpMessage,
            sample1,
            sample2,
            sample3,
            sample4,
            sample5,
          });
          await this.client.nudgeCampaign(tcrId, 'REVIEW', 'Campaign updated; please review again.');
        } else {
          const created = await this.client.createCampaign(body);
          if (!created?.campaignId) throw new TcrApiError(200, 'campaignBuilder answered without campaignId', true);
          await this.#saveRef('campaign', campaign.id, created.campaignId, campaign.accountId);
        }
        return;
      }
      case 'CAMPAIGN_NUDGE': {
        const tcrId = await this.#ref('campaign', row.campaignId ?? '');
        if (!tcrId) throw new NotYet(`campaign ${row.campaignId} has no TCR id yet`);
        await this.client.nudgeCampaign(
          tcrId,
          payload.intent === 'APPEAL_REJECTION' ? 'APPEAL_REJECTION' : 'REVIEW',
          String(payload.description ?? ''),
        );
        return;
      }
      case 'BRAND_DELETE':
      case 'CAMPAIGN_DELETE': {
        const entity = row.op === 'BRAND_DELETE' ? 'brand' : 'campaign';
        const localId = (entity === 'brand' ? row.brandId : row.campaignId) ?? '';
        const tcrId = await this.#ref(entity, localId);
        if (!tcrId) {
          // A registration still in flight must finish first, so its TCR id can be deleted.
          const key = entity === 'brand' ? { brandId: localId } : { campaignId: localId };
          if (await this.#earlierPending(row, key)) throw new NotYet(`${entity} ${localId} registration in flight`);
          return;
        }
        if (entity === 'brand') await this.client.deleteBrand(tcrId);
        else await this.client.deleteCampaign(tcrId);
        return;
      }
      case 'OPERATION_STATUS_SYNC': {
        const tcrId = await this.#ref('campaign', row.campaignId ?? '');
        if (!tcrId) return;
        const statuses = await this.client.operationStatus(tcrId);
        await applyOperationStatus(this.ctx, row.campaignId ?? '', statuses, null);
        return;
      }
      default:
        throw new TcrApiError(0, `unknown op ${row.op}`, false);
    }
  }

  /** A call TCR refused for good: the user sees it on the brand or the campaign's pending carriers. */
  async #refused(row: TcrSubmission, message: string): Promise<void> {
    await this.ctx.events.transaction(async (tx, emit) => {
      const now = this.ctx.clock.now();
      if (row.op === 'BRAND_SUBMIT' && row.brandId) {
        const brand = await tx.brand.findUnique({ where: { id: row.brandId } });
        if (brand && brand.status === 'PENDING') {
          await applyBrandDecision(
            tx,
            emit,
            brand,
            {
              status: 'FAILED',
              identityStatus: 'UNVERIFIED',
              feedback: [
                {
                  id: 'OTHERS',
                  displayName: 'Refused by the registry',
                  description: message.slice(0, 1000),
                  fields: [],
                },
              ],
            },
            now,
          );
        }
      } else if (row.op === 'CAMPAIGN_SUBMIT' && row.campaignId) {
        const campaign = await tx.campaign.findUnique({ where: { id: row.campaignId } });
        if (!campaign) return;
        const pending = await tx.campaignCarrier.findMany({ where: { campaignId: campaign.id, status: 'PENDING' } });
        for (const c of pending) {
          const fresh = await tx.campaign.findUniqueOrThrow({ where: { id: campaign.id } });
          await applyCarrierDecision(
            tx,
            emit,
            fresh,
            c.networkId,
            { status: 'REJECTED', reason: `TCR refused the submission: ${message.slice(0, 500)}`, code: 'TCR_REFUSED' },
            now,
            this.ctx,
          );
        }
      }
    });
  }

  async #runClaimed(job: ClaimedJob): Promise<void> {
    const row = await this.ctx.db.tcrSubmission.findFirst({
      where: { id: job.id, lockedBy: job.token, status: 'pending' },
    });
    if (!row) return;
    const now = () => this.ctx.clock.now();
    try {
      await this.#perform(row);
      await this.ctx.db.tcrSubmission.updateMany({
        where: { id: row.id, lockedBy: job.token },
        data: { status: 'done', completedAt: now(), lastError: null, lockedBy: null, lockedUntil: null },
      });
    } catch (err) {
      const apiErr = err instanceof TcrApiError ? err : undefined;
      const retryable = err instanceof NotYet || (apiErr?.retryable ?? true);
      const message = (err as Error).message;
      const retryAt = retryable ? nextAttemptAt(TCR_SCHEDULE, row.attempts, now()) : undefined;
      this.ctx.log.warn(
        { op: row.op, submissionId: row.id, attempt: row.attempts, status: apiErr?.status, retryAt, err: message },
        'TCR call failed',
      );
      const { count } = await this.ctx.db.tcrSubmission.updateMany({
        where: { id: row.id, lockedBy: job.token },
        data: {
          status: retryAt ? 'pending' : 'failed',
          nextAttemptAt: retryAt ?? row.nextAttemptAt,
          completedAt: retryAt ? null : now(),
          lastError: message.slice(0, 2000),
          responseCode: apiErr?.status ?? null,
          lockedBy: null,
          lockedUntil: null,
        },
      });
      if (!retryAt && count === 1) {
        this.ctx.log.error({ op: row.op, submissionId: row.id, err: message }, 'TCR call failed for good');
        await this.#refused(row, message);
      }
    }
  }

  /** The job kind that makes the calls (registered by the composition root when REGISTRY=tcr). */
  jobKind(): JobKind {
    return {
      name: TCR_JOB,
      table: 'compliance_tcr_submissions',
      dueColumn: 'next_attempt_at',
      where: () => Prisma.sql`j.status = 'pending'`,
      attemptsColumn: 'attempts',
      leaseMs: this.ctx.config.TCR_TIMEOUT_MS * 3 + 10_000,
      concurrency: 8,
      // Calls run one after another in creation order, so a campaign follows its brand's registration.
      ordered: true,
      run: (job) => this.#runClaimed(job),
    };
  }
}
