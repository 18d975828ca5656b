// The brand store (issue 23 "one store per area"): every Prisma call and every SQL text of brands, vettings and the
// brand/campaign history reads of the compliance area. Services call these with plain parameters and get rows back;
// the row types are exported here under domain names so no service names a generated Prisma type.

import type { Brand, Vetting } from '../../generated/prisma/client.js';
import { Prisma } from '../../generated/prisma/client.js';
import { WRITE_OK } from '../events/event-log.js';
import type { Database, Db, Statement, Tx } from '../kernel/db.js';
import type { KeysetWindow } from '../paging.js';

/** A stored brand (table compliance_brands). */
export type BrandRecord = Brand;
/** A stored vetting (table compliance_vettings). */
export type VettingRecord = Vetting;
/** The columns of a brand row the API shows (a {@link BrandRecord} or a raw row aliased alike). */
export type BrandRow = Omit<BrandRecord, 'accountId' | 'feedback'>;
/** An opaque SQL fragment for the single-statement event write (EventLog.write `guard` / `changes`). */
export type SqlFragment = Prisma.Sql;

/** Brand columns a registration or update may write from the client's body (the service's choice of keys). */
export type BrandFields = Partial<Omit<BrandRecord, 'id' | 'accountId' | 'feedback' | 'createdAt'>>;
/** Every scalar column of compliance_brands, in schema order (the generated client's list). */
export const BRAND_COLUMNS = Object.keys(Prisma.BrandScalarFieldEnum) as (keyof BrandRecord)[];

/** The SQL column of a brand field (the schema maps each camelCase field to its snake_case column). */
const column = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The brand `id` of the account `accountId`, or null when missing or another account's. */
export function findBrand(db: Db | Tx, accountId: string, id: string): Promise<BrandRecord | null> {
  return db.brand.findFirst({ where: { id, accountId } });
}

/** Whether the account has a brand `id` (history's existence check). */
export async function brandExists(db: Db | Tx, accountId: string, id: string): Promise<boolean> {
  return !!(await db.brand.findFirst({ where: { id, accountId }, select: { id: true } }));
}

/** SQL: true when no brand of `accountId` (other than `exceptId`) has `referenceId`, case-insensitively (TCR): the one predicate of the rule, used by the register guard and by {@link referenceIdTaken}. */
export function referenceIdFree(accountId: string, referenceId: string, exceptId?: string): SqlFragment {
  return Prisma.sql`NOT EXISTS (
    SELECT 1 FROM compliance_brands o WHERE o.account_id = ${accountId} AND lower(o.reference_id) = lower(${referenceId}::text)
       ${exceptId ? Prisma.sql`AND o.id <> ${exceptId}` : Prisma.empty})`;
}

/**
 * Whether a brand of `accountId` other than `exceptId` has `referenceId`, compared case-insensitively and exactly
 * (TCR). `lower(a) = lower(b)`, not Prisma's `mode: 'insensitive'`, which is ILIKE and would read `_` and `%` in a
 * referenceId as wildcards (the register path's guard compares the same way).
 */
export async function referenceIdTaken(
  tx: Tx,
  accountId: string,
  referenceId: string | null,
  exceptId?: string,
): Promise<boolean> {
  if (!referenceId) return false;
  const [row] = await tx.$queryRaw<
    { free: boolean }[]
  >`SELECT ${referenceIdFree(accountId, referenceId, exceptId)} AS free`;
  return row?.free === false;
}

/** Casts of the insert's values whose parameter type PostgreSQL cannot infer in `INSERT … SELECT` (text needs none). */
const INSERT_CASTS: Partial<Record<keyof BrandRecord, string>> = {
  vettingScore: 'int',
  createdAt: 'timestamptz',
  updatedAt: 'timestamptz',
};
const INSERT_COLUMNS = BRAND_COLUMNS.map(column).join(', ');

/** A change of a single-statement write (see WRITE_OK): inserts the new brand row `b` (every column; feedback empty). */
export function insertBrandSql(b: BrandRecord): SqlFragment {
  const values = BRAND_COLUMNS.map((c) => {
    if (c === 'feedback') return Prisma.sql`'[]'::jsonb`;
    const cast = INSERT_CASTS[c];
    return cast ? Prisma.sql`${b[c]}::${Prisma.raw(cast)}` : Prisma.sql`${b[c]}`;
  });
  return Prisma.sql`INSERT INTO compliance_brands (${Prisma.raw(INSERT_COLUMNS)}) SELECT ${Prisma.join(values)} WHERE ${WRITE_OK}`;
}

/** Inserts the brand row `b` inside an interactive transaction (the same statement as {@link insertBrandSql}). */
export async function insertBrand(tx: Tx, b: BrandRecord): Promise<void> {
  await tx.$executeRaw`WITH write_ok AS (SELECT true AS ok) ${insertBrandSql(b)}`;
}

/**
 * The brand columns the API shows (every scalar column but accountId and feedback), aliased to the field names so
 * brandDto maps a raw row and a Prisma row alike. The hot reads (one brand, a page of brands) run as prepared
 * statements below Prisma (issue 9).
 */
const BRAND_SELECT = `SELECT ${BRAND_COLUMNS.filter((c) => c !== 'accountId' && c !== 'feedback')
  .map((c) => (column(c) === c ? c : `${column(c)} AS "${c}"`))
  .join(', ')} FROM compliance_brands`;

const BRAND_BY_ID: Statement = { name: 'brand_by_id', text: `${BRAND_SELECT} WHERE id = $1 AND account_id = $2` };

/** One prepared statement per keyset-window shape (cursor after/before, order), so each keeps its index range. */
const brandPageStatements = new Map<string, Statement>();
function brandPageStatement(after: boolean, before: boolean, inverted: boolean): Statement {
  const name = `brand_page_${after ? 'a' : ''}${before ? 'b' : ''}_${inverted ? 'desc' : 'asc'}`;
  let statement = brandPageStatements.get(name);
  if (!statement) {
    const where = ['account_id = $1'];
    if (after) where.push(`id > $${where.length + 1}`);
    if (before) where.push(`id < $${where.length + 1}`);
    const text = `${BRAND_SELECT} WHERE ${where.join(' AND ')} ORDER BY id ${inverted ? 'DESC' : 'ASC'} LIMIT $${where.length + 1}`;
    statement = { name, text };
    brandPageStatements.set(name, statement);
  }
  return statement;
}

/** The brand `id` of `accountId` as a row of API columns (hot path: one prepared statement), or undefined. */
export function readBrandRow(
  ctx: { database: Pick<Database, 'read'> },
  accountId: string,
  id: string,
): Promise<BrandRow | undefined> {
  // `.then`, not async/await: one promise instead of two on the REST and GraphQL brand reads.
  return ctx.database.read<BrandRow>(BRAND_BY_ID, [id, accountId]).then(firstRow);
}

function firstRow<T>(rows: T[]): T | undefined {
  return rows[0];
}

/** Brand rows of `accountId` in a keyset window, ascending by id (descending when `inverted`); hot path. */
export function readBrandPage(
  ctx: { database: Pick<Database, 'read'> },
  accountId: string,
  window: KeysetWindow,
): Promise<BrandRow[]> {
  const params: unknown[] = [accountId];
  if (window.after !== undefined) params.push(window.after);
  if (window.before !== undefined) params.push(window.before);
  params.push(window.limit);
  const statement = brandPageStatement(window.after !== undefined, window.before !== undefined, !!window.inverted);
  return ctx.database.read<BrandRow>(statement, params);
}

/**
 * Writes `fields` and `updatedAt` to brand `id`; with `revetting`, also status PENDING, identityStatus SELF_DECLARED
 * and empty feedback. @returns the brand after the change.
 */
export function updateBrandFields(
  tx: Tx,
  id: string,
  fields: BrandFields,
  now: Date,
  revetting: boolean,
): Promise<BrandRecord> {
  return tx.brand.update({
    where: { id },
    data: {
      ...fields,
      updatedAt: now,
      ...(revetting ? { status: 'PENDING', identityStatus: 'SELF_DECLARED', feedback: [] } : {}),
    },
  });
}

/** Sends brand `id` back to the identity check: PENDING, SELF_DECLARED, no feedback. @returns the brand after. */
export function resetBrandForRevet(tx: Tx, id: string, now: Date): Promise<BrandRecord> {
  return tx.brand.update({
    where: { id },
    data: { status: 'PENDING', identityStatus: 'SELF_DECLARED', feedback: [], updatedAt: now },
  });
}

/** Records the registry's identity decision on brand `id`. */
export async function setBrandDecision(
  tx: Tx,
  id: string,
  decision: { status: string; identityStatus: string; feedback: unknown },
  now: Date,
): Promise<void> {
  await tx.brand.update({
    where: { id },
    data: {
      status: decision.status,
      identityStatus: decision.identityStatus,
      feedback: decision.feedback as object,
      updatedAt: now,
    },
  });
}

/** Records an approved vetting on brand `id`: its identityStatus and vettingScore. */
export async function setBrandVetted(
  tx: Tx,
  id: string,
  identityStatus: string,
  vettingScore: number | null,
  now: Date,
): Promise<void> {
  await tx.brand.update({ where: { id }, data: { identityStatus, vettingScore, updatedAt: now } });
}

/** How many campaigns brand `id` has. */
export function countCampaignsOfBrand(tx: Tx, brandId: string): Promise<number> {
  return tx.campaign.count({ where: { brandId } });
}

/** Deletes brand `id` (its vettings go with it, ON DELETE CASCADE). */
export async function deleteBrandRow(tx: Tx, id: string): Promise<void> {
  await tx.brand.delete({ where: { id } });
}

/** Brand rows of `accountId` by id, in any order (ids of other accounts are left out). */
export function brandsIn(db: Db | Tx, accountId: string, ids: readonly string[]): Promise<BrandRecord[]> {
  return db.brand.findMany({ where: { id: { in: [...ids] }, accountId } });
}

/** How many brands the account has. */
export function countBrandRows(db: Db | Tx, accountId: string): Promise<number> {
  return db.brand.count({ where: { accountId } });
}

/** The PENDING vetting of brand `brandId`, if any. */
export function findPendingVetting(tx: Tx, brandId: string): Promise<VettingRecord | null> {
  return tx.vetting.findFirst({ where: { brandId, status: 'PENDING' } });
}

/** Inserts a vetting row. @returns it. */
export function insertVetting(
  tx: Tx,
  v: Pick<VettingRecord, 'id' | 'accountId' | 'brandId' | 'evpId' | 'vettingClass' | 'status' | 'createdAt'>,
): Promise<VettingRecord> {
  return tx.vetting.create({ data: v });
}

/** Records a vetting's outcome. */
export async function setVettingDecision(
  tx: Tx,
  id: string,
  decision: { status: string; vettingScore: number | null },
  now: Date,
): Promise<void> {
  await tx.vetting.update({
    where: { id },
    data: { status: decision.status, vettingScore: decision.vettingScore, completedAt: now },
  });
}

/** Vettings of brand `brandId`, newest first. */
export function vettingsOfBrand(db: Db | Tx, brandId: string): Promise<VettingRecord[]> {
  return db.vetting.findMany({ where: { brandId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}

/** Vettings of `accountId` for the brands `brandIds`, newest first. */
export function vettingsOfBrands(
  db: Db | Tx,
  accountId: string,
  brandIds: readonly string[],
): Promise<VettingRecord[]> {
  return db.vetting.findMany({
    where: { brandId: { in: [...brandIds] }, accountId },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
}

/** One stored event as the history reads it. */
export interface HistoryEventRow {
  id: bigint;
  eventType: string;
  payload: unknown;
  createdAt: Date;
}

/**
 * Events of channel 10dlc of `accountId` with one of `types` whose payload's `key` is `id`, ascending by id after
 * `after`, at most `take` (the per-resource history of history.service.ts).
 */
export function resourceEvents(
  db: Db | Tx,
  q: { accountId: string; types: string[]; key: string; id: string; after?: bigint; take: number },
): Promise<HistoryEventRow[]> {
  return db.event.findMany({
    where: {
      accountId: q.accountId,
      channel: '10dlc',
      eventType: { in: q.types },
      payload: { path: [q.key], equals: q.id },
      ...(q.after !== undefined ? { id: { gt: q.after } } : {}),
    },
    orderBy: { id: 'asc' },
    take: q.take,
  });
}
