import { readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

/** Name of the lock file in DATA_DIR while a process has the embedded database (PGlite) open. */
export const LOCK_FILE = 'switchboard.lock';

/** Exit code of `npm start` / the CLI when DATA_DIR is held by another live process (docs/operations.md). */
export const EXIT_DATA_DIR_LOCKED = 3;

/** What the lock file holds (JSON). */
export interface LockInfo {
  pid: number;
  hostname: string;
  /** ISO 8601 time the holder took the lock. */
  since: string;
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
      `DATA_DIR ${dataDir} is in use by process ${holder.pid} (since ${holder.since}): the embedded database ` +
        'admits one process at a time. Stop that process, or give this one its own DATA_DIR, or use ' +
        'DATABASE_URL (PostgreSQL) to run several instances.',
    );
    this.name = 'DataDirLockedError';
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
    return { pid: info.pid, hostname: String(info.hostname ?? ''), since: String(info.since ?? '') };
  } catch {
    return undefined;
  }
}

/**
 * Takes `dataDir/switchboard.lock` (created exclusively, holding `{pid, hostname, since}`), or fails at once.
 * A lock whose process no longer runs on this host (killed with SIGKILL, a crash, a reboot) is stale and is taken
 * over, so it never blocks a restart. A pid check answers at once, where mtime-based lock libraries
 * (proper-lockfile) make a restart after `kill -9` wait out their staleness period.
 * @returns a release function (idempotent; removes the file only while it is still ours).
 * @throws DataDirLockedError when a live process (this one included, for a second open) holds it.
 */
export function lockDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, LOCK_FILE);
  const mine: LockInfo = { pid: process.pid, hostname: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, `${JSON.stringify(mine)}\n`, { flag: 'wx', mode: 0o644 });
      let released = false;
      return () => {
        if (released) return;
        released = true;
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
    if (holder && (holder.hostname !== mine.hostname || alive(holder.pid))) {
      throw new DataDirLockedError(dataDir, holder);
    }
    // Stale (its process is gone) or unreadable (a crash mid-write): remove it and try again.
    try {
      unlinkSync(file);
    } catch {}
  }
  throw new Error(`could not take ${file}; another process keeps recreating it`);
}
