import { closeSync, fstatSync, openSync, readFileSync, statSync, unlinkSync, utimes, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Name of the lock file in DATA_DIR while a process has the embedded database (PGlite) open. */
export const LOCK_FILE = 'switchboard.lock';

/** Exit code of `npm start` / the CLI when DATA_DIR is held by another live process (docs/operations.md). */
export const EXIT_DATA_DIR_LOCKED = 3;

/** How long a holder that is dying (SIGKILL pending, or a zombie not yet reaped) is waited for, in ms. */
export const DYING_HOLDER_WAIT_MS = 5_000;

/**
 * How often the holder refreshes the lock file's mtime, in ms: the sign of life a process on another host (another
 * container on a shared volume) reads, since it cannot check the holder's PID.
 */
export const DATA_DIR_LOCK_HEARTBEAT_MS = 5_000;

/**
 * Heartbeats a lock from another host may miss before it is stale: 5, so 25 s at the default interval. Generous,
 * because a live holder whose event loop stalls past it would lose its lock (a long synchronous step of the
 * embedded database); a restart in a recreated container waits at most this long after the old one died.
 */
export const MISSED_HEARTBEATS = 5;

/** What the lock file holds (JSON). */
export interface LockInfo {
  pid: number;
  hostname: string;
  /** ISO 8601 time the holder took the lock. */
  since: string;
  /**
   * The holder's start time: field 22 of /proc/<pid>/stat (clock ticks since boot). With `bootId` it names one
   * process across PID reuse. Absent where /proc is not (macOS) and in lock files written before it was kept.
   */
  startTime?: string;
  /** /proc/sys/kernel/random/boot_id of the holder's boot: a start time is only comparable within one boot. */
  bootId?: string;
  /**
   * The holder refreshes the file's mtime every this many ms (DATA_DIR_LOCK_HEARTBEAT_MS). Absent in lock files
   * written before the heartbeat: such a lock from another host is never taken as stale.
   */
  heartbeatMs?: number;
}

/**
 * Raised when another live process holds DATA_DIR: PGlite admits one process per data directory, and two writers
 * would corrupt it. `holder` is that process.
 */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockInfo,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by process ${holder.pid}${holder.hostname ? ` on ${holder.hostname}` : ''} ` +
        `(since ${holder.since}): the embedded database admits one process at a time. Stop that process, or give ` +
        'this one its own DATA_DIR, or use DATABASE_URL (PostgreSQL) to run several instances.',
    );
    this.name = 'DataDirLockedError';
  }
}

/** Data directories this process holds, so a second open in the same process is refused, not taken as stale. */
const heldHere = new Set<string>();

/** What /proc says about a process: state letter (R, S, D, Z, X...), start time, and whether SIGKILL is pending. */
interface ProcState {
  state: string;
  startTime: string;
  killPending: boolean;
}

/**
 * Reads /proc/<pid>/stat (proc(5)): the command name (field 2) may hold spaces and parentheses, so fields are
 * counted after its last ')'. Undefined where /proc is absent or the process is gone.
 */
function procState(pid: number | 'self'): ProcState | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); field 22 (starttime) is fields[19].
  const state = fields[0] ?? '';
  const startTime = fields[19] ?? '';
  let killPending = false;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    // SigPnd (thread) and ShdPnd (process) are hex masks; SIGKILL is signal 9, bit 8.
    for (const m of status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)) {
      if ((BigInt(`0x${m[1]}`) & 0x100n) !== 0n) killPending = true;
    }
  } catch {}
  return { state, startTime, killPending };
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Whether process `pid` exists on this host (EPERM: it exists but belongs to another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the process that wrote `holder` still runs, on the host `mine` describes. A lock naming this very
 * process's PID (a container's process is PID 1 on every start) was written by an earlier life of it; a PID whose
 * start time or boot differs from the lock's was reused by another process; a zombie has released its files. A
 * holder that is being killed (SIGKILL pending, or a zombie not yet reaped) is waited for up to
 * DYING_HOLDER_WAIT_MS, since it still holds PGlite's files until the kernel tears it down.
 */
async function holderLives(holder: LockInfo, mine: LockInfo): Promise<boolean> {
  if (holder.pid === process.pid) return false;
  if (holder.bootId && mine.bootId && holder.bootId !== mine.bootId) return false;
  const deadline = Date.now() + DYING_HOLDER_WAIT_MS;
  for (;;) {
    if (!alive(holder.pid)) return false;
    const proc = procState(holder.pid);
    if (!proc) return alive(holder.pid); // no /proc (macOS): the PID check is all there is
    if (holder.startTime && proc.startTime !== holder.startTime) return false;
    const dying = proc.state === 'Z' || proc.state === 'X' || proc.killPending;
    if (!dying) return true;
    if (Date.now() >= deadline) return !(proc.state === 'Z' || proc.state === 'X');
    await sleep(50);
  }
}

/** The lock file's mtime and text, read through one open file (NFS close-to-open: the open revalidates both). */
function snapshot(file: string): { mtimeMs: number; text: string } | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const { mtimeMs } = fstatSync(fd);
    return { mtimeMs, text: readFileSync(fd, 'utf8') };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Whether the holder of a lock written on another host (another hostname: another container, another machine) is
 * alive, judged by its heartbeat since its PID cannot be checked from here: the file is watched until
 * MISSED_HEARTBEATS intervals have passed without its mtime or content changing. On the same boot (same kernel,
 * hence the same clock: containers on one host) the wait counts from the file's last mtime, so a lock left long ago
 * is stale at once; across boots, clocks may differ, so it counts from now.
 * @returns true when the file changed (alive, or a new holder) within the window; false when it did not, or vanished.
 */
async function heartbeatGoesOn(file: string, holder: LockInfo, mine: LockInfo): Promise<boolean> {
  const beat = Math.min(60_000, Math.max(100, holder.heartbeatMs as number)); // whatever the file claims
  const first = snapshot(file);
  if (!first) return false; // gone meanwhile: the caller tries again
  const sameClock = Boolean(holder.bootId && holder.bootId === mine.bootId);
  const deadline = (sameClock ? Math.min(first.mtimeMs, Date.now()) : Date.now()) + MISSED_HEARTBEATS * beat;
  const poll = Math.max(20, Math.min(250, beat / 4));
  while (Date.now() < deadline) {
    await sleep(Math.min(poll, Math.max(1, deadline - Date.now())));
    const now = snapshot(file);
    if (!now) return false; // released meanwhile: the caller tries again
    if (now.mtimeMs !== first.mtimeMs || now.text !== first.text) return true;
  }
  return false;
}

function youngerThan(file: string, ms: number): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs < ms;
  } catch {
    return false;
  }
}

function readLock(file: string): LockInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockInfo>;
    if (typeof info.pid !== 'number') return undefined;
    return {
      pid: info.pid,
      hostname: String(info.hostname ?? ''),
      since: String(info.since ?? ''),
      ...(typeof info.startTime === 'string' ? { startTime: info.startTime } : {}),
      ...(typeof info.bootId === 'string' ? { bootId: info.bootId } : {}),
      ...(typeof info.heartbeatMs === 'number' && info.heartbeatMs > 0 ? { heartbeatMs: info.heartbeatMs } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * Takes `dataDir/switchboard.lock` (created exclusively, holding `{pid, hostname, since, startTime, bootId}`), or
 * fails. A lock whose writer no longer runs on this host is stale and is taken over, so it never blocks a restart:
 * its PID is gone; or it is this process's own PID while this process does not hold it (a container restarted after
 * `docker kill` or an OOM kill: PID 1 again); or the PID now belongs to a process with another start time
 * (/proc/<pid>/stat field 22) or from another boot; or the holder is a zombie. A holder being killed is waited for up
 * to DYING_HOLDER_WAIT_MS. A lock written on another host (another hostname: a container recreated after
 * `docker kill`, another pod on the volume) is stale once its holder's heartbeat (the file's mtime, refreshed every
 * DATA_DIR_LOCK_HEARTBEAT_MS) has stopped for MISSED_HEARTBEATS intervals; until then it is held. A PID check answers at once, where mtime-based lock libraries (proper-lockfile) make a
 * restart after `kill -9` wait out their staleness period.
 * @returns a release function (idempotent; removes the file only while it is still ours).
 * @throws DataDirLockedError when a live process (this one included, for a second open) holds it; its message
 *   names the holder's PID, host and start.
 */
export async function lockDataDir(dataDir: string): Promise<() => void> {
  const file = path.join(dataDir, LOCK_FILE);
  if (heldHere.has(file)) throw new DataDirLockedError(dataDir, readLock(file) ?? lockInfoNow());
  const mine = lockInfoNow();
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, `${JSON.stringify(mine)}\n`, { flag: 'wx', mode: 0o644 });
      heldHere.add(file);
      let released = false;
      // The sign of life for processes on other hosts (heartbeatGoesOn); unref'd, so it never keeps a process up.
      const heartbeat = setInterval(() => {
        const now = new Date();
        utimes(file, now, now, () => {});
      }, DATA_DIR_LOCK_HEARTBEAT_MS).unref();
      return () => {
        if (released) return;
        released = true;
        clearInterval(heartbeat);
        heldHere.delete(file);
        const current = readLock(file);
        if (current?.pid === mine.pid && current.since === mine.since) {
          try {
            unlinkSync(file);
          } catch {}
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readLock(file);
    if (!holder && youngerThan(file, 5_000)) {
      // Unreadable but just created: its owner is between creating and writing it.
      throw new DataDirLockedError(dataDir, { pid: 0, hostname: '', since: 'a moment ago' });
    }
    if (holder) {
      // Another host's PID cannot be checked from here: its heartbeat decides (a lock without one stays held).
      const lives =
        holder.hostname !== mine.hostname
          ? !holder.heartbeatMs || (await heartbeatGoesOn(file, holder, mine))
          : await holderLives(holder, mine);
      if (lives) throw new DataDirLockedError(dataDir, readLock(file) ?? holder);
    }
    // Stale (its process is gone) or unreadable (a crash mid-write): remove it and try again.
    try {
      unlinkSync(file);
    } catch {}
  }
  throw new Error(`could not take ${file}; another process keeps recreating it`);
}

function lockInfoNow(): LockInfo {
  const self = procState('self');
  const boot = bootId();
  return {
    pid: process.pid,
    hostname: hostname(),
    since: new Date().toISOString(),
    ...(self ? { startTime: self.startTime } : {}),
    ...(boot ? { bootId: boot } : {}),
    heartbeatMs: DATA_DIR_LOCK_HEARTBEAT_MS,
  };
}
