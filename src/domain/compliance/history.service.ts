import { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { BadRequestError, NotFoundError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import { decimalBigintString, decimalInt } from '../validation.js';
import { brandExists, resourceEvents } from './brand.store.js';
import { carrierName } from './campaign.rules.js';
import { campaignExists } from './campaign.store.js';

/**
 * Per-resource history (issue 14; research file §8.8 "structured, persistent history"): the status transitions of a
 * brand or campaign as machine-readable items, read from the account's event log (the facts written in the
 * transaction of each change), so the history is exactly what webhooks and the stream carried. Events older than
 * EVENT_RETENTION_DAYS are pruned from the log and so from the history.
 */

/** One transition of a resource. */
export interface Transition {
  /** The event log id of the fact (the SSE `id:`). */
  eventId: string;
  /** ISO 8601 UTC with milliseconds. */
  at: string;
  /** Which state moved: status, identityStatus or carrierStatus. */
  field: 'status' | 'identityStatus' | 'carrierStatus';
  from: string | null;
  to: string;
  /** Why: REGISTERED, CREATED, REGISTRY_DECISION, UPDATE, REVET, VETTING_APPROVED, VETTING_FAILED, CARRIER_DECISION, CARRIER_REVIEW, RESUBMITTED, APPEAL, DELETED. */
  cause: string;
  /** The carrier of a carrierStatus transition. */
  carrier: { networkId: number; name: string } | null;
  /** The registry's or carrier's reason text, when one was given. */
  reason: string | null;
  /** Stable code of the reason (lint codes for carrier rejections, feedback category ids for brands). */
  code: string | null;
}

/** `?limit&cursor` of the history endpoints. */
export const historyQuery = z
  .object({
    limit: decimalInt(1, 500).default(100).describe('Items per page, 1–500, default 100.'),
    cursor: decimalBigintString.optional().describe('`nextCursor` of the previous page.'),
  })
  .strict();
/** Parsed historyQuery. */
export type HistoryQuery = z.output<typeof historyQuery>;
/** The first page: what no query means. */
const FIRST_HISTORY_PAGE: HistoryQuery = historyQuery.parse({});

type Payload = Record<string, unknown>;
const s = (v: unknown) => (typeof v === 'string' ? v : null);

function brandTransition(type: string, p: Payload): Omit<Transition, 'eventId' | 'at'> | null {
  const base = { carrier: null, reason: null, code: null };
  switch (type) {
    case '10dlc.brand.registered':
      return { ...base, field: 'status', from: null, to: s(p.status) ?? 'PENDING', cause: 'REGISTERED' };
    case '10dlc.brand.status_changed': {
      const to = s(p.status) ?? 'PENDING';
      const feedback = Array.isArray(p.feedback) ? p.feedback.filter((f) => typeof f === 'string') : [];
      return {
        ...base,
        field: 'status',
        from: s(p.previousStatus),
        to,
        cause: p.revet ? 'REVET' : to === 'PENDING' ? 'UPDATE' : 'REGISTRY_DECISION',
        code: feedback.length > 0 ? feedback.join(',') : null,
      };
    }
    case '10dlc.vetting.completed':
      return {
        ...base,
        field: 'identityStatus',
        from: s(p.previousIdentityStatus),
        to: s(p.identityStatus) ?? 'UNKNOWN',
        cause: p.status === 'APPROVED' ? 'VETTING_APPROVED' : 'VETTING_FAILED',
        reason: typeof p.vettingScore === 'number' ? `vettingScore ${p.vettingScore}` : null,
      };
    case '10dlc.brand.deleted':
      return { ...base, field: 'status', from: null, to: 'DELETED', cause: 'DELETED' };
    default:
      return null;
  }
}

function campaignTransition(type: string, p: Payload): Omit<Transition, 'eventId' | 'at'> | null {
  const base = { carrier: null, reason: null, code: null };
  switch (type) {
    case '10dlc.campaign.created':
      return { ...base, field: 'status', from: null, to: s(p.status) ?? 'PENDING', cause: 'CREATED' };
    case '10dlc.campaign.status_changed':
      return {
        ...base,
        field: 'status',
        from: s(p.previousStatus),
        to: s(p.status) ?? 'PENDING',
        cause: 'CARRIER_REVIEW',
      };
    case '10dlc.carrier.status_changed': {
      const to = s(p.status) ?? 'PENDING';
      const networkId = typeof p.networkId === 'number' ? p.networkId : 0;
      return {
        field: 'carrierStatus',
        from: s(p.previousStatus),
        to,
        cause: s(p.cause) ?? (to === 'PENDING' ? 'RESUBMITTED' : 'CARRIER_DECISION'),
        carrier: { networkId, name: s(p.carrier) ?? carrierName(networkId) },
        reason: s(p.reason),
        code: s(p.code),
      };
    }
    case '10dlc.campaign.deleted':
      return { ...base, field: 'status', from: null, to: 'DELETED', cause: 'DELETED' };
    default:
      return null;
  }
}

async function history(
  ctx: DomainContext,
  actor: Actor,
  kind: 'brand' | 'campaign',
  id: string,
  q: HistoryQuery,
): Promise<{ transitions: Transition[]; nextCursor: string | null }> {
  requireScope(actor, 'compliance');
  const key = kind === 'brand' ? 'brandId' : 'campaignId';
  const types =
    kind === 'brand'
      ? ['10dlc.brand.registered', '10dlc.brand.status_changed', '10dlc.vetting.completed', '10dlc.brand.deleted']
      : [
          '10dlc.campaign.created',
          '10dlc.campaign.status_changed',
          '10dlc.carrier.status_changed',
          '10dlc.campaign.deleted',
        ];
  let after: bigint | undefined;
  try {
    after = q.cursor === undefined ? undefined : BigInt(q.cursor);
  } catch {
    throw new BadRequestError('INVALID_CURSOR', 'cursor is not a nextCursor this API returned', 'cursor');
  }
  const rows = await resourceEvents(ctx.db, {
    accountId: actor.accountId,
    types,
    key,
    id,
    ...(after !== undefined ? { after } : {}),
    take: q.limit + 1,
  });
  if (rows.length === 0 && after === undefined) {
    // No fact at all: the resource never existed in this account (or its history was pruned and it is gone).
    const exists =
      kind === 'brand'
        ? await brandExists(ctx.db, actor.accountId, id)
        : await campaignExists(ctx.db, actor.accountId, id);
    if (!exists) throw new NotFoundError(kind, id);
  }
  const page = rows.slice(0, q.limit);
  const transitions: Transition[] = [];
  for (const e of page) {
    const p = (e.payload ?? {}) as Payload;
    const t = kind === 'brand' ? brandTransition(e.eventType, p) : campaignTransition(e.eventType, p);
    if (t) transitions.push({ eventId: e.id.toString(), at: e.createdAt.toISOString(), ...t });
  }
  return { transitions, nextCursor: rows.length > q.limit ? page.at(-1)!.id.toString() : null };
}

/**
 * GET /compliance/brands/{id}/history: the brand's transitions (status and identityStatus), oldest first, also after
 * the brand was deleted. `?limit` (1–500, default 100), `?cursor`.
 * @returns `{brandId, transitions, nextCursor}`.
 * @throws NotFoundError when the account has neither the brand nor any fact about it; 400 INVALID_CURSOR.
 */
export async function brandHistory(ctx: DomainContext, actor: Actor, id: string, query = FIRST_HISTORY_PAGE) {
  return { brandId: id, ...(await history(ctx, actor, 'brand', id, query)) };
}

/**
 * GET /compliance/campaigns/{id}/history: the campaign's transitions (its status and each carrier's, with reason and
 * code), oldest first, also after the campaign was deleted. `?limit` (1–500, default 100), `?cursor`.
 * @returns `{campaignId, transitions, nextCursor}`.
 * @throws NotFoundError; 400 INVALID_CURSOR.
 */
export async function campaignHistory(ctx: DomainContext, actor: Actor, id: string, query = FIRST_HISTORY_PAGE) {
  return { campaignId: id, ...(await history(ctx, actor, 'campaign', id, query)) };
}
