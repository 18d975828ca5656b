import type { ErrorDetail } from '../errors.js';
import type { Emit } from '../events/event-log.js';
import type { DomainContext } from '../kernel/context.js';
import type { Tx } from '../kernel/db.js';
import type { JobKind } from '../kernel/jobs.js';
import { DID_STATES, type DidState } from './compliance.enums.js';
import {
  claimedNumber,
  dueNumbersWhere,
  failPendingAssignments,
  type NumberChange,
  type NumberRecord,
  updateNumber,
  waitingNumbersOfCampaign,
} from './number.store.js';

/**
 * The number (DID) lifecycle (spec 3 "DID states warming, active, cooling (carried by did.state_changed)"; issue 14):
 *
 *   unassigned ──assign to an APPROVED campaign──► warming ──DID_WARMUP_MS──► active
 *   warming/active ──removed, or campaign deleted──► cooling ──DID_COOLDOWN_MS──► unassigned
 *
 * A number assigned to a campaign that is not approved yet waits in assignment status PENDING_ASSIGNMENT (state
 * unassigned) and starts warming when the campaign is approved; it becomes FAILED_ASSIGNMENT (with failureReasons)
 * when the campaign is rejected or suspended. Every state change emits one did.state_changed
 * `{number, previousState, state, assignmentStatus, campaignId, cause}` in the transaction of the change. Timings
 * come from config and ctx.clock; the due moves are jobs of the one queue ({@link didLifecycleJobKind}) over
 * `compliance_numbers.state_due_at` (a per-number due time, so cancelling is clearing a column).
 */

/** Why a DID state changed (the `cause` of did.state_changed). */
export type DidCause =
  | 'ASSIGNED'
  | 'CAMPAIGN_APPROVED'
  | 'WARMUP_COMPLETE'
  | 'REMOVED'
  | 'CAMPAIGN_DELETED'
  | 'COOLDOWN_COMPLETE';

/** Lifecycle jobs in flight per instance. */
const BATCH = 100;

async function changeState(
  tx: Tx,
  emit: Emit,
  n: NumberRecord,
  to: DidState,
  data: NumberChange,
  cause: DidCause,
  now: Date,
): Promise<void> {
  const updated = await updateNumber(tx, n.number, { ...data, state: to, stateChangedAt: now });
  await emit(n.accountId, 'did.state_changed', {
    number: n.number,
    previousState: n.state,
    state: to,
    assignmentStatus: updated.assignmentStatus,
    campaignId: updated.campaignId ?? updated.lastCampaignId ?? n.campaignId ?? n.lastCampaignId,
    cause,
  });
}

/**
 * Starts the warm-up of `numbers` just linked to an APPROVED campaign, or of a campaign's numbers waiting in
 * PENDING_ASSIGNMENT / FAILED_ASSIGNMENT when it becomes APPROVED: ASSIGNED, warming, due after DID_WARMUP_MS.
 */
export async function startWarmup(
  ctx: DomainContext,
  tx: Tx,
  emit: Emit,
  numbers: NumberRecord[],
  cause: DidCause,
  now: Date,
): Promise<void> {
  const due = new Date(now.getTime() + ctx.config.DID_WARMUP_MS);
  for (const n of numbers) {
    if (n.state !== 'unassigned') continue;
    await changeState(
      tx,
      emit,
      n,
      'warming',
      { assignmentStatus: 'ASSIGNED', failureReasons: [], stateDueAt: due },
      cause,
      now,
    );
  }
}

/**
 * Unlinks numbers from their campaign (removal or campaign deletion). Warming or active numbers start cooling
 * (PENDING_UNASSIGNMENT, due after DID_COOLDOWN_MS); numbers that never warmed are simply unlinked.
 */
export async function startCooldown(
  ctx: DomainContext,
  tx: Tx,
  emit: Emit,
  numbers: NumberRecord[],
  cause: DidCause,
  now: Date,
): Promise<void> {
  const due = new Date(now.getTime() + ctx.config.DID_COOLDOWN_MS);
  for (const n of numbers) {
    const unlink = { campaignId: null, assignedAt: null, lastCampaignId: n.campaignId };
    if (n.state === 'warming' || n.state === 'active') {
      await changeState(
        tx,
        emit,
        n,
        'cooling',
        { ...unlink, assignmentStatus: 'PENDING_UNASSIGNMENT', stateDueAt: due },
        cause,
        now,
      );
    } else {
      await updateNumber(tx, n.number, {
        ...unlink,
        lastCampaignId: null,
        assignmentStatus: null,
        failureReasons: [],
        stateDueAt: null,
      });
    }
  }
}

/**
 * Follows a campaign's status change: APPROVED starts the warm-up of its waiting numbers; REJECTED or SUSPENDED
 * fails their pending assignment with a reason (Telnyx FAILED_ASSIGNMENT + failureReasons).
 */
export async function onCampaignStatus(
  ctx: DomainContext,
  tx: Tx,
  emit: Emit,
  campaignId: string,
  status: string,
  now: Date,
): Promise<void> {
  if (status === 'APPROVED') {
    const waiting = await waitingNumbersOfCampaign(tx, campaignId);
    await startWarmup(ctx, tx, emit, waiting, 'CAMPAIGN_APPROVED', now);
  } else if (status === 'REJECTED' || status === 'SUSPENDED') {
    await failPendingAssignments(tx, campaignId, [
      {
        code: status === 'REJECTED' ? 'CAMPAIGN_REJECTED' : 'CAMPAIGN_SUSPENDED',
        message: `The campaign is ${status}; numbers can only be provisioned on an approved campaign. Appeal or fix it; the assignment resumes once it is approved.`,
      },
    ]);
  }
}

/** The job kind name of the DID lifecycle (also its wake-up channel payload). */
export const DID_LIFECYCLE_JOB = 'did-lifecycle';

/**
 * The job kind that ends warm-ups (→ active) and cool-downs (→ unassigned) whose time has come: each number whose
 * `state_due_at` has passed is a job of the one queue (claimed with a lease and a token, docs/jobs.md). The move is
 * fenced by the claim: it applies only while the row still carries this claim's token and the due time it was
 * claimed for, so a removal, a release or another instance in between makes it a no-op.
 */
export function didLifecycleJobKind(ctx: DomainContext): JobKind {
  return {
    name: DID_LIFECYCLE_JOB,
    table: 'compliance_numbers',
    idColumn: 'number',
    dueColumn: 'state_due_at',
    where: dueNumbersWhere,
    concurrency: BATCH,
    run: async (job) => {
      await ctx.events.transaction(async (tx, emit) => {
        const n = await claimedNumber(tx, job.id, job.token);
        if (!n) return; // the claim was lost, or the number is gone
        const now = ctx.clock.now();
        const release = { lockedBy: null, lockedUntil: null };
        if (!n.stateDueAt || n.stateDueAt > now) {
          await updateNumber(tx, n.number, release);
          return;
        }
        if (n.state === 'warming') {
          await changeState(tx, emit, n, 'active', { ...release, stateDueAt: null }, 'WARMUP_COMPLETE', now);
        } else if (n.state === 'cooling') {
          await changeState(
            tx,
            emit,
            n,
            'unassigned',
            { ...release, stateDueAt: null, assignmentStatus: null, lastCampaignId: null },
            'COOLDOWN_COMPLETE',
            now,
          );
        } else {
          await updateNumber(tx, n.number, { ...release, stateDueAt: null });
        }
      });
    },
  };
}

/**
 * Ingest rules of POST /api/events for types whose payload the service defines: did.state_changed must carry a DID
 * state ({@link DID_STATES}) in `state` and, when present, in `previousState`.
 * @returns one detail per violation (code INVALID_DID_STATE, field payload.state / payload.previousState).
 */
export function ingestPayloadIssues(eventType: string, payload: Record<string, unknown>): ErrorDetail[] {
  if (eventType !== 'did.state_changed') return [];
  const out: ErrorDetail[] = [];
  for (const key of ['state', 'previousState'] as const) {
    const v = payload[key];
    if (key === 'previousState' && (v === undefined || v === null)) continue;
    if (typeof v !== 'string' || !(DID_STATES as readonly string[]).includes(v)) {
      out.push({
        code: 'INVALID_DID_STATE',
        field: `payload.${key}`,
        message: `must be one of ${DID_STATES.join(', ')}`,
      });
    }
  }
  return out;
}
