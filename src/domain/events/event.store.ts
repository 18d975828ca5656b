// The events area's store (issue 23): the Prisma calls and SQL text of replay, history and retention. The event log
// (event-log.ts) stays its own store: it owns the recording statements, the order lock and the hooks' SQL. The
// replay statements are the SSE hot path: moved here unchanged.

import { Prisma } from '../../generated/prisma/client.js';
import type { Database, Db, Statement } from '../kernel/db.js';
import { type StoredEvent, storedEventFromRow } from './event.js';

/** The channel filter of a replay read: every channel when undefined. */
function channelFilter(channels: readonly string[] | undefined): Prisma.Sql {
  return channels ? Prisma.sql`AND e.channel = ANY(${[...channels]}::text[])` : Prisma.empty;
}

/** A row of {@link replayRows}. */
export interface ReplayRow {
  /** 0: the one meta row (newest id of the log, retention mark); 1: an event. */
  k: number;
  id: bigint | null;
  seq: bigint | null;
  channel: string | null;
  event_type: string | null;
  payload: string | null;
  created_at: Date | null;
  mark: bigint | null;
}

/**
 * The one range read of a replay: the newest `limit` + 1 events of the account (of `channels`) after `cursor` (a
 * cursor above the log's newest id reads from the start), newest first, plus one meta row (`k` = 0) with the log's
 * newest id and the account's retention mark, in one statement (one snapshot). The payload is the stored JSON text.
 */
export async function replayRows(
  db: Db,
  accountId: string,
  channels: readonly string[] | undefined,
  cursor: bigint,
  limit: number,
): Promise<ReplayRow[]> {
  const channelSql = channelFilter(channels);
  return db.$queryRaw<ReplayRow[]>`
    SELECT 0 AS k, (SELECT id FROM events ORDER BY id DESC LIMIT 1) AS id, NULL::bigint AS seq,
           NULL::text AS channel, NULL::text AS event_type, NULL::text AS payload, NULL::timestamptz AS created_at,
           (SELECT pruned_through_id FROM event_retention_marks WHERE account_id = ${accountId}) AS mark
    UNION ALL
    (SELECT 1, e.id, e.seq, e.channel, e.event_type, e.payload::text, e.created_at, NULL
       FROM events e
      WHERE e.account_id = ${accountId} ${channelSql}
        AND e.id > (SELECT CASE WHEN ${cursor}::bigint > coalesce(max(id), 0) THEN 0 ELSE ${cursor}::bigint END
                      FROM (SELECT id FROM events ORDER BY id DESC LIMIT 1) newest)
      ORDER BY e.id DESC
      LIMIT ${limit + 1})`;
}

/** A row of {@link replayFrameRows}: column values as the pool returns them (int8 as a string, PGlite's as a bigint). */
export interface ReplayFrameRow {
  /** 0: the one meta row (`id` is the log's newest id, `mark` the account's retention mark); 1: an event. */
  k: number;
  id: string | bigint | null;
  channel: string | null;
  event_type: string | null;
  /** The stored JSON text of the payload. */
  payload: string | null;
  /** `created_at` as the envelope's timestamp text (ISO 8601 UTC, milliseconds), formatted by PostgreSQL. */
  ts: string | null;
  mark: string | bigint | null;
}

/** The replay read of the SSE writer, with and without a channel filter (named prepared statements). */
const replayFrameStatements = [false, true].map(
  (filtered): Statement => ({
    name: filtered ? 'sse_replay_channels' : 'sse_replay',
    text: `SELECT 0 AS k, (SELECT id FROM events ORDER BY id DESC LIMIT 1) AS id, NULL::text AS channel,
       NULL::text AS event_type, NULL::text AS payload, NULL::text AS ts,
       (SELECT pruned_through_id FROM event_retention_marks WHERE account_id = $1) AS mark
UNION ALL
(SELECT 1, e.id, e.channel, e.event_type, e.payload::text,
        to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), NULL
   FROM events e
  WHERE e.account_id = $1${filtered ? ' AND e.channel = ANY($4::text[])' : ''}
    AND e.id > (SELECT CASE WHEN $2::bigint > coalesce(max(id), 0) THEN 0 ELSE $2::bigint END
                  FROM (SELECT id FROM events ORDER BY id DESC LIMIT 1) newest)
  ORDER BY e.id DESC
  LIMIT $3)`,
  }),
);

/**
 * The replay read of the SSE writer in ONE statement (one snapshot; see event-stream.ts readReplayFrames): one
 * meta row (`k` = 0) with the log's newest id and the account's retention mark, and the newest `limit` + 1 events of
 * the account (of `channels`) after `cursor` (a cursor above the log's newest id reads from the start), newest
 * first, each with its payload as the stored JSON text and its timestamp already formatted, so the frames are one
 * string concatenation per event. A named prepared statement below Prisma (`database.read`): PostgreSQL parses and
 * plans it once per pooled connection, and the 1,001 rows are not converted by Prisma (issue 24: 4.4–7.0 ms through
 * Prisma's `$queryRaw` with the frames assembled by `string_agg` in SQL, against ~3 ms this way).
 */
export function replayFrameRows(
  database: Pick<Database, 'read'>,
  accountId: string,
  channels: readonly string[] | undefined,
  cursor: bigint,
  limit: number,
): Promise<ReplayFrameRow[]> {
  const params: unknown[] = [accountId, cursor.toString(), limit + 1];
  if (channels) params.push([...channels]);
  return database.read<ReplayFrameRow>(replayFrameStatements[channels ? 1 : 0]!, params);
}

/** Up to `take` events of the account (of `channels`) with id above `after`, in id order (a keyset page). */
export async function eventPage(
  db: Db,
  accountId: string,
  channels: readonly string[] | undefined,
  after: bigint | undefined,
  take: number,
): Promise<StoredEvent[]> {
  const rows = await db.event.findMany({
    where: {
      accountId,
      ...(channels ? { channel: { in: [...channels] } } : {}),
      ...(after !== undefined ? { id: { gt: after } } : {}),
    },
    orderBy: { id: 'asc' },
    take,
  });
  return rows.map(storedEventFromRow);
}

/** The highest event id retention pruned from the account's log; null when none was. */
export async function retentionMark(db: Db, accountId: string): Promise<bigint | null> {
  const mark = await db.eventRetentionMark.findUnique({ where: { accountId } });
  return mark?.prunedThroughId ?? null;
}

/**
 * PostgreSQL's JIT off for the prune (`SET LOCAL`, {@link Database.statement}): its plan is index lookups per account,
 * but on a large events table the planner's estimate for `created_at < cutoff` (a third of the table without
 * statistics) puts its cost past `jit_above_cost` and the inlining and optimising thresholds, and compiling it took
 * 150–400 ms of backend CPU on every run, including each instance's start, while the statement itself took 0.1 ms
 * (issue 24 round 18: 300,000 events, EXPLAIN ANALYZE 248 ms with JIT against 0.07 ms without).
 */
const PRUNE_PLANNER = ['jit = off'] as const;

/**
 * Deletes events created before `cutoff`, keeping each account's newest `keepOffset` + 1, and raises each account's
 * retention mark to the highest pruned id, in ONE statement (data-modifying CTEs run exactly once, so the delete and
 * its mark commit together), without JIT ({@link PRUNE_PLANNER}). @returns how many events were deleted.
 */
export async function pruneEventsBefore(
  database: Pick<Database, 'statement'>,
  cutoff: Date,
  keepOffset: number,
  now: Date,
): Promise<number> {
  // One statement: data-modifying CTEs run exactly once, so the delete and its mark commit together.
  const query = Prisma.sql`
    WITH accts AS (
      SELECT DISTINCT account_id FROM events WHERE created_at < ${cutoff}
    ), floors AS (
      SELECT a.account_id,
             (SELECT e.id FROM events e WHERE e.account_id = a.account_id
               ORDER BY e.id DESC OFFSET ${keepOffset} LIMIT 1) AS floor_id
        FROM accts a
    ), del AS (
      DELETE FROM events e USING floors f
       WHERE e.account_id = f.account_id AND f.floor_id IS NOT NULL
         AND e.id < f.floor_id AND e.created_at < ${cutoff}
      RETURNING e.account_id, e.id
    ), marks AS (
      INSERT INTO event_retention_marks (account_id, pruned_through_id, updated_at)
      SELECT account_id, max(id), ${now} FROM del GROUP BY account_id
      ON CONFLICT (account_id) DO UPDATE
        SET pruned_through_id = GREATEST(event_retention_marks.pruned_through_id, EXCLUDED.pruned_through_id),
            updated_at = EXCLUDED.updated_at
      RETURNING 1
    )
    SELECT count(*)::int AS deleted FROM del`;
  const rows = await database.statement<{ deleted: number }>({ text: query.text, values: query.values }, PRUNE_PLANNER);
  return rows[0]?.deleted ?? 0;
}
