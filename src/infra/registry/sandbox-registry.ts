import {
  applyBrandDecision,
  applyCarrierDecision,
  applyVettingDecision,
} from '../../domain/compliance/registry.decisions.js';
import type { CampaignRegistry } from '../../domain/compliance/registry.port.js';
import { WRITE_OK } from '../../domain/events/event-log.js';
import type { DomainContext } from '../../domain/kernel/context.js';
import { uuidv7 } from '../../domain/kernel/ids.js';
import { type Brand, type Campaign, Prisma, type RegistryTask, type Vetting } from '../../generated/prisma/client.js';
import type { Tx } from '../db.js';
import type { ClaimedJob, JobKind } from '../jobs/job-queue.js';
import { brandDecision, carrierDecision, carrierDelayMs, SANDBOX_DELAYS, vettingDecision } from './sandbox.rules.js';

/** The job kind of the simulator's scheduled decisions in the job queue (src/infra/jobs; docs/jobs.md). */
export const REGISTRY_JOB = 'registry-task';
/** Due tasks claimed per tick (applied one after another, in due order). */
const BATCH = 100;
/** How long a task whose decision threw waits before it is tried again, in ms. */
const RETRY_MS = 60_000;

/**
 * The default registry adapter: a simulator whose schedule is rows of `compliance_registry_tasks` (one per future
 * decision, with `dueAt`), so it survives restarts and is shared by several instances. Time comes from ctx.clock;
 * every delay is divided by REGISTRY_TIME_SCALE. Outcomes follow sandbox.rules.ts, evaluated when a task runs.
 */
export class SandboxRegistry implements CampaignRegistry {
  readonly name = 'sandbox';

  constructor(private readonly ctx: DomainContext) {}

  #at(delayMs: number): Date {
    return new Date(this.ctx.clock.now().getTime() + delayMs / this.ctx.config.REGISTRY_TIME_SCALE);
  }

  async #schedule(
    tx: Tx,
    task: Pick<RegistryTask, 'accountId' | 'kind'> & Partial<RegistryTask>,
    dueAt: Date,
  ): Promise<Date> {
    await tx.registryTask.create({
      data: {
        id: uuidv7(),
        accountId: task.accountId,
        kind: task.kind,
        brandId: task.brandId ?? null,
        vettingId: task.vettingId ?? null,
        campaignId: task.campaignId ?? null,
        networkId: task.networkId ?? null,
        dueAt,
        createdAt: this.ctx.clock.now(),
      },
    });
    return dueAt;
  }

  async submitBrand(tx: Tx, brand: Brand): Promise<void> {
    // The earlier decision (if any) replaced by a new one, in one statement (one round trip of the brand's write).
    await tx.$executeRaw`
      WITH old AS (DELETE FROM compliance_registry_tasks WHERE brand_id = ${brand.id} AND kind = 'BRAND_DECISION'),
           write_ok AS (SELECT true AS ok)
      ${this.#brandDecision(brand)}`;
  }

  submitNewBrandChanges(brand: Brand): Prisma.Sql[] {
    // A new brand has no earlier decision to replace: one row.
    return [this.#brandDecision(brand)];
  }

  /** The INSERT of a brand's decision task, due after SANDBOX_DELAYS.brandDecisionMs; runs when {@link WRITE_OK}. */
  #brandDecision(brand: Brand): Prisma.Sql {
    return Prisma.sql`INSERT INTO compliance_registry_tasks (id, account_id, kind, brand_id, due_at, created_at)
        SELECT ${uuidv7()}, ${brand.accountId}, 'BRAND_DECISION', ${brand.id}, ${this.#at(SANDBOX_DELAYS.brandDecisionMs)}::timestamptz,
               ${this.ctx.clock.now()}::timestamptz WHERE ${WRITE_OK}`;
  }

  async submitVetting(tx: Tx, vetting: Vetting, brand: Brand): Promise<void> {
    await this.#schedule(
      tx,
      { accountId: brand.accountId, kind: 'VETTING_DECISION', brandId: brand.id, vettingId: vetting.id },
      this.#at(SANDBOX_DELAYS.vettingMs),
    );
  }

  async #reschedule(
    tx: Tx,
    campaign: Campaign,
    networkIds: number[],
    dueAtOf: (networkId: number, index: number, current?: Date) => Date,
  ) {
    const current = await tx.registryTask.findMany({
      where: { campaignId: campaign.id, kind: 'CARRIER_DECISION', networkId: { in: networkIds } },
    });
    await tx.registryTask.deleteMany({
      where: { campaignId: campaign.id, kind: 'CARRIER_DECISION', networkId: { in: networkIds } },
    });
    const out = new Map<number, Date>();
    let index = 0;
    for (const networkId of networkIds) {
      const existing = current.find((t) => t.networkId === networkId)?.dueAt;
      const dueAt = dueAtOf(networkId, index++, existing);
      out.set(
        networkId,
        await this.#schedule(
          tx,
          { accountId: campaign.accountId, kind: 'CARRIER_DECISION', campaignId: campaign.id, networkId },
          dueAt,
        ),
      );
    }
    return out;
  }

  submitCampaign(tx: Tx, campaign: Campaign, networkIds: number[]): Promise<Map<number, Date>> {
    return this.#reschedule(tx, campaign, networkIds, (networkId) => this.#at(carrierDelayMs(networkId)));
  }

  nudgeReview(tx: Tx, campaign: Campaign, networkIds: number[]): Promise<Map<number, Date>> {
    const now = this.ctx.clock.now().getTime();
    const floor = SANDBOX_DELAYS.nudgeFloorMs / this.ctx.config.REGISTRY_TIME_SCALE;
    return this.#reschedule(tx, campaign, networkIds, (networkId, _i, current) => {
      const remaining = (current?.getTime() ?? this.#at(carrierDelayMs(networkId)).getTime()) - now;
      return new Date(now + Math.max(floor, Math.min(remaining, Math.round(remaining / 2))));
    });
  }

  appealRejection(tx: Tx, campaign: Campaign, networkIds: number[]): Promise<Map<number, Date>> {
    return this.#reschedule(tx, campaign, networkIds, () => this.#at(SANDBOX_DELAYS.appealMs));
  }

  expedite(tx: Tx, campaign: Campaign, networkIds: number[]): Promise<Map<number, Date>> {
    return this.#reschedule(tx, campaign, networkIds, (_n, index, current) => {
      const expedited = this.#at(SANDBOX_DELAYS.expediteStepMs * (index + 1));
      return current && current < expedited ? current : expedited;
    });
  }

  async withdrawBrand(tx: Tx, brandId: string): Promise<void> {
    await tx.registryTask.deleteMany({ where: { brandId } });
  }

  async withdrawCampaign(tx: Tx, campaignId: string): Promise<void> {
    await tx.registryTask.deleteMany({ where: { campaignId } });
  }

  /**
   * Runs one claimed task in its own transaction. The task row is deleted first, fenced by the claim token: if its
   * lease ran out and another instance took it, or it was withdrawn meanwhile, the delete counts 0 and nothing
   * happens, so each decision is applied once.
   * @returns whether this call applied the task.
   */
  async #run(task: RegistryTask, token: string): Promise<boolean> {
    return this.ctx.events.transaction(async (tx, emit) => {
      const { count } = await tx.registryTask.deleteMany({ where: { id: task.id, lockedBy: token } });
      if (count === 0) return false;
      const now = this.ctx.clock.now();
      if (task.kind === 'BRAND_DECISION' && task.brandId) {
        const brand = await tx.brand.findUnique({ where: { id: task.brandId } });
        if (brand) await applyBrandDecision(tx, emit, brand, brandDecision(brand), now);
      } else if (task.kind === 'VETTING_DECISION' && task.vettingId) {
        const vetting = await tx.vetting.findUnique({ where: { id: task.vettingId }, include: { brand: true } });
        if (vetting) await applyVettingDecision(tx, emit, vetting, vettingDecision(vetting.brand), now);
      } else if (task.kind === 'CARRIER_DECISION' && task.campaignId && task.networkId !== null) {
        const campaign = await tx.campaign.findUnique({ where: { id: task.campaignId }, include: { brand: true } });
        if (campaign) {
          await applyCarrierDecision(
            tx,
            emit,
            campaign,
            task.networkId,
            carrierDecision(campaign, campaign.brand, task.networkId),
            now,
            this.ctx,
          );
        }
      }
      return true;
    });
  }

  async #runClaimed(job: ClaimedJob): Promise<void> {
    const task = await this.ctx.db.registryTask.findFirst({ where: { id: job.id, lockedBy: job.token } });
    if (!task) return;
    try {
      await this.#run(task, job.token);
    } catch (err) {
      // One failing decision must not hold back the rest of the schedule: log it and retry it later.
      this.ctx.log.error({ err, taskId: task.id, kind: task.kind }, 'sandbox registry task failed');
      await this.ctx.db.registryTask.updateMany({
        where: { id: task.id, lockedBy: job.token },
        data: { dueAt: new Date(this.ctx.clock.now().getTime() + RETRY_MS), lockedBy: null, lockedUntil: null },
      });
    }
  }

  /** The job kind that applies due decisions, one after another in due order (registered by the composition root). */
  jobKind(): JobKind {
    return {
      name: REGISTRY_JOB,
      table: 'compliance_registry_tasks',
      dueColumn: 'due_at',
      where: () => Prisma.sql`TRUE`,
      concurrency: BATCH,
      ordered: true,
      run: (job) => this.#runClaimed(job),
    };
  }
}
