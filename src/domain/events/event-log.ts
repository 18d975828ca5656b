import { Prisma } from '../../generated/prisma/client.js';
import type { Clock } from '../kernel/clock.js';
import { arrayParam, type Db, jsonArrayParam, type Tx } from '../kernel/db.js';
import { settleBatch, type WaitingWrite as Waiting } from '../kernel/group-commit.js';
import { type ChangeNotices, topicsOfEvent } from './change-notices.port.js';
import type { Emit, StoredEvent } from './event.js';
import type { EventBus } from './event-bus.port.js';
import { type Channel, channelOf } from './event-catalog.js';

// The event types were declared here; they live in event.ts now (kept exported from here for the areas' imports).
export type { Emit, EventEnvelope, StoredEvent } from './event.js';
export { storedEventFromRow, toEnvelope } from './event.js';

/**
 * What runs with every batch of recorded events (one account, increasing id), e.g. the webhook fan-out that writes
 * one delivery row per matching webhook, so an event and its deliveries commit together or not at all.
 *
 * Each statement of a write costs a round trip and its CPU, and the account's order lock is held across them (issue
 * 9), so a hook that needs rows declares `read`: a scalar subquery over the account returning JSON (or NULL),
 * evaluated by the recording statement itself. In a transaction ({@link EventLog.transaction}) `run` then writes
 * what it must with the value read. In a single-statement write ({@link EventLog.write}) `statement` instead adds
 * its writes to that statement, computed from the value `read` returned last time for the account; the statement
 * writes nothing unless `read` still returns that value (else it is tried again with the fresh value).
 */
export interface EventHook {
  /** A scalar subquery returning JSON (or NULL) about `accountId`, evaluated in the recording statement. */
  read?: (accountId: string) => Prisma.Sql;
  /** Inside the recording transaction, after the events' rows are written. */
  run?(tx: Tx, events: StoredEvent[], read: unknown): Promise<void>;
  /**
   * For a single-statement write: the data-modifying CTE bodies (named `name(0)`, `name(1)`, … in that order, so a
   * later one can read an earlier one) writing what `run` would for `events`, given `read`'s value. They may read
   * `ins(id, seq, ord)`: the inserted events, joined by `ord` (each {@link PendingEvent}'s `ord`). In an append
   * statement (events only, several accounts: {@link APPENDS_IN_FLIGHT}) `ins` also holds other accounts' events
   * and there is no `write_ok`: select yours by `ord`, and write nothing for events `ins` lacks. Each is read by the final
   * SELECT (so a plain SELECT body, e.g. `pg_notify`, runs), hence a data-modifying one needs a RETURNING clause.
   */
  statement?(events: PendingEvent[], read: unknown, name: (j: number) => string, attempt: WriteAttempt): Prisma.Sql[];
  /**
   * After the commit (never throws; e.g. metrics, or waking the workers of what `run`/`statement` enqueued). `read`
   * is the value of this hook's `read` that the write used (undefined without `read`); `attempt` is the object
   * `statement` was given for the statement that committed (undefined after an interactive transaction).
   */
  committed?(events: StoredEvent[], read: unknown, attempt?: WriteAttempt): void;
  /**
   * A statement built with `statement(…, attempt)` did not commit (it failed, its guard was false, or a read had
   * changed and it is built again): whatever `statement` set aside for it is to be given back. Never throws.
   */
  abandoned?(attempt: WriteAttempt): void;
}

/**
 * Identifies one built single-statement write for its hooks ({@link EventHook.statement}): each statement built
 * gets a fresh one, later handed to either `committed` or `abandoned`, never both. Hooks key their own state by it.
 */
export type WriteAttempt = object;

/** An event of a single-statement write before it has its id: what a hook's `statement` sees. */
export interface PendingEvent extends NewEvent {
  channel: Channel;
  /** The event's `ord` in the statement's `ins`: its 1-based position among the events the statement writes. */
  ord: number;
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string;
}

/**
 * One write of {@link EventLog.write}: data-modifying statements and the events they cause, all of one account,
 * committed by ONE SQL statement (one round trip, no interactive transaction).
 */
export interface AtomicWrite {
  accountId: string;
  /** A boolean SQL expression evaluated first (e.g. a uniqueness rule); when false nothing at all is written. */
  guard?: Prisma.Sql;
  /**
   * A boolean SQL expression over rows that no write of {@link EventLog.write} changes (e.g. "the recipient identity
   * is still active"): when false nothing of this write is written and it resolves `null`, as with `guard`. Unlike
   * a guard it does not take the write out of the account's group commit: the statement evaluates the AND of its
   * writes' preconditions, and when that is false each write is sent again alone, so each gets its own answer.
   */
  precondition?: Prisma.Sql;
  /**
   * Data-modifying statements (CTE bodies), each writing rows only where {@link WRITE_OK} holds, e.g.
   * `INSERT INTO t (…) SELECT … WHERE ${WRITE_OK}`.
   */
  changes: Prisma.Sql[];
  /** The events, in order (the account's). */
  events: { eventType: string; payload: Record<string, unknown> }[];
}

/** In a change of {@link AtomicWrite}: true when the write goes ahead (its guard held and the hooks' reads were current). */
export const WRITE_OK = Prisma.sql`(SELECT ok FROM write_ok)`;

/** SQL runner below Prisma for single-statement writes (autocommit): `text` with `$n` placeholders. */
export type SqlRunner = (text: string, values: unknown[]) => Promise<Record<string, unknown>[]>;

/** Most accounts whose hook reads are remembered for single-statement writes. */
const HOOK_READ_CACHE = 10_000;

/** Events one `record` call wrote in a transaction, with the hooks' read values it used (for `committed`). */
interface RecordedBatch {
  events: StoredEvent[];
  reads: unknown[];
}

/**
 * The guard of one statement of {@link EventLog.write}: a lone write's `guard` AND its `precondition`; a batch (of
 * unguarded writes) the AND of its writes' preconditions; `true` when there is none.
 */
function statementGuard(ws: AtomicWrite[]): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  if (ws.length === 1 && ws[0]!.guard) parts.push(ws[0]!.guard);
  for (const w of ws) if (w.precondition) parts.push(w.precondition);
  if (parts.length === 0) return Prisma.sql`true`;
  if (parts.length === 1) return parts[0]!;
  return Prisma.sql`(${Prisma.join(parts, ') AND (')})`;
}

/** Thrown inside {@link EventLog.write}'s transaction form when the guard is false (rolls back, nothing written). */
class GuardFailed extends Error {}

/** Most ingests one group-commit transaction takes (the rest wait for the next one). */
export const INGEST_BATCH_MAX = 500;

/** One event to record: its account, catalog type and JSON object payload. */
export interface NewEvent {
  accountId: string;
  eventType: string;
  payload: Record<string, unknown>;
}

type WaitingWrite = Waiting<AtomicWrite, StoredEvent[] | null>;

/** One account's group-commit queue: writes waiting, statements running, and whether a start is scheduled. */
interface AccountWrites {
  waiting: WaitingWrite[];
  running: number;
  starting: boolean;
}

/**
 * Statements of one account's unguarded writes sent at once at most (group commit, {@link EventLog.write}). The
 * account's order lock lets one commit at a time; a second one in flight waits for it inside PostgreSQL and starts
 * the moment it commits (issue 24: the end-to-end webhook bench spent most of each statement waiting for WAL
 * flushes, and the next batch was only sent after the answer had been read by a busy event loop).
 */
export const WRITES_IN_FLIGHT = 2;

/**
 * Statements of appends ({@link EventLog.write} of events only: no guard, precondition or change, e.g. ingest) in
 * flight at once, over every account. Appends that arrive while they run wait and go together into the next one,
 * whatever their accounts (issue 24, `events-10acc`: ten clients on ten accounts each have one write pending, so
 * per-account batches held one event each and every event paid a statement, a commit and a WAL flush of its own).
 */
export const APPENDS_IN_FLIGHT = 2;

/** Most accounts one append statement carries (its text grows with them; the rest wait for the next one). */
export const APPEND_ACCOUNTS_MAX = 32;

/**
 * "Events are facts in the database first" (ARCHITECTURE.md): a domain change and the events it causes commit in
 * one transaction; after the commit the events are published on the bus for live subscribers.
 *
 * Ordering (docs/events.md): every reader reads one account at a time, so the guarantee is per account: a reader
 * that has seen id N of an account never later finds a committed id below N in that account. The statement that
 * inserts an account's events first bumps the account's row in `event_account_seqs`; its row lock, held to COMMIT,
 * orders the event transactions of that one account (ids are drawn after it is taken), and transactions of other
 * accounts never wait for it. The same row numbers the account's events (`seq`) without holes.
 */
export class EventLog {
  readonly #hooks: EventHook[] = [];
  /** Group commit: per account, the single-statement writes waiting while that account's statements run. */
  readonly #writes = new Map<string, AccountWrites>();
  /** Group commit of appends over every account: writes waiting while {@link APPENDS_IN_FLIGHT} statements run. */
  readonly #appends: AccountWrites = { waiting: [], running: 0, starting: false };
  /** Per account, what each hook's `read` returned last (JSON text per hook), for single-statement writes. */
  readonly #reads = new Map<string, (string | null)[]>();

  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    private readonly notices?: ChangeNotices,
    private readonly sql?: SqlRunner,
  ) {}

  /** After the commit: the hooks' `committed`, with the value of each hook's `read` the write used (never throws). */
  #committed(events: StoredEvent[], reads: readonly unknown[] = [], attempt?: WriteAttempt): void {
    for (const [i, hook] of this.#hooks.entries()) {
      try {
        hook.committed?.(events, reads[i], attempt);
      } catch {
        // A post-commit hook (metrics) never fails a committed write.
      }
    }
  }

  /**
   * After the commit: the events on the bus, then each on the change-notice topics of the objects it is about (never
   * throws). @returns a promise only when the bus's publish is asynchronous (Redis), for the caller to await, as it
   * did before; an in-process bus and the notices create none (issue 24: promises per appended event).
   */
  #publish(events: StoredEvent[]): Promise<void> | undefined {
    const sent = this.bus.publish(events);
    if (!sent) {
      this.#notify(events);
      return undefined;
    }
    return sent.then(() => this.#notify(events));
  }

  /** Publishes each event on the change-notice topics of the objects it is about (never throws). */
  #notify(events: StoredEvent[]): void {
    if (!this.notices) return;
    for (const event of events) for (const topic of topicsOfEvent(event)) this.notices.publish(topic, event);
  }

  /** Adds a hook that runs in the recording transaction of every batch of events (see {@link EventHook}). */
  addHook(hook: EventHook): void {
    this.#hooks.push(hook);
  }

  /**
   * Runs `fn` in one database transaction, handing it `emit` to record events in that same transaction. The first
   * `emit` for an account takes that account's event-order row lock until COMMIT (other accounts are not held
   * up). After the commit, every recorded event is published on the bus (a publish failure is logged by the bus,
   * never thrown: the events are already durable, and each instance's OrderedEventBus delivers a lost publish
   * from the log). A transaction that emits for two accounts takes their locks in emit order; two such
   * transactions emitting in opposite orders can deadlock, which PostgreSQL resolves by failing one of them.
   * @returns what `fn` returns. Throws whatever `fn` throws, after rolling back the change and its events.
   */
  async transaction<T>(fn: (tx: Tx, emit: Emit) => Promise<T>): Promise<T> {
    const recorded: StoredEvent[] = [];
    const batches: RecordedBatch[] = [];
    const result = await this.db.$transaction(async (tx) => {
      const emit: Emit = async (accountId, eventType, payload) => {
        const [event] = await this.record(tx, [{ accountId, eventType, payload }], batches);
        recorded.push(event!);
        return event!;
      };
      return fn(tx, emit);
    });
    if (recorded.length > 0) {
      for (const b of batches) this.#committed(b.events, b.reads);
      const sent = this.#publish(recorded);
      if (sent) await sent;
    }
    return result;
  }

  /**
   * Records events outside any other change, all in one transaction (one insert statement per account), and
   * publishes them after the commit. @returns the stored events, in the order of `items`.
   */
  async append(items: NewEvent[]): Promise<StoredEvent[]> {
    const byAccount = new Map<string, NewEvent[]>();
    for (const item of items) {
      const list = byAccount.get(item.accountId);
      if (list) list.push(item);
      else byAccount.set(item.accountId, [item]);
    }
    const stored = new Map<NewEvent, StoredEvent>();
    const batches: RecordedBatch[] = [];
    await this.db.$transaction(async (tx) => {
      // Accounts in a fixed order, so two multi-account appends cannot deadlock on their row locks.
      for (const accountId of [...byAccount.keys()].sort()) {
        const list = byAccount.get(accountId)!;
        const events = await this.record(tx, list, batches);
        list.forEach((item, i) => {
          stored.set(item, events[i]!);
        });
      }
    });
    const result = items.map((item) => stored.get(item)!);
    const ordered = [...result].sort((x, y) => (BigInt(x.id) < BigInt(y.id) ? -1 : 1));
    for (const b of batches) this.#committed(b.events, b.reads);
    const sent = this.#publish(ordered);
    if (sent) await sent;
    return result;
  }

  /**
   * Commits `w` (its changes and its events, and every hook's writes) in ONE SQL statement, outside any interactive
   * transaction: one round trip where {@link transaction} takes one per statement plus BEGIN and COMMIT, and the
   * account's order lock is held for that one statement only. Same rules as {@link transaction}: the changes and the
   * events commit together or not at all; the statement first bumps the account's `event_account_seqs` row, so ids
   * are drawn under the account's order lock and `seq` has no holes; after the commit the events are published.
   * When a hook's read changed since last time (e.g. a webhook was added), nothing is written and the statement is
   * sent again with the fresh value. Without a SQL runner (or with a hook that has no `statement` form) it runs as
   * a {@link transaction}. A write of events only (no guard, precondition or change) is an append: it shares a
   * statement with the appends of other accounts ({@link APPENDS_IN_FLIGHT}).
   * @returns the stored events, or `null` when `guard` was false (nothing written).
   * @throws database errors (nothing written).
   */
  write(w: AtomicWrite): Promise<StoredEvent[] | null> {
    return this.#write(w);
  }

  /**
   * {@link write}, resolving with `map` of its answer when given: the group-commit queues resolve with the mapped
   * value themselves, so {@link ingest} costs no promise of its own per event (issue 24). Never throws synchronously.
   */
  #write(w: AtomicWrite): Promise<StoredEvent[] | null>;
  #write<T>(w: AtomicWrite, map: (events: StoredEvent[] | null) => T): Promise<T>;
  #write<T>(w: AtomicWrite, map?: (events: StoredEvent[] | null) => T): Promise<T | StoredEvent[] | null> {
    if (!this.sql || this.#hooks.some((h) => h.run && !h.statement)) {
      const done = this.#writeInTransaction(w);
      return map ? done.then(map) : done;
    }
    // A guarded write goes alone: two guards in one statement would both read the state before either write. A
    // `precondition` (rows no write changes) keeps the write in the group commit.
    if (w.guard) return this.#writeBatch([w]).then((out) => (map ? map(out[0]!) : out[0]!));
    return new Promise<T | StoredEvent[] | null>((resolve, reject) => {
      const done = map
        ? (events: StoredEvent[] | null) => {
            try {
              resolve(map(events));
            } catch (err) {
              reject(err);
            }
          }
        : resolve;
      if (w.changes.length === 0 && !w.precondition && w.events.length > 0) {
        this.#appends.waiting.push({ write: w, resolve: done, reject });
        this.#startAppends();
        return;
      }
      let q = this.#writes.get(w.accountId);
      if (!q) {
        q = { waiting: [], running: 0, starting: false };
        this.#writes.set(w.accountId, q);
      }
      q.waiting.push({ write: w, resolve: done, reject });
      this.#startWrites(w.accountId, q);
    });
  }

  /**
   * Starts one more statement of the account's waiting writes when fewer than {@link WRITES_IN_FLIGHT} run, at the
   * end of this turn of the event loop (setImmediate), so the writes of requests read in the same turn share it.
   */
  #startWrites(accountId: string, q: AccountWrites): void {
    if (q.starting || q.running >= WRITES_IN_FLIGHT) return;
    q.starting = true;
    setImmediate(() => {
      q.starting = false;
      if (q.waiting.length === 0 || q.running >= WRITES_IN_FLIGHT) return;
      q.running++;
      void this.#runWrites(accountId, q);
    });
  }

  /**
   * Starts one more append statement when fewer than {@link APPENDS_IN_FLIGHT} run, at the end of this turn of the
   * event loop (setImmediate), so the appends of requests read in the same turn share it.
   */
  #startAppends(): void {
    const q = this.#appends;
    if (q.starting || q.running >= APPENDS_IN_FLIGHT) return;
    q.starting = true;
    setImmediate(() => {
      q.starting = false;
      if (q.waiting.length === 0 || q.running >= APPENDS_IN_FLIGHT) return;
      q.running++;
      void this.#runAppends();
    });
  }

  /**
   * Group commit of appends over every account: while statements run, further appends wait; each statement then
   * takes the longest prefix of the waiting ones within {@link INGEST_BATCH_MAX} events and
   * {@link APPEND_ACCOUNTS_MAX} accounts (a prefix, so an account's appends are taken in the order they came) and
   * writes them with {@link #appendBatch}. A refused statement is retried write by write (kernel/group-commit.ts).
   */
  async #runAppends(): Promise<void> {
    const q = this.#appends;
    for (;;) {
      let events = 0;
      let take = 0;
      const accounts = new Set<string>();
      while (take < q.waiting.length) {
        const w = q.waiting[take]!.write;
        if (take > 0 && events + w.events.length > INGEST_BATCH_MAX) break;
        if (!accounts.has(w.accountId) && accounts.size >= APPEND_ACCOUNTS_MAX) break;
        accounts.add(w.accountId);
        events += w.events.length;
        take++;
      }
      const batch = q.waiting.splice(0, take);
      if (batch.length === 0) break;
      await settleBatch(batch, (ws) => this.#appendBatch(ws));
    }
    q.running--;
  }

  /**
   * Group commit of single-statement writes: the writes of an account that arrive while its statements run wait and
   * then go together in one statement (up to {@link INGEST_BATCH_MAX} events). At most {@link WRITES_IN_FLIGHT}
   * statements of an account are sent at once: the second waits in PostgreSQL on the account's order lock (its
   * `event_account_seqs` row, held to COMMIT) and runs the moment the first commits, instead of being sent only after
   * the first's answer has come back and been read. Ids are still drawn under that lock, so they increase with
   * `seq` and commit order within the account; a statement's events are published after its commit as before (an
   * OrderedEventBus puts two statements' publishes back in order if their answers are read in the other order). A
   * failed batch is retried write by write, so one bad write fails alone. Guarded writes never join a batch; writes
   * with a `precondition` do (see {@link AtomicWrite.precondition}).
   */
  async #runWrites(accountId: string, q: AccountWrites): Promise<void> {
    for (;;) {
      let events = 0;
      let take = 0;
      while (
        take < q.waiting.length &&
        (take === 0 || events + q.waiting[take]!.write.events.length <= INGEST_BATCH_MAX)
      ) {
        events += q.waiting[take]!.write.events.length;
        take++;
      }
      const batch = q.waiting.splice(0, take);
      if (batch.length === 0) break;
      // Retried write by write only when the database refused the statement: kernel/group-commit.ts.
      await settleBatch(batch, (ws) => this.#writeBatch(ws));
    }
    q.running--;
    if (q.running === 0 && q.waiting.length === 0 && !q.starting) this.#writes.delete(accountId);
  }

  /** One statement for writes of one account (see {@link write}); @returns each write's events, or null (guard). */
  async #writeBatch(ws: AtomicWrite[]): Promise<(StoredEvent[] | null)[]> {
    const runner = this.sql!;
    const accountId = ws[0]!.accountId;
    const at = this.clock.now();
    const timestamp = at.toISOString();
    const pending: PendingEvent[] = [];
    for (const w of ws) {
      for (const e of w.events) {
        const channel = channelOf(e.eventType);
        if (!channel) throw new Error(`event type ${e.eventType} is not in the event catalog`);
        pending.push({
          accountId,
          eventType: e.eventType,
          payload: e.payload,
          channel,
          ord: pending.length + 1,
          timestamp,
        });
      }
    }
    const n = pending.length;
    const guard = statementGuard(ws);
    for (let tries = 0; ; tries++) {
      const attempt: WriteAttempt = {};
      const cached = this.#reads.get(accountId) ?? this.#hooks.map(() => null);
      const used: unknown[] = [];
      const reads: Prisma.Sql[] = [];
      const checks: Prisma.Sql[] = [];
      const hookCtes: Prisma.Sql[] = [];
      const forced: Prisma.Sql[] = [];
      this.#hooks.forEach((h, i) => {
        if (h.read) {
          reads.push(Prisma.sql`(${h.read(accountId)})::text AS ${Prisma.raw(`r${i}`)}`);
          const last = cached[i] ?? null;
          checks.push(Prisma.sql` AND (reads.${Prisma.raw(`r${i}`)})::jsonb IS NOT DISTINCT FROM (${last})::jsonb`);
        }
        const value = cached[i] === null || cached[i] === undefined ? null : JSON.parse(cached[i]!);
        used[i] = value;
        if (!h.statement) return;
        const name = (j: number) => `hook${i}_${j}`;
        h.statement(pending, value, name, attempt).forEach((body, j) => {
          hookCtes.push(Prisma.sql`, ${Prisma.raw(name(j))} AS (${body})`);
          forced.push(Prisma.sql`, (SELECT count(*) FROM ${Prisma.raw(name(j))})`);
        });
      });
      const changes = ws
        .flatMap((w) => w.changes)
        .map((body, j) => Prisma.sql`, ${Prisma.raw(`change${j}`)} AS (${body})`);
      const q = Prisma.sql`
        WITH guard AS (SELECT (${guard}) AS ok),
        reads AS (SELECT ${reads.length > 0 ? Prisma.join(reads, ', ') : Prisma.sql`1 AS none`}),
        write_ok AS (SELECT guard.ok${checks.length > 0 ? Prisma.join(checks, '') : Prisma.empty} AS ok FROM guard, reads)
        ${changes.length > 0 ? Prisma.join(changes, '') : Prisma.empty},
        s AS (
          INSERT INTO event_account_seqs (account_id, last_seq) SELECT ${accountId}, ${n}::bigint WHERE ${WRITE_OK}
          ON CONFLICT (account_id) DO UPDATE SET last_seq = event_account_seqs.last_seq + EXCLUDED.last_seq
          RETURNING last_seq
        ),
        ins AS (
          INSERT INTO events (account_id, channel, event_type, payload, created_at, seq)
          SELECT ${accountId}, i.channel, i.event_type, i.payload, ${at}::timestamptz, s.last_seq - ${n}::bigint + i.ord
            FROM s, ROWS FROM (unnest(${arrayParam(pending.map((e) => e.channel))}::text[]), unnest(${arrayParam(pending.map((e) => e.eventType))}::text[]),
                           json_array_elements(${jsonArrayParam(pending.map((e) => JSON.stringify(e.payload)))}::json))
                    WITH ORDINALITY AS i(channel, event_type, payload, ord)
          RETURNING id, seq, seq - (SELECT last_seq FROM s) + ${n}::bigint AS ord
        )
        ${hookCtes.length > 0 ? Prisma.join(hookCtes, '') : Prisma.empty}
        SELECT guard.ok AS guard_ok, write_ok.ok AS ok, reads.*,
               (SELECT json_agg(json_build_object('id', id::text, 'seq', seq::text) ORDER BY seq)::text FROM ins) AS evs
               ${forced.length > 0 ? Prisma.join(forced, '') : Prisma.empty}
          FROM guard, write_ok, reads`;
      let row: Record<string, unknown> | undefined;
      try {
        [row] = await runner(q.text, q.values);
        if (!row) throw new Error('single-statement write returned no row');
      } catch (err) {
        this.#abandoned(attempt);
        throw err;
      }
      const fresh = this.#hooks.map((h, i) => (h.read ? ((row[`r${i}`] as string | null) ?? null) : null));
      this.#remember(accountId, fresh);
      if (row.guard_ok !== true || row.ok !== true) this.#abandoned(attempt);
      if (row.guard_ok !== true) {
        if (ws.length === 1) return [null];
        // One of the batch's preconditions failed: each write alone, in order, gets its own answer.
        const out: (StoredEvent[] | null)[] = [];
        for (const w of ws) out.push((await this.#writeBatch([w]))[0]!);
        return out;
      }
      if (row.ok !== true) {
        if (tries < 2) continue;
        const out: (StoredEvent[] | null)[] = [];
        for (const w of ws) out.push(await this.#writeInTransaction(w));
        return out;
      }
      const ids = JSON.parse((row.evs as string | null) ?? '[]') as { id: string; seq: string }[];
      for (let i = 1; i < ids.length; i++) {
        // The invariant the ordered bus and replay rely on (ids increase with seq within an account).
        if (BigInt(ids[i]!.id) <= BigInt(ids[i - 1]!.id)) {
          this.#abandoned(attempt);
          throw new Error('event ids must increase with seq');
        }
      }
      const events: StoredEvent[] = pending.map((e, i) => ({
        id: ids[i]!.id,
        seq: ids[i]!.seq,
        accountId,
        channel: e.channel,
        eventType: e.eventType,
        payload: e.payload,
        timestamp,
      }));
      if (events.length > 0) {
        this.#committed(events, used, attempt);
        const sent = this.#publish(events);
        if (sent) await sent;
      } else this.#abandoned(attempt);
      const out: StoredEvent[][] = [];
      let k = 0;
      for (const w of ws) {
        out.push(events.slice(k, k + w.events.length));
        k += w.events.length;
      }
      return out;
    }
  }

  /**
   * ONE statement for appends of one or more accounts (see {@link APPENDS_IN_FLIGHT}); @returns each write's events,
   * in the order of `ws`. An account whose hook read had changed is sent again with the fresh value (twice at
   * most, then as a {@link transaction} per write), the others being committed already.
   */
  async #appendBatch(ws: AtomicWrite[]): Promise<(StoredEvent[] | null)[]> {
    const at = this.clock.now();
    const byAccount = new Map<string, number[]>();
    ws.forEach((w, i) => {
      const list = byAccount.get(w.accountId);
      if (list) list.push(i);
      else byAccount.set(w.accountId, [i]);
    });
    const out: (StoredEvent[] | null)[] = ws.map(() => null);
    // Accounts in code-unit order, which is COLLATE "C" order for their ASCII ids (the statement locks them so).
    let todo = [...byAccount.keys()].sort();
    for (let tries = 0; todo.length > 0; tries++) {
      if (tries > 2) {
        for (const accountId of todo) {
          for (const i of byAccount.get(accountId)!) out[i] = await this.#writeInTransaction(ws[i]!);
        }
        break;
      }
      const parts = todo.map((accountId) => ({ accountId, writes: byAccount.get(accountId)!.map((i) => ws[i]!) }));
      const { stored, stale } = await this.#appendOnce(parts, at);
      for (const [accountId, events] of stored) {
        let k = 0;
        for (const i of byAccount.get(accountId)!) {
          const n = ws[i]!.events.length;
          out[i] = events.slice(k, k + n);
          k += n;
        }
      }
      todo = stale;
    }
    return out;
  }

  /**
   * The append statement itself: per account (in `parts`' order, which must be code-unit order) its hooks' reads
   * and the check that each is unchanged since last time; the accounts' `event_account_seqs` rows bumped in one
   * INSERT in `COLLATE "C"` order (so two such statements, of this instance or another, take the locks in the same
   * order and cannot deadlock), only for accounts whose reads were current; every event drawn its id after ALL those
   * locks are held (the insert reads a one-row aggregate of the bump), in order, numbered `seq` within its account.
   * `ins(id, seq, ord)` holds every account's events, `ord` being the 1-based position in the statement (each
   * {@link PendingEvent}'s `ord`), so a hook's CTEs join their own events by `ord`.
   * @returns the stored events per committed account, and the accounts whose reads had changed (nothing written).
   * @throws database errors (nothing written).
   */
  async #appendOnce(
    parts: { accountId: string; writes: AtomicWrite[] }[],
    at: Date,
  ): Promise<{ stored: Map<string, StoredEvent[]>; stale: string[] }> {
    const runner = this.sql!;
    const timestamp = at.toISOString();
    const pendingOf: PendingEvent[][] = [];
    const accounts: string[] = [];
    const channels: string[] = [];
    const types: string[] = [];
    const payloads: string[] = [];
    for (const part of parts) {
      const list: PendingEvent[] = [];
      for (const w of part.writes) {
        for (const e of w.events) {
          const channel = channelOf(e.eventType);
          if (!channel) throw new Error(`event type ${e.eventType} is not in the event catalog`);
          accounts.push(part.accountId);
          channels.push(channel);
          types.push(e.eventType);
          payloads.push(JSON.stringify(e.payload));
          list.push({
            accountId: part.accountId,
            eventType: e.eventType,
            payload: e.payload,
            channel,
            ord: accounts.length,
            timestamp,
          });
        }
      }
      pendingOf.push(list);
    }
    const attempts: WriteAttempt[] = parts.map(() => ({}));
    const used: unknown[][] = [];
    const reads: Prisma.Sql[] = [];
    const values: Prisma.Sql[] = [];
    const hookCtes: Prisma.Sql[] = [];
    const forced: Prisma.Sql[] = [];
    let off = 0;
    parts.forEach((part, k) => {
      const cached = this.#reads.get(part.accountId) ?? this.#hooks.map(() => null);
      const checks: Prisma.Sql[] = [];
      const usedK: unknown[] = [];
      this.#hooks.forEach((h, i) => {
        if (h.read) {
          const col = Prisma.raw(`r${i}_${k}`);
          reads.push(Prisma.sql`(${h.read(part.accountId)})::text AS ${col}`);
          checks.push(Prisma.sql`(reads.${col})::jsonb IS NOT DISTINCT FROM (${cached[i] ?? null})::jsonb`);
        }
        const value = cached[i] === null || cached[i] === undefined ? null : JSON.parse(cached[i]!);
        usedK[i] = value;
        if (!h.statement) return;
        const name = (j: number) => `hook${i}_${k}_${j}`;
        h.statement(pendingOf[k]!, value, name, attempts[k]!).forEach((body, j) => {
          hookCtes.push(Prisma.sql`, ${Prisma.raw(name(j))} AS (${body})`);
          forced.push(Prisma.sql`, (SELECT count(*) FROM ${Prisma.raw(name(j))})`);
        });
      });
      used.push(usedK);
      const ok = checks.length > 0 ? Prisma.sql`(SELECT ${Prisma.join(checks, ' AND ')} FROM reads)` : Prisma.sql`true`;
      const n = pendingOf[k]!.length;
      values.push(Prisma.sql`(${part.accountId}::text, ${n}::bigint, ${off}::bigint, ${ok})`);
      off += n;
    });
    const q = Prisma.sql`
      WITH reads AS (SELECT ${reads.length > 0 ? Prisma.join(reads, ', ') : Prisma.sql`1 AS none`}),
      accts AS (SELECT * FROM (VALUES ${Prisma.join(values, ', ')}) AS v(account_id, n, off, ok)),
      s AS (
        INSERT INTO event_account_seqs (account_id, last_seq)
        SELECT account_id, n FROM accts WHERE ok ORDER BY account_id COLLATE "C"
        ON CONFLICT (account_id) DO UPDATE SET last_seq = event_account_seqs.last_seq + EXCLUDED.last_seq
        RETURNING account_id, last_seq
      ),
      locked AS (
        SELECT jsonb_object_agg(s.account_id, s.last_seq - a.n - a.off) AS base FROM s JOIN accts a USING (account_id)
      ),
      ins AS (
        INSERT INTO events (account_id, channel, event_type, payload, created_at, seq)
        SELECT e.account_id, e.channel, e.event_type, e.payload, ${at}::timestamptz,
               (locked.base ->> e.account_id)::bigint + e.ord
          FROM locked, ROWS FROM (unnest(${arrayParam(accounts)}::text[]), unnest(${arrayParam(channels)}::text[]), unnest(${arrayParam(types)}::text[]),
                                  json_array_elements(${jsonArrayParam(payloads)}::json))
                  WITH ORDINALITY AS e(account_id, channel, event_type, payload, ord)
         WHERE (locked.base ->> e.account_id) IS NOT NULL
        RETURNING id, seq, seq - (SELECT (base ->> events.account_id)::bigint FROM locked) AS ord
      )
      ${hookCtes.length > 0 ? Prisma.join(hookCtes, '') : Prisma.empty}
      SELECT reads.*,
             (SELECT json_agg(json_build_object('id', id::text, 'seq', seq::text, 'ord', ord) ORDER BY ord)::text
                FROM ins) AS evs
             ${forced.length > 0 ? Prisma.join(forced, '') : Prisma.empty}
        FROM reads`;
    let row: Record<string, unknown> | undefined;
    try {
      [row] = await runner(q.text, q.values);
      if (!row) throw new Error('append statement returned no row');
    } catch (err) {
      for (const attempt of attempts) this.#abandoned(attempt);
      throw err;
    }
    const written: ({ id: string; seq: string } | undefined)[] = accounts.map(() => undefined);
    for (const e of JSON.parse((row.evs as string | null) ?? '[]') as { id: string; seq: string; ord: number }[]) {
      written[e.ord - 1] = e;
    }
    const stored = new Map<string, StoredEvent[]>();
    const stale: string[] = [];
    const committed: number[] = [];
    let broken = false;
    parts.forEach((part, k) => {
      this.#remember(
        part.accountId,
        this.#hooks.map((h, i) => (h.read ? ((row[`r${i}_${k}`] as string | null) ?? null) : null)),
      );
      const list = pendingOf[k]!;
      const got = list.map((e) => written[e.ord - 1]);
      if (got.every((g) => g === undefined)) {
        stale.push(part.accountId);
        return;
      }
      // The invariant the ordered bus and replay rely on (ids increase with seq within an account), and all or none.
      for (let i = 0; i < got.length; i++) {
        if (!got[i] || (i > 0 && BigInt(got[i]!.id) <= BigInt(got[i - 1]!.id))) broken = true;
      }
      if (broken) return;
      committed.push(k);
      stored.set(
        part.accountId,
        list.map((e, i) => ({
          id: got[i]!.id,
          seq: got[i]!.seq,
          accountId: part.accountId,
          channel: e.channel,
          eventType: e.eventType,
          payload: e.payload,
          timestamp,
        })),
      );
    });
    if (broken) {
      for (const attempt of attempts) this.#abandoned(attempt);
      throw new Error('event ids must increase with seq');
    }
    const published: StoredEvent[] = [];
    parts.forEach((part, k) => {
      const events = stored.get(part.accountId);
      if (!events) {
        this.#abandoned(attempts[k]!);
        return;
      }
      this.#committed(events, used[k], attempts[k]);
      published.push(...events);
    });
    if (committed.length > 1) published.sort((x, y) => (BigInt(x.id) < BigInt(y.id) ? -1 : 1));
    if (published.length > 0) {
      const sent = this.#publish(published);
      if (sent) await sent;
    }
    return { stored, stale };
  }

  /** The statement built with `attempt` did not commit: each hook gives back what it set aside (never throws). */
  #abandoned(attempt: WriteAttempt): void {
    for (const hook of this.#hooks) {
      try {
        hook.abandoned?.(attempt);
      } catch {
        // Giving back never fails a write.
      }
    }
  }

  #remember(accountId: string, reads: (string | null)[]): void {
    this.#reads.delete(accountId);
    this.#reads.set(accountId, reads);
    if (this.#reads.size > HOOK_READ_CACHE) this.#reads.delete(this.#reads.keys().next().value!);
  }

  /** {@link write} as an interactive transaction (PGlite, or hooks without a statement form). */
  async #writeInTransaction(w: AtomicWrite): Promise<StoredEvent[] | null> {
    const guard = statementGuard([w]);
    try {
      return await this.transaction(async (tx, emit) => {
        const [g] = await tx.$queryRaw<{ ok: boolean }[]>`SELECT (${guard}) AS ok`;
        if (!g?.ok) throw new GuardFailed();
        for (const change of w.changes) {
          await tx.$executeRaw`WITH write_ok AS (SELECT true AS ok) ${change}`;
        }
        const out: StoredEvent[] = [];
        for (const e of w.events) out.push(await emit(w.accountId, e.eventType, e.payload));
        return out;
      });
    } catch (err) {
      if (err instanceof GuardFailed) return null;
      throw err;
    }
  }

  /**
   * Ingest with group commit: records one event and resolves once it has committed (so a 2xx is only ever sent for
   * a durable event). It is an append (a {@link write} of events only): while {@link APPENDS_IN_FLIGHT} append
   * statements run, further appends of every account wait and are then written together by one statement, up to
   * {@link INGEST_BATCH_MAX} events of {@link APPEND_ACCOUNTS_MAX} accounts, on PostgreSQL and PGlite alike, so
   * concurrent ingests share a commit instead of queueing on a row lock, or paying a commit each, one by one. A
   * batch the database refused is retried write by write, so a bad ingest fails alone.
   * @returns the stored event. @throws what the write throws (database errors).
   */
  ingest(item: NewEvent): Promise<StoredEvent> {
    return this.#write(
      { accountId: item.accountId, changes: [], events: [{ eventType: item.eventType, payload: item.payload }] },
      (events) => events![0]!,
    );
  }

  /**
   * Inserts events of ONE account in one statement that first bumps the account's `event_account_seqs` row (the
   * per-account order lock, held to COMMIT), then runs the hooks for each event in order.
   * @returns the stored events in `items` order (increasing id and seq).
   * @throws Error for an event type outside the catalog (a programming error: inputs are validated before).
   */
  private async record(tx: Tx, items: NewEvent[], batches: RecordedBatch[]): Promise<StoredEvent[]> {
    const accountId = items[0]!.accountId;
    const channels: string[] = [];
    const types: string[] = [];
    const payloads: string[] = [];
    for (const item of items) {
      const channel = channelOf(item.eventType);
      if (!channel) throw new Error(`event type ${item.eventType} is not in the event catalog`);
      if (item.accountId !== accountId) throw new Error('record() takes the events of one account');
      channels.push(channel);
      types.push(item.eventType);
      payloads.push(JSON.stringify(item.payload));
    }
    const at = this.clock.now();
    const n = items.length;
    // The CTE runs first (the insert reads its row), so ids are drawn after the row lock is held; rows are inserted
    // in ordinality order, so ids increase with seq.
    const reads = this.#hooks.map((h, i) =>
      h.read ? Prisma.sql`, (${h.read(accountId)}) AS ${Prisma.raw(`r${i}`)}` : Prisma.empty,
    );
    const rows = await tx.$queryRaw<({ id: bigint; seq: bigint } & Record<string, unknown>)[]>`
      WITH s AS (
        INSERT INTO event_account_seqs (account_id, last_seq) VALUES (${accountId}, ${n}::bigint)
        ON CONFLICT (account_id) DO UPDATE SET last_seq = event_account_seqs.last_seq + EXCLUDED.last_seq
        RETURNING last_seq
      ), ins AS (
      INSERT INTO events (account_id, channel, event_type, payload, created_at, seq)
      SELECT ${accountId}, i.channel, i.event_type, i.payload::json, ${at}::timestamptz, s.last_seq - ${n}::bigint + i.ord
        FROM s, unnest(${channels}::text[], ${types}::text[], ${payloads}::text[]) WITH ORDINALITY AS i(channel, event_type, payload, ord)
      RETURNING id, seq)
      SELECT ins.id, ins.seq${reads.length > 0 ? Prisma.join(reads, '') : Prisma.empty} FROM ins`;
    rows.sort((a, b) => (a.seq < b.seq ? -1 : 1));
    for (let i = 1; i < rows.length; i++) {
      // A guard on the invariant the ordered bus and replay rely on (rolls the transaction back if ever broken).
      if (rows[i]!.id <= rows[i - 1]!.id) throw new Error('event ids must increase with seq within an account');
    }
    const timestamp = at.toISOString();
    const events = rows.map((row, i) => ({
      id: row.id.toString(),
      seq: row.seq.toString(),
      accountId,
      channel: channels[i] as Channel,
      eventType: types[i]!,
      payload: JSON.parse(payloads[i]!) as Record<string, unknown>,
      timestamp,
    }));
    const values = this.#hooks.map((hook, i) => {
      const value = hook.read ? rows[0]?.[`r${i}`] : undefined;
      return typeof value === 'string' ? JSON.parse(value) : value;
    });
    for (const [i, hook] of this.#hooks.entries()) await hook.run?.(tx, events, values[i]);
    batches.push({ events, reads: values });
    return events;
  }
}
