import type { DomainContext } from '../kernel/context.js';
import { type JobKind, nextAttemptAt, type RetrySchedule, SPEC8_SCHEDULE } from '../kernel/jobs.js';
import { buildAgentPrompt } from './agent.context.js';
import { emitAgentSkipped } from './agent.events.js';
import {
  type AgentJob,
  agentById,
  claimedAgentJob,
  countAnswersSince,
  lockIdentityRow,
  pendingAgentJobs,
  updateClaimedAgentJob,
} from './agent.store.js';
import { answerRefusal, writeAgentDraft } from './draft.agent.js';
import { AGENT_JOB } from './email.jobs.js';
import { identityById } from './identity.store.js';
import { dispatchMessage, queueOutbound, replyPlan } from './outbound.service.js';
import { isAuthenticated } from './sender-auth.js';
import { type EmailMessage, messageById, threadById } from './thread.store.js';

export { AGENT_JOB };

/** Model attempts per inbound message: 3, after 30 s and 2 min (the start of the spec 8 schedule). */
export const MODEL_SCHEDULE: RetrySchedule = { maxAttempts: 3, delaysMs: SPEC8_SCHEDULE.delaysMs };
/** Agent jobs answered at once per instance. */
const AGENT_CONCURRENCY = 10;

/** An agent job as its claim holds it (`lockedBy` is the claim token). */
export type ClaimedAgentJob = AgentJob & { lockedBy: string };

/*
 * Every write of a job is fenced by its claim (`updateClaimedAgentJob`: still pending and claimed by its token) and
 * clears the claim, so a dispatcher whose lease ran out and was taken over cannot overwrite the new owner's outcome.
 */

/** Thrown inside the answer transaction when the claim was lost: rolls the reply back. */
class ClaimLost extends Error {}

/** Marks the job `skipped` with `reason` and emits `email.agent.skipped` (fenced by the claim). */
async function skip(ctx: DomainContext, job: ClaimedAgentJob, message: EmailMessage, reason: string): Promise<void> {
  await ctx.events.transaction(async (tx, emit) => {
    const count = await updateClaimedAgentJob(tx, job, { status: 'skipped', reason, updatedAt: ctx.clock.now() });
    if (count === 0) return;
    await emitAgentSkipped(
      emit,
      { id: job.identityId, accountId: job.accountId },
      { agentId: job.agentId, threadId: message.threadId, messageId: message.messageId, reason },
    );
  });
}

/**
 * Which answer budget `sender` has exhausted at `identityId` within the window (AGENT_REPLY_WINDOW_MINUTES): the
 * per-sender one (AGENT_REPLIES_PER_SENDER answers to that address) or the per-identity one
 * (AGENT_REPLIES_PER_IDENTITY answers to anyone, so many distinct or forged senders cannot make the agent a mass
 * mailer); undefined while both allow another answer.
 */
async function exhaustedBudget(
  ctx: DomainContext,
  db: Parameters<typeof countAnswersSince>[0],
  identityId: string,
  sender: string,
): Promise<'REPLY_BUDGET_EXHAUSTED' | 'IDENTITY_REPLY_BUDGET_EXHAUSTED' | undefined> {
  const windowStart = new Date(ctx.clock.now().getTime() - ctx.config.AGENT_REPLY_WINDOW_MINUTES * 60_000);
  const toSender = await countAnswersSince(db, identityId, windowStart, sender);
  if (toSender >= ctx.config.AGENT_REPLIES_PER_SENDER) return 'REPLY_BUDGET_EXHAUSTED';
  const toAnyone = await countAnswersSince(db, identityId, windowStart);
  return toAnyone >= ctx.config.AGENT_REPLIES_PER_IDENTITY ? 'IDENTITY_REPLY_BUDGET_EXHAUSTED' : undefined;
}

/**
 * Answers one inbound message with the identity's agent (spec 6.3): checks that the identity is still active and
 * has an agent and that the sender is authenticated (else `skipped` SENDER_NOT_AUTHENTICATED, unless the identity's
 * replyMode is `draft` and the mail is not spam), that the sender is neither suppressed nor blocked outbound (else
 * `skipped` RECIPIENT_SUPPRESSED / RECIPIENT_BLOCKED), applies the reply
 * budgets (at most AGENT_REPLIES_PER_SENDER answers to one sender and AGENT_REPLIES_PER_IDENTITY answers in all per
 * identity within AGENT_REPLY_WINDOW_MINUTES; beyond them the job is `skipped` REPLY_BUDGET_EXHAUSTED or
 * IDENTITY_REPLY_BUDGET_EXHAUSTED), builds the
 * prompt, asks the model, then in one transaction stores the reply (`Auto-Submitted: auto-replied`, threaded on the
 * newest message), marks the job `answered` and emits `email.agent.response`; finally the reply is dispatched. In
 * replyMode `draft` the answer is stored as a draft instead (src/domain/email/draft.agent.ts: `email.draft.created`,
 * job `answered` with reason DRAFTED) and nothing is sent.
 * The budget is checked before the model call (to save it) and again, atomically with consuming it, in that
 * transaction: it first locks the identity row (`SELECT … FOR UPDATE`), so answers of one identity are stored one at
 * a time across instances, recounts, and then either stores the answer or skips the job REPLY_BUDGET_EXHAUSTED.
 * `job.lockedBy` must be the caller's claim token: every write of the job is fenced by it, and when the claim was
 * lost meanwhile nothing is stored or sent.
 * A model error schedules a retry on {@link MODEL_SCHEDULE}; after its last attempt the job is `failed` (reason MODEL_ERROR,
 * `lastError`) and `email.agent.failed` is emitted. The inbound message itself was stored before and stays.
 */
export async function processAgentJob(ctx: DomainContext, job: ClaimedAgentJob): Promise<void> {
  const message = await messageById(ctx.db, job.messageRowId);
  const identity = await identityById(ctx.db, job.identityId);
  if (identity?.status !== 'active') return skip(ctx, job, message, 'IDENTITY_DEPROVISIONING');
  const agent = identity.agentId ? await agentById(ctx.db, identity.agentId) : null;
  if (!agent?.textModel) return skip(ctx, job, message, 'AGENT_UNASSIGNED');
  // Decided when the mail was stored; checked again so no path answers a sender that is not authenticated. In
  // replyMode draft such a sender gets a draft for a person instead (docs/email.md "Drafts"); spam never does.
  const drafting = identity.replyMode === 'draft';
  const unauthenticated = !isAuthenticated(message.authentication);
  if (unauthenticated && (!drafting || message.labels.includes('spam'))) {
    return skip(ctx, job, message, 'SENDER_NOT_AUTHENTICATED');
  }
  // A suppressed or blocked sender gets no agent mail (nor a draft): skipped with that code as the reason.
  const refused = await answerRefusal(ctx.db, identity, message.from);
  if (refused) return skip(ctx, job, message, refused);
  const exhausted = await exhaustedBudget(ctx, ctx.db, identity.id, job.sender);
  if (exhausted) return skip(ctx, job, message, exhausted);

  let text: string;
  try {
    const { system, prompt } = await buildAgentPrompt(ctx, agent, identity.address, message);
    text = await ctx.model.complete({ model: agent.textModel, system, prompt });
  } catch (err) {
    const error = (err instanceof Error ? err.message : String(err)).slice(0, 2000);
    const attempts = job.attempts + 1;
    const now = ctx.clock.now();
    const retryAt = nextAttemptAt(MODEL_SCHEDULE, attempts, now);
    if (retryAt) {
      await updateClaimedAgentJob(ctx.db, job, { attempts, lastError: error, updatedAt: now, nextAttemptAt: retryAt });
      return;
    }
    await ctx.events.transaction(async (tx, emit) => {
      const count = await updateClaimedAgentJob(tx, job, {
        attempts,
        lastError: error,
        status: 'failed',
        reason: 'MODEL_ERROR',
        updatedAt: now,
      });
      if (count === 0) return; // the claim was lost: the new owner records the outcome
      await emit(identity.accountId, 'email.agent.failed', {
        event: 'email.agent.failed',
        data: {
          identityId: identity.id,
          agentId: agent.id,
          threadId: message.threadId,
          messageId: message.messageId,
          attempts,
          error,
        },
      });
    });
    return;
  }

  let reply: Awaited<ReturnType<typeof queueOutbound>> | undefined;
  try {
    reply = await ctx.events.transaction(async (tx, emit) => {
      await lockIdentityRow(tx, identity.id);
      const over = await exhaustedBudget(ctx, tx, identity.id, job.sender);
      if (over) {
        const count = await updateClaimedAgentJob(tx, job, {
          status: 'skipped',
          reason: over,
          updatedAt: ctx.clock.now(),
        });
        if (count === 0) throw new ClaimLost();
        await emitAgentSkipped(emit, identity, {
          agentId: agent.id,
          threadId: message.threadId,
          messageId: message.messageId,
          reason: over,
        });
        return undefined;
      }
      const thread = await threadById(tx, message.threadId);
      const plan = await replyPlan(tx, thread);
      if (drafting) {
        // replyMode draft: the answer waits as a draft (email.draft.created, createdBy agent) for a person.
        await writeAgentDraft(tx, emit, ctx, identity, thread, plan, message, text, unauthenticated);
        const count = await updateClaimedAgentJob(tx, job, {
          status: 'answered',
          reason: 'DRAFTED',
          attempts: job.attempts + 1,
          updatedAt: ctx.clock.now(),
        });
        if (count === 0) throw new ClaimLost();
        return undefined;
      }
      const out = await queueOutbound(tx, ctx, identity, {
        thread,
        ...plan,
        to: message.from,
        body: text,
        autoReplied: true,
      });
      const count = await updateClaimedAgentJob(tx, job, {
        status: 'answered',
        attempts: job.attempts + 1,
        replyMessageId: out.messageId,
        updatedAt: ctx.clock.now(),
      });
      if (count === 0) throw new ClaimLost();
      await emit(identity.accountId, 'email.agent.response', {
        event: 'email.agent.response',
        data: {
          identityId: identity.id,
          agentId: agent.id,
          threadId: out.threadId,
          inReplyTo: message.messageId,
          messageId: out.messageId,
          from: identity.address,
          to: message.from,
          subject: out.subject,
          textModel: agent.textModel,
        },
      });
      return out;
    });
  } catch (err) {
    if (err instanceof ClaimLost) return;
    throw err;
  }
  if (reply) await dispatchMessage(ctx, reply.id);
}

/**
 * The agent job kind: due `pending` agent jobs (new inbound mail, model retries, and any left by a crash), claimed
 * with a lease so two instances never answer the same message.
 */
export function agentJobKind(ctx: DomainContext): JobKind {
  return {
    name: AGENT_JOB,
    table: 'email_agent_jobs',
    dueColumn: 'next_attempt_at',
    where: pendingAgentJobs,
    concurrency: AGENT_CONCURRENCY,
    async run(claim) {
      const job = await claimedAgentJob(ctx.db, claim.id, claim.token);
      if (job) await processAgentJob(ctx, { ...job, lockedBy: claim.token });
    },
  };
}
