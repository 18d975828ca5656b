import { readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Name of the lock file in DATA_DIR while a process has the embedded database (PGlite) open. */
export const LOCK_FILE = 'switchboard.lock';

/** Exit code of `npm start` / the CLI when DATA_DIR is held by another live process (docs/operations.md). */
export const EXIT_DATA_DIR_LOCKED = 3;

/** How long a holder that is dying (SIGKILL pending, or a zombie not yet reaped) is waited for, in ms. */
export const DYING_HOLDER_WAIT_MS = 5_000;

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
 * to DYING_HOLDER_WAIT_MS. A PID check answers at once, where mtime-based lock libraries (proper-lockfile) make a
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
      return () => {
        if (released) return;
        released = true;
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
    // Another host's pid cannot be checked from here: a shared data directory across hosts is refused as in use.
    if (holder && (holder.hostname !== mine.hostname || (await holderLives(holder, mine)))) {
      throw new DataDirLockedError(dataDir, holder);
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
  };
}
