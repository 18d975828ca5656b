import {
  type Agent,
  type AgentJob,
  type Event,
  type KnowledgeDocument,
  Prisma,
} from '../../generated/prisma/client.js';
import type { Tx } from '../kernel/db.js';
import { keysetArgs } from '../paging.js';

/*
 * The store of agents, their knowledge documents and agent jobs (issue 23): every Prisma call and SQL text about
 * them. Functions take the client or transaction they run on (`Tx`; the Prisma client is one too) and plain
 * parameters, and return rows. The row types are re-exported here so services name them without importing Prisma.
 */

export type { Agent, AgentJob, KnowledgeDocument };
/** An event row as the agent's context reads it (SMS and call history). */
export type EventRow = Event;

/** A row selection an adapter passes through (GraphQL's plugin-prisma: `include`/`select`, `take`/`skip`/`cursor`). */
export type RowSelection = Record<string, unknown>;

/** The account's agent, or null. */
export function findAgentRow(db: Tx, accountId: string, agentId: string): Promise<Agent | null> {
  return db.agent.findFirst({ where: { id: agentId, accountId } });
}

/** The agent by id (any account), or null. */
export function agentById(db: Tx, agentId: string): Promise<Agent | null> {
  return db.agent.findUnique({ where: { id: agentId } });
}

/** Inserts an agent. */
export function insertAgent(
  db: Tx,
  data: Pick<
    Agent,
    'id' | 'accountId' | 'name' | 'systemPrompt' | 'textModel' | 'contextSources' | 'createdAt' | 'updatedAt'
  >,
): Promise<Agent> {
  return db.agent.create({ data });
}

/** The account's agents, oldest first, with the adapter's `selection` (none: plain rows). */
export function agentsOf(db: Tx, accountId: string, selection: RowSelection = {}): Promise<Agent[]> {
  return db.agent.findMany({
    ...selection,
    where: { accountId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  }) as Promise<Agent[]>;
}

/** One keyset page of the account's agents in id order (uuidv7: creation order): after the id `after`, at most `take` rows. */
export function agentPage(db: Tx, accountId: string, after: string | undefined, take: number): Promise<Agent[]> {
  const k = keysetArgs('id', { after, limit: take });
  return db.agent.findMany({ where: { accountId, ...k.where }, orderBy: k.orderBy, take });
}

/** The account's agent with the adapter's `selection`, or null. */
export function agentRowSelected(
  db: Tx,
  accountId: string,
  agentId: string,
  selection: RowSelection,
): Promise<Agent | null> {
  return db.agent.findFirst({ ...selection, where: { id: agentId, accountId } }) as Promise<Agent | null>;
}

/** Agents of the account among `ids` (any order). */
export function agentsByIds(db: Tx, accountId: string, ids: readonly string[]): Promise<Agent[]> {
  return db.agent.findMany({ where: { id: { in: [...ids] }, accountId } });
}

/** How many agents the account has (one COUNT on the account index). */
export function countAgentsOf(db: Tx, accountId: string): Promise<number> {
  return db.agent.count({ where: { accountId } });
}

/** Writes the given fields of an agent and its `updatedAt`. */
export function updateAgentRow(
  db: Tx,
  agentId: string,
  data: Partial<Pick<Agent, 'name' | 'systemPrompt' | 'textModel' | 'contextSources'>> & { updatedAt: Date },
): Promise<Agent> {
  return db.agent.update({ where: { id: agentId }, data });
}

/** Deletes an agent (its knowledge documents go with it; identities keep `agentId` null, by the foreign keys). */
export async function deleteAgentRow(db: Tx, agentId: string): Promise<void> {
  await db.agent.delete({ where: { id: agentId } });
}

/** How many knowledge documents the agent holds. */
export function countKnowledge(db: Tx, agentId: string): Promise<number> {
  return db.knowledgeDocument.count({ where: { agentId } });
}

/** Inserts a knowledge document. */
export function insertKnowledge(
  db: Tx,
  data: Pick<KnowledgeDocument, 'id' | 'accountId' | 'agentId' | 'title' | 'content' | 'createdAt'>,
): Promise<KnowledgeDocument> {
  return db.knowledgeDocument.create({ data });
}

/** One keyset page of the agent's knowledge documents in id order (uuidv7: oldest first): after `after`, at most `take`. */
export function knowledgePage(
  db: Tx,
  agentId: string,
  after: string | undefined,
  take: number,
): Promise<KnowledgeDocument[]> {
  const k = keysetArgs('id', { after, limit: take });
  return db.knowledgeDocument.findMany({ where: { agentId, ...k.where }, orderBy: k.orderBy, take });
}

/** The agent's knowledge documents in the database's order (the prompt ranks them itself). */
export function knowledgeUnordered(db: Tx, agentId: string): Promise<KnowledgeDocument[]> {
  return db.knowledgeDocument.findMany({ where: { agentId } });
}

/** Deletes one of the agent's documents. @returns how many rows went (0 or 1). */
export async function deleteKnowledge(db: Tx, agentId: string, documentId: string): Promise<number> {
  const { count } = await db.knowledgeDocument.deleteMany({ where: { id: documentId, agentId } });
  return count;
}

/** The account's knowledge document with the adapter's `selection`, or null. */
export function knowledgeRowSelected(
  db: Tx,
  accountId: string,
  documentId: string,
  selection: RowSelection,
): Promise<KnowledgeDocument | null> {
  return db.knowledgeDocument.findFirst({
    ...selection,
    where: { id: documentId, accountId },
  }) as Promise<KnowledgeDocument | null>;
}

/** The newest `take` events of the account on `channels`, newest first (the agent's SMS and call context). */
export function recentEventsOn(db: Tx, accountId: string, channels: string[], take: number): Promise<EventRow[]> {
  return db.event.findMany({
    where: { accountId, channel: { in: channels } },
    orderBy: { id: 'desc' },
    take,
  });
}

/** Inserts an agent job (written with the inbound message it answers). */
export async function insertAgentJob(
  tx: Tx,
  data: Pick<
    AgentJob,
    | 'id'
    | 'accountId'
    | 'identityId'
    | 'agentId'
    | 'messageRowId'
    | 'status'
    | 'reason'
    | 'nextAttemptAt'
    | 'sender'
    | 'createdAt'
    | 'updatedAt'
  >,
): Promise<void> {
  await tx.agentJob.create({ data });
}

/** The agent job still claimed by `token`, or null. */
export function claimedAgentJob(db: Tx, id: string, token: string): Promise<AgentJob | null> {
  return db.agentJob.findFirst({ where: { id, lockedBy: token } });
}

/**
 * Writes `data` to the job while it is still `pending` and claimed by `token` (the fence of every outcome).
 * @returns how many rows were written (0 when the claim was lost).
 */
export async function updateClaimedAgentJob(
  db: Tx,
  job: { id: string; lockedBy: string },
  data: Partial<
    Pick<AgentJob, 'status' | 'reason' | 'attempts' | 'lastError' | 'replyMessageId' | 'updatedAt' | 'nextAttemptAt'>
  >,
): Promise<number> {
  const { count } = await db.agentJob.updateMany({
    where: { id: job.id, status: 'pending', lockedBy: job.lockedBy },
    data: { ...data, lockedBy: null, lockedUntil: null },
  });
  return count;
}

/** How many answers the identity's agent gave since `since` (to `sender` when given, else to anyone). */
export function countAnswersSince(db: Tx, identityId: string, since: Date, sender?: string): Promise<number> {
  return db.agentJob.count({
    where: { identityId, ...(sender === undefined ? {} : { sender }), status: 'answered', updatedAt: { gte: since } },
  });
}

/** Locks the identity row for the rest of the transaction (`SELECT … FOR UPDATE`): answers are stored one at a time. */
export async function lockIdentityRow(tx: Tx, identityId: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM email_identities WHERE id = ${identityId} FOR UPDATE`;
}

/** The job queue's condition on `email_agent_jobs` rows (alias `j`) that are work: pending answers. */
export function pendingAgentJobs(): Prisma.Sql {
  return Prisma.sql`j.status = 'pending'`;
}
