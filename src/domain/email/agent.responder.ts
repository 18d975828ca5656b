import type { AppContext } from '../../app-context.js';
import type { AgentJob } from '../../generated/prisma/client.js';
import type { Tx } from '../../infra/db.js';
import type { Worker } from '../../infra/workers.js';
import { buildAgentPrompt } from './agent.context.js';
import { dispatchMessage, queueOutbound, replyPlan } from './outbound.service.js';

/** Model attempts per inbound message, and the delays before attempts 2 and 3 (ms). */
export const MODEL_MAX_ATTEMPTS = 3;
export const MODEL_RETRY_DELAYS_MS = [30_000, 120_000];
const CLAIM_LEASE_MS = 5 * 60_000;

/**
 * The row condition that holds while this dispatcher owns `job`: still pending, with the lease time the claim
 * wrote (`job.nextAttemptAt`). Every write of the job uses it, so a dispatcher whose lease ran out and was taken
 * over cannot overwrite the new owner's outcome.
 */
function claimed(job: AgentJob) {
  return { id: job.id, status: 'pending', nextAttemptAt: job.nextAttemptAt };
}

/** Thrown inside the answer transaction when the claim was lost: rolls the reply back. */
class ClaimLost extends Error {}

async function skip(ctx: AppContext, job: AgentJob, reason: string): Promise<void> {
  await ctx.db.agentJob.updateMany({
    where: claimed(job),
    data: { status: 'skipped', reason, updatedAt: ctx.clock.now() },
  });
}

/** Answers this identity sent to `sender` within the budget window (AGENT_REPLY_WINDOW_MINUTES). */
function answeredInWindow(ctx: AppContext, db: Pick<Tx, 'agentJob'>, identityId: string, sender: string) {
  const windowStart = new Date(ctx.clock.now().getTime() - ctx.config.AGENT_REPLY_WINDOW_MINUTES * 60_000);
  return db.agentJob.count({
    where: { identityId, sender, status: 'answered', updatedAt: { gte: windowStart } },
  });
}

/**
 * Answers one inbound message with the identity's agent (spec 6.3): checks that the identity is still active and
 * has an agent, applies the per-sender reply budget (at most AGENT_REPLIES_PER_SENDER answers to one sender per
 * identity within AGENT_REPLY_WINDOW_MINUTES; beyond it the job is `skipped` REPLY_BUDGET_EXHAUSTED), builds the
 * prompt, asks the model, then in one transaction stores the reply (`Auto-Submitted: auto-replied`, threaded on the
 * newest message), marks the job `answered` and emits `email.agent.response`; finally the reply is dispatched.
 * The budget is checked before the model call (to save it) and again, atomically with consuming it, in that
 * transaction: it first locks the identity row (`SELECT … FOR UPDATE`), so answers of one identity are stored one at
 * a time across instances, recounts, and then either stores the answer or skips the job REPLY_BUDGET_EXHAUSTED.
 * `job.nextAttemptAt` must be the lease the caller's claim wrote: every write of the job is fenced by it, and when
 * the claim was lost meanwhile nothing is stored or sent.
 * A model error schedules a retry; after {@link MODEL_MAX_ATTEMPTS} the job is `failed` (reason MODEL_ERROR,
 * `lastError`) and `email.agent.failed` is emitted. The inbound message itself was stored before and stays.
 */
export async function processAgentJob(ctx: AppContext, job: AgentJob): Promise<void> {
  const message = await ctx.db.emailMessage.findUniqueOrThrow({ where: { id: job.messageRowId } });
  const identity = await ctx.db.emailIdentity.findUnique({ where: { id: job.identityId } });
  if (identity?.status !== 'active') return skip(ctx, job, 'IDENTITY_DEPROVISIONING');
  const agent = identity.agentId ? await ctx.db.agent.findUnique({ where: { id: identity.agentId } }) : null;
  if (!agent?.textModel) return skip(ctx, job, 'AGENT_UNASSIGNED');
  const answered = await answeredInWindow(ctx, ctx.db, identity.id, job.sender);
  if (answered >= ctx.config.AGENT_REPLIES_PER_SENDER) return skip(ctx, job, 'REPLY_BUDGET_EXHAUSTED');

  let text: string;
  try {
    const { system, prompt } = await buildAgentPrompt(ctx, agent, identity.address, message);
    text = await ctx.model.complete({ model: agent.textModel, system, prompt });
  } catch (err) {
    const error = (err instanceof Error ? err.message : String(err)).slice(0, 2000);
    const attempts = job.attempts + 1;
    const now = ctx.clock.now();
    if (attempts < MODEL_MAX_ATTEMPTS) {
      await ctx.db.agentJob.updateMany({
        where: claimed(job),
        data: {
          attempts,
          lastError: error,
          updatedAt: now,
          nextAttemptAt: new Date(now.getTime() + (MODEL_RETRY_DELAYS_MS[attempts - 1] ?? 120_000)),
        },
      });
      return;
    }
    await ctx.events.transaction(async (tx, emit) => {
      const { count } = await tx.agentJob.updateMany({
        where: claimed(job),
        data: { attempts, lastError: error, status: 'failed', reason: 'MODEL_ERROR', updatedAt: now },
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
      await tx.$queryRaw`SELECT id FROM email_identities WHERE id = ${identity.id} FOR UPDATE`;
      if ((await answeredInWindow(ctx, tx, identity.id, job.sender)) >= ctx.config.AGENT_REPLIES_PER_SENDER) {
        const { count } = await tx.agentJob.updateMany({
          where: claimed(job),
          data: { status: 'skipped', reason: 'REPLY_BUDGET_EXHAUSTED', updatedAt: ctx.clock.now() },
        });
        if (count === 0) throw new ClaimLost();
        return undefined;
      }
      const thread = await tx.emailThread.findUniqueOrThrow({ where: { id: message.threadId } });
      const plan = await replyPlan(tx, thread);
      const out = await queueOutbound(tx, ctx, identity, {
        thread,
        ...plan,
        to: message.from,
        body: text,
        autoReplied: true,
      });
      const { count } = await tx.agentJob.updateMany({
        where: claimed(job),
        data: {
          status: 'answered',
          attempts: job.attempts + 1,
          replyMessageId: out.messageId,
          updatedAt: ctx.clock.now(),
        },
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

/** Worker: claims due `pending` agent jobs (a lease keeps two instances off the same job) and processes them. */
export function agentResponder(ctx: AppContext): Worker {
  return {
    name: 'email-agent-responder',
    async tick() {
      const now = ctx.clock.now();
      const due = await ctx.db.agentJob.findMany({
        where: { status: 'pending', nextAttemptAt: { lte: now } },
        orderBy: { nextAttemptAt: 'asc' },
        take: 10,
      });
      let n = 0;
      for (const job of due) {
        const lease = new Date(now.getTime() + CLAIM_LEASE_MS);
        const claim = await ctx.db.agentJob.updateMany({
          where: { id: job.id, status: 'pending', nextAttemptAt: job.nextAttemptAt },
          data: { nextAttemptAt: lease },
        });
        if (claim.count === 0) continue;
        try {
          await processAgentJob(ctx, { ...job, nextAttemptAt: lease });
        } catch (err) {
          ctx.log.error({ err, jobId: job.id }, 'agent job failed unexpectedly; retried after the lease');
        }
        n++;
      }
      return n;
    },
  };
}
