import { type Actor, requireScope } from '../accounts/account.service.js';
import { ConflictError, type ErrorDetail, NotFoundError, UnprocessableError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import { decodeCursor, encodeCursor, type KeysetWindow, keysetPage } from '../paging.js';
import { findOwnCampaign } from './campaign.service.js';
import { type DidMappingDto, type NumberDto, numberDto, numberState } from './compliance.dto.js';
import { ENUMS } from './compliance.enums.js';
import type { DidMappingQuery, NumbersInput, PageQuery } from './compliance.schemas.js';
import { onCampaignStatus, startCooldown, startWarmup } from './did-lifecycle.js';
import {
  campaignNumberPage,
  deleteUnlinkedNumber,
  findNumber,
  insertNumbers,
  linkedNumbersIn,
  linkNumbers,
  type NumberRecord,
  numberMappingPage,
  numberPage,
  numbersIn,
  numbersInOrdered,
  numbersOfCampaign,
} from './number.store.js';

/** Numbers of a request, without repeats, with the index each first appeared at (for `numbers.<i>` fields). */
function uniqueNumbers(numbers: string[]): { number: string; index: number }[] {
  const seen = new Map<string, number>();
  numbers.forEach((n, i) => {
    if (!seen.has(n)) seen.set(n, i);
  });
  return [...seen].map(([number, index]) => ({ number, index }));
}

/**
 * POST /api/numbers `{numbers}`: provisions E.164 numbers in the account (the spec requires numbers to be
 * provisioned before assignment but shows no way to do it; issue 2). All or nothing. Emits did.purchased per number.
 * @returns `{numbers: NumberDto[]}`.
 * `input` is parsed at the door by `numbersInput`.
 * @throws ConflictError 409 NUMBER_UNAVAILABLE when any number is already provisioned (in this
 *   or another account: a number exists once), with one detail per number.
 */
export async function provisionNumbers(
  ctx: DomainContext,
  actor: Actor,
  input: NumbersInput,
): Promise<{ numbers: NumberDto[] }> {
  requireScope(actor, 'compliance');
  const wanted = uniqueNumbers(input.numbers);
  const now = ctx.clock.now();
  return ctx.events.transaction(async (tx, emit) => {
    const existing = await numbersIn(
      tx,
      wanted.map((w) => w.number),
    );
    const unavailable = (taken: { number: string; accountId: string }[]): ErrorDetail[] =>
      wanted
        .filter((w) => taken.some((e) => e.number === w.number))
        .map((w) => ({
          code:
            taken.find((e) => e.number === w.number)?.accountId === actor.accountId
              ? 'ALREADY_PROVISIONED'
              : 'NUMBER_UNAVAILABLE',
          field: `numbers.${w.index}`,
          message: `${w.number} is already provisioned`,
        }));
    if (existing.length > 0) {
      throw new ConflictError(
        'NUMBER_UNAVAILABLE',
        'Some numbers are already provisioned; nothing was provisioned.',
        'numbers',
        unavailable(existing),
      );
    }
    const created = await insertNumbers(
      tx,
      actor.accountId,
      wanted.map((w) => w.number),
      now,
    );
    if (created !== wanted.length) {
      throw new ConflictError(
        'NUMBER_UNAVAILABLE',
        'Some numbers were provisioned concurrently; nothing was provisioned.',
        'numbers',
      );
    }
    for (const w of wanted) await emit(actor.accountId, 'did.purchased', { number: w.number });
    const rows = await numbersInOrdered(
      tx,
      wanted.map((w) => w.number),
    );
    return { numbers: rows.map(numberDto) };
  });
}

/** Numbers of the account in a keyset window, ascending by number. */
export async function pageNumbers(ctx: DomainContext, actor: Actor, window: KeysetWindow): Promise<NumberDto[]> {
  requireScope(actor, 'compliance');
  const rows = await numberPage(ctx.db, actor.accountId, window);
  return rows.map(numberDto);
}

/** GET /api/numbers: `{numbers, nextCursor}` ascending by number, `?limit` (1–200, default 50), `?cursor`. */
export async function listNumbers(
  ctx: DomainContext,
  actor: Actor,
  q: PageQuery,
): Promise<{ numbers: NumberDto[]; nextCursor: string | null }> {
  const after = decodeCursor(q.cursor);
  const page = await keysetPage(q.limit, (limit) => pageNumbers(ctx, actor, { after, limit }));
  return { numbers: page.items, nextCursor: page.last ? encodeCursor(page.last.number) : null };
}

/**
 * DELETE /api/numbers/{number}: releases a provisioned number. Emits did.released.
 * @throws NotFoundError; ConflictError 409 NUMBER_ASSIGNED while it is linked to a campaign (remove it first).
 */
export async function releaseNumber(
  ctx: DomainContext,
  actor: Actor,
  number: string,
): Promise<{ number: string; released: true }> {
  requireScope(actor, 'compliance');
  return ctx.events.transaction(async (tx, emit) => {
    const row = await findNumber(tx, actor.accountId, number);
    if (!row) throw new NotFoundError('number', number, 'number');
    if (row.campaignId) {
      throw new ConflictError(
        'NUMBER_ASSIGNED',
        `${number} is assigned to campaign ${row.campaignId}; remove it from the campaign first.`,
        'number',
      );
    }
    if (!(await deleteUnlinkedNumber(tx, actor.accountId, number)))
      throw new ConflictError('NUMBER_ASSIGNED', `${number} was just assigned to a campaign.`, 'number');
    await emit(actor.accountId, 'did.released', { number });
    return { number, released: true as const };
  });
}

/**
 * GET /compliance/did-mapping (spec 2.5): every number of the account, assigned or not, ascending by number, with
 * its campaign and the campaign's status (both null when unassigned). `?limit` (1–1000, default 1000), `?cursor`.
 * @returns the entries and the cursor of the next page (REST: `x-next-cursor` header), null on the last page.
 */
export async function didMapping(
  ctx: DomainContext,
  actor: Actor,
  q: DidMappingQuery,
): Promise<{ entries: DidMappingDto[]; nextCursor: string | null }> {
  requireScope(actor, 'compliance');
  const after = decodeCursor(q.cursor);
  const page = await keysetPage(q.limit, (limit) => numberMappingPage(ctx.db, actor.accountId, { after, limit }));
  return {
    entries: page.items.map((n) => ({
      number: n.number,
      campaignId: n.campaignId,
      campaignStatus: n.campaign?.status ?? null,
      state: n.state,
      assignmentStatus: n.assignmentStatus,
    })),
    nextCursor: page.last ? encodeCursor(page.last.number) : null,
  };
}

/** A number assigned to a campaign, with its lifecycle. */
export interface AssignedNumberDto extends ReturnType<typeof numberState> {
  number: string;
  assignedAt: string;
}

/** One assigned number as the campaign's number lists show it. */
function assignedNumberDto(n: NumberRecord): AssignedNumberDto {
  return { number: n.number, assignedAt: (n.assignedAt ?? n.createdAt).toISOString(), ...numberState(n) };
}

/**
 * Every number of the campaign, ascending (GraphQL `numberAssignmentChanged`): `{campaignId, numbers}`.
 * @throws NotFoundError.
 */
export async function listCampaignNumbers(
  ctx: DomainContext,
  actor: Actor,
  id: string,
): Promise<{ campaignId: string; numbers: AssignedNumberDto[] }> {
  requireScope(actor, 'compliance');
  await findOwnCampaign(ctx.db, actor, id);
  const rows = await numbersOfCampaign(ctx.db, id);
  return { campaignId: id, numbers: rows.map(assignedNumberDto) };
}

/**
 * GET /compliance/campaigns/{id}/numbers: a page of the numbers assigned to the campaign, ascending by number, with
 * the one paging rule (`limit` 1–200 default 50, `cursor`; docs/conventions.md).
 * @returns `{campaignId, numbers: [{number, assignedAt, …}], nextCursor}`, nextCursor null on the last page.
 * @throws BadRequestError INVALID_CURSOR; NotFoundError.
 */
export async function pageCampaignNumbers(
  ctx: DomainContext,
  actor: Actor,
  id: string,
  q: PageQuery,
): Promise<{ campaignId: string; numbers: AssignedNumberDto[]; nextCursor: string | null }> {
  requireScope(actor, 'compliance');
  const after = decodeCursor(q.cursor);
  await findOwnCampaign(ctx.db, actor, id);
  const page = await keysetPage(q.limit, (limit) => campaignNumberPage(ctx.db, id, { after, limit }));
  return {
    campaignId: id,
    numbers: page.items.map(assignedNumberDto),
    nextCursor: page.last ? encodeCursor(page.last.number) : null,
  };
}

/** Result of an assignment. */
export interface AssignResult {
  campaignId: string;
  /** Numbers this call linked. */
  assigned: string[];
  /** Numbers of the request that were already linked to this campaign. */
  alreadyAssigned: string[];
  /** Every number linked to the campaign now. */
  numbers: string[];
}

/**
 * POST /compliance/campaigns/{id}/numbers/assign `{numbers}` (spec 4.2, 7): links provisioned numbers to the
 * campaign, all or nothing. Numbers already on this campaign are reported in `alreadyAssigned`. Emits
 * 10dlc.numbers.assigned with the newly linked numbers. On an APPROVED campaign each number is ASSIGNED and starts
 * warming (did.state_changed); otherwise it waits in PENDING_ASSIGNMENT (FAILED_ASSIGNMENT with failureReasons on a
 * rejected or suspended campaign) until the campaign is approved (did-lifecycle.ts).
 * `input` is parsed at the door by `numbersInput`.
 * @throws NotFoundError; UnprocessableError 422 NUMBERS_NOT_PROVISIONED (a detail per number) when any number is not
 *   provisioned in the account; ConflictError 409 NUMBER_ASSIGNED_ELSEWHERE when any is linked to another campaign
 *   (details name each number; nothing of the call is assigned); ConflictError 409 NUMBER_COOLING while a number
 *   still cools down from an earlier campaign.
 */
export async function assignNumbers(
  ctx: DomainContext,
  actor: Actor,
  id: string,
  input: NumbersInput,
): Promise<AssignResult> {
  requireScope(actor, 'compliance');
  const wanted = uniqueNumbers(input.numbers);
  const now = ctx.clock.now();
  return ctx.events.transaction(async (tx, emit) => {
    const campaign = await findOwnCampaign(tx, actor, id);
    const rows = await numbersIn(
      tx,
      wanted.map((w) => w.number),
      actor.accountId,
    );
    const byNumber = new Map(rows.map((r) => [r.number, r]));
    const missing = wanted.filter((w) => !byNumber.has(w.number));
    if (missing.length > 0) {
      throw new UnprocessableError(
        'NUMBERS_NOT_PROVISIONED',
        `Not provisioned in this account: ${missing.map((m) => m.number).join(', ')}; nothing was assigned.`,
        `numbers.${missing[0]!.index}`,
        missing.map((w) => ({
          code: 'NUMBER_NOT_PROVISIONED',
          field: `numbers.${w.index}`,
          message: `${w.number} is not provisioned in this account (POST /api/numbers)`,
        })),
      );
    }
    const elsewhere = wanted.filter((w) => {
      const c = byNumber.get(w.number)?.campaignId;
      return c && c !== id;
    });
    if (elsewhere.length > 0) {
      throw new ConflictError(
        'NUMBER_ASSIGNED_ELSEWHERE',
        `Already linked to another campaign: ${elsewhere.map((m) => m.number).join(', ')}; nothing was assigned.`,
        `numbers.${elsewhere[0]!.index}`,
        elsewhere.map((w) => ({
          code: 'NUMBER_ASSIGNED_ELSEWHERE',
          field: `numbers.${w.index}`,
          message: `${w.number} is linked to campaign ${byNumber.get(w.number)?.campaignId}`,
        })),
      );
    }
    const cooling = wanted.filter((w) => byNumber.get(w.number)?.state === 'cooling');
    if (cooling.length > 0) {
      throw new ConflictError(
        'NUMBER_COOLING',
        `Still cooling down from an earlier campaign: ${cooling.map((m) => m.number).join(', ')}; nothing was assigned.`,
        `numbers.${cooling[0]!.index}`,
        cooling.map((w) => ({
          code: 'NUMBER_COOLING',
          field: `numbers.${w.index}`,
          message: `${w.number} is cooling until ${byNumber.get(w.number)?.stateDueAt?.toISOString() ?? 'soon'}`,
        })),
      );
    }
    const toAssign = wanted.filter((w) => byNumber.get(w.number)?.campaignId === null).map((w) => w.number);
    const alreadyAssigned = wanted.filter((w) => byNumber.get(w.number)?.campaignId === id).map((w) => w.number);
    if (toAssign.length > 0) {
      const count = await linkNumbers(tx, actor.accountId, id, toAssign, now);
      if (count !== toAssign.length) {
        throw new ConflictError(
          'NUMBER_ASSIGNED_ELSEWHERE',
          'A number was linked concurrently; nothing was assigned.',
          'numbers',
        );
      }
      await emit(actor.accountId, '10dlc.numbers.assigned', { campaignId: id, numbers: toAssign });
      const linkedNow = await numbersInOrdered(tx, toAssign);
      if (campaign.status === 'APPROVED') await startWarmup(ctx, tx, emit, linkedNow, 'ASSIGNED', now);
      else await onCampaignStatus(ctx, tx, emit, id, campaign.status, now);
    }
    const linked = await numbersOfCampaign(tx, id);
    return { campaignId: id, assigned: toAssign, alreadyAssigned, numbers: linked.map((n) => n.number) };
  });
}

/**
 * POST /compliance/campaigns/{id}/numbers/remove `{numbers}`: unlinks numbers from the campaign (they stay
 * provisioned), all or nothing. Warming or active numbers start cooling (PENDING_UNASSIGNMENT, did.state_changed),
 * then become unassigned after DID_COOLDOWN_MS. Emits 10dlc.numbers.removed.
 * @returns `{campaignId, removed, numbers}` (numbers = still linked).
 * `input` is parsed at the door by `numbersInput`.
 * @throws NotFoundError; UnprocessableError 422 NUMBERS_NOT_ASSIGNED (a detail per number) when any number is not
 *   linked to this campaign.
 */
export async function removeNumbers(
  ctx: DomainContext,
  actor: Actor,
  id: string,
  input: NumbersInput,
): Promise<{ campaignId: string; removed: string[]; numbers: string[] }> {
  requireScope(actor, 'compliance');
  const wanted = uniqueNumbers(input.numbers);
  return ctx.events.transaction(async (tx, emit) => {
    await findOwnCampaign(tx, actor, id);
    const rows = await linkedNumbersIn(
      tx,
      actor.accountId,
      id,
      wanted.map((w) => w.number),
    );
    const linked = new Set(rows.map((r) => r.number));
    const notLinked = wanted.filter((w) => !linked.has(w.number));
    if (notLinked.length > 0) {
      throw new UnprocessableError(
        'NUMBERS_NOT_ASSIGNED',
        `Not assigned to this campaign: ${notLinked.map((m) => m.number).join(', ')}; nothing was removed.`,
        `numbers.${notLinked[0]!.index}`,
        notLinked.map((w) => ({
          code: 'NUMBER_NOT_ASSIGNED',
          field: `numbers.${w.index}`,
          message: `${w.number} is not assigned to this campaign`,
        })),
      );
    }
    const removed = wanted.map((w) => w.number);
    const sorted = [...rows].sort((x, y) => x.number.localeCompare(y.number));
    await startCooldown(ctx, tx, emit, sorted, 'REMOVED', ctx.clock.now());
    await emit(actor.accountId, '10dlc.numbers.removed', { campaignId: id, numbers: removed });
    const remaining = await numbersOfCampaign(tx, id);
    return { campaignId: id, removed, numbers: remaining.map((n) => n.number) };
  });
}

/** GET /compliance/enums/{name} (spec 2.10): `{name, values}`. @throws NotFoundError for another name. */
export function getEnum(actor: Actor, name: string): { name: string; values: string[] } {
  requireScope(actor, 'compliance');
  const values = Object.hasOwn(ENUMS, name) ? ENUMS[name] : undefined;
  if (!values) throw new NotFoundError('enum', `${name} (valid: ${Object.keys(ENUMS).join(', ')})`, 'name');
  return { name, values: [...values] };
}
