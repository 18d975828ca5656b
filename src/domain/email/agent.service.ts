import type { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { ConflictError, NotFoundError, UnprocessableError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import { uuidv7 } from '../kernel/ids.js';
import { decodeCursor, encodeCursor, keysetPage, type PageQuery } from '../paging.js';
import {
  type Agent,
  agentPage,
  agentRowSelected,
  agentsOf,
  countKnowledge,
  deleteAgentRow,
  deleteKnowledge,
  findAgentRow,
  insertAgent,
  insertKnowledge,
  type KnowledgeDocument,
  knowledgePage,
  knowledgeRowSelected,
  updateAgentRow,
} from './agent.store.js';
import type { AddKnowledgeInput, CreateAgentInput, UpdateAgentInput } from './email.schemas.js';
import type { agentShape, knowledgeDocumentShape } from './email.shapes.js';
import { countActiveIdentitiesOfAgent } from './identity.store.js';

/** Most knowledge documents one agent holds. */
export const MAX_KNOWLEDGE_DOCUMENTS = 200;

/** REST/GraphQL shape of an agent (spec 4.5 leaves it "not shown"; README "Agents"). */
export type AgentView = z.output<typeof agentShape>;

/** Shape of a knowledge document. */
export type KnowledgeDocumentView = z.output<typeof knowledgeDocumentShape>;

/** Converts a row. */
export function agentView(a: Agent): AgentView {
  return {
    id: a.id,
    name: a.name,
    systemPrompt: a.systemPrompt,
    textModel: a.textModel,
    contextSources: a.contextSources,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}

/** Converts a row. */
export function knowledgeView(d: KnowledgeDocument): KnowledgeDocumentView {
  return { id: d.id, agentId: d.agentId, title: d.title, content: d.content, createdAt: d.createdAt.toISOString() };
}

/** The account's agent. @throws NotFoundError (another account's id answers the same). */
export async function findAgent(ctx: DomainContext, accountId: string, agentId: string): Promise<Agent> {
  const agent = await findAgentRow(ctx.db, accountId, agentId);
  if (!agent) throw new NotFoundError('Agent', agentId, 'agentId');
  return agent;
}

/**
 * POST /api/agents (spec 4.5): creates an agent. `contextSources` ⊆ {sms, calls, knowledge}; `textModel` may be
 * omitted, but then the agent cannot be assigned to an identity until it has one.
 * `data` is parsed at the door by `createAgentInput`.
 */
export async function createAgent(ctx: DomainContext, actor: Actor, data: CreateAgentInput): Promise<AgentView> {
  requireScope(actor, 'email');
  const now = ctx.clock.now();
  const agent = await insertAgent(ctx.db, {
    id: uuidv7(),
    accountId: actor.accountId,
    name: data.name,
    systemPrompt: data.systemPrompt,
    textModel: data.textModel ?? null,
    contextSources: data.contextSources,
    createdAt: now,
    updatedAt: now,
  });
  return agentView(agent);
}

/**
 * GET /api/agents: a page of the account's agents, oldest first (uuidv7 ids, so id order), with the one paging rule
 * (`limit` 1–200 default 50, `cursor`; docs/conventions.md).
 * @returns `{agents, nextCursor}`, nextCursor null on the last page. @throws BadRequestError INVALID_CURSOR.
 */
export async function listAgents(
  ctx: DomainContext,
  actor: Actor,
  query: PageQuery,
): Promise<{ agents: AgentView[]; nextCursor: string | null }> {
  requireScope(actor, 'email');
  const after = decodeCursor(query.cursor);
  const page = await keysetPage(query.limit, (take) => agentPage(ctx.db, actor.accountId, after, take));
  return { agents: page.items.map(agentView), nextCursor: page.last ? encodeCursor(page.last.id) : null };
}

/** One agent. @throws NotFoundError. */
export async function getAgent(ctx: DomainContext, actor: Actor, agentId: string): Promise<AgentView> {
  requireScope(actor, 'email');
  return agentView(await findAgent(ctx, actor.accountId, agentId));
}

/**
 * PATCH /api/agents/{id}: changes any of name, systemPrompt, textModel, contextSources.
 * `data` is parsed at the door by `updateAgentInput`.
 * @throws NotFoundError; ConflictError AGENT_ASSIGNED when clearing the textModel of an agent
 *   that identities still use (spec 4.4: an assigned agent must have a textModel).
 */
export async function updateAgent(
  ctx: DomainContext,
  actor: Actor,
  agentId: string,
  data: UpdateAgentInput,
): Promise<AgentView> {
  requireScope(actor, 'email');
  await findAgent(ctx, actor.accountId, agentId);
  if (data.textModel === null) {
    const assigned = await countActiveIdentitiesOfAgent(ctx.db, agentId);
    if (assigned > 0) {
      throw new ConflictError(
        'AGENT_ASSIGNED',
        `Agent ${agentId} is assigned to ${assigned} identities; unassign it before clearing textModel.`,
        'textModel',
      );
    }
  }
  const agent = await updateAgentRow(ctx.db, agentId, { ...data, updatedAt: ctx.clock.now() });
  return agentView(agent);
}

/**
 * DELETE /api/agents/{id}: deletes the agent and its knowledge documents; identities it was assigned to are
 * unassigned (agentId null); answers already pending for it are skipped (AGENT_REMOVED).
 * @throws NotFoundError.
 */
export async function deleteAgent(ctx: DomainContext, actor: Actor, agentId: string): Promise<void> {
  requireScope(actor, 'email');
  await findAgent(ctx, actor.accountId, agentId);
  await deleteAgentRow(ctx.db, agentId);
}

/**
 * POST /api/agents/{id}/knowledge: adds a document (title ≤ 200 chars, content ≤ 100 000 chars) the agent draws on
 * when its contextSources include `knowledge`.
 * `data` is parsed at the door by `addKnowledgeInput`.
 * @throws NotFoundError; UnprocessableError KNOWLEDGE_LIMIT_REACHED beyond 200 documents.
 */
export async function addKnowledgeDocument(
  ctx: DomainContext,
  actor: Actor,
  agentId: string,
  data: AddKnowledgeInput,
): Promise<KnowledgeDocumentView> {
  requireScope(actor, 'email');
  await findAgent(ctx, actor.accountId, agentId);
  const count = await countKnowledge(ctx.db, agentId);
  if (count >= MAX_KNOWLEDGE_DOCUMENTS) {
    throw new UnprocessableError(
      'KNOWLEDGE_LIMIT_REACHED',
      `An agent holds at most ${MAX_KNOWLEDGE_DOCUMENTS} knowledge documents.`,
    );
  }
  const doc = await insertKnowledge(ctx.db, {
    id: uuidv7(),
    accountId: actor.accountId,
    agentId,
    ...data,
    createdAt: ctx.clock.now(),
  });
  return knowledgeView(doc);
}

/**
 * GET /api/agents/{id}/knowledge: a page of the agent's knowledge documents, oldest first (id order), with the one
 * paging rule (`limit` 1–200 default 50, `cursor`; docs/conventions.md).
 * @returns `{documents, nextCursor}`, nextCursor null on the last page.
 * @throws BadRequestError INVALID_CURSOR; NotFoundError for an unknown agent.
 */
export async function listKnowledgeDocuments(
  ctx: DomainContext,
  actor: Actor,
  agentId: string,
  query: PageQuery,
): Promise<{ documents: KnowledgeDocumentView[]; nextCursor: string | null }> {
  requireScope(actor, 'email');
  const after = decodeCursor(query.cursor);
  await findAgent(ctx, actor.accountId, agentId);
  const page = await keysetPage(query.limit, (take) => knowledgePage(ctx.db, agentId, after, take));
  return { documents: page.items.map(knowledgeView), nextCursor: page.last ? encodeCursor(page.last.id) : null };
}

/** Deletes one knowledge document. @throws NotFoundError for an unknown agent or document. */
export async function deleteKnowledgeDocument(
  ctx: DomainContext,
  actor: Actor,
  agentId: string,
  documentId: string,
): Promise<void> {
  requireScope(actor, 'email');
  await findAgent(ctx, actor.accountId, agentId);
  const count = await deleteKnowledge(ctx.db, agentId, documentId);
  if (count === 0) throw new NotFoundError('Knowledge document', documentId, 'documentId');
}

/** Description of contextSources shared by both surfaces. */
export const CONTEXT_SOURCES_DESCRIPTION =
  'Subset of sms (SMS events involving the sender), calls (voice events involving the sender), knowledge (the agent’s documents).';

/** The account's agents as rows, oldest first, with the adapter's `selection` (see RowSelection). Requires scope `email`. */
export async function listAgentRows(
  ctx: DomainContext,
  actor: Actor,
  selection: Record<string, unknown> = {},
): Promise<Agent[]> {
  requireScope(actor, 'email');
  return agentsOf(ctx.db, actor.accountId, selection);
}

/** The account's agent row with the adapter's `selection`. Requires scope `email`. @throws NotFoundError. */
export async function getAgentRow(
  ctx: DomainContext,
  actor: Actor,
  agentId: string,
  selection: Record<string, unknown> = {},
): Promise<Agent> {
  requireScope(actor, 'email');
  const row = await agentRowSelected(ctx.db, actor.accountId, agentId, selection);
  if (!row) throw new NotFoundError('Agent', agentId, 'agentId');
  return row;
}

/** A knowledge document row of one of the account's agents, with the adapter's `selection`. @throws NotFoundError. */
export async function getKnowledgeDocumentRow(
  ctx: DomainContext,
  actor: Actor,
  documentId: string,
  selection: Record<string, unknown> = {},
): Promise<KnowledgeDocument> {
  requireScope(actor, 'email');
  const row = await knowledgeRowSelected(ctx.db, actor.accountId, documentId, selection);
  if (!row) throw new NotFoundError('Knowledge document', documentId, 'documentId');
  return row;
}
