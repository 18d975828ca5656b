import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './db.js';

/**
 * The nearest `prisma/migrations` folder above `from` (a file URL). The same code runs from src/infra/migrate.ts
 * (tsx, vitest) and from the bundled dist/*.js (`npm start`), which sit at different depths below the package root.
 * @throws Error when no ancestor holds prisma/migrations (a broken install).
 */
export function findMigrationsDir(from: string | URL = import.meta.url): string {
  let dir = path.dirname(fileURLToPath(from));
  for (;;) {
    const candidate = path.join(dir, 'prisma', 'migrations');
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no prisma/migrations folder above ${fileURLToPath(from)}`);
    dir = parent;
  }
}

/** Folder of Prisma-layout migrations: `<timestamp>_<name>/migration.sql`. */
export const MIGRATIONS_DIR = findMigrationsDir();

/** Arbitrary, fixed key of the PostgreSQL advisory lock that serialises migrations across instances. */
const MIGRATION_LOCK_KEY = 7_212_004_221;

/** Result of {@link migrate}: names applied now and names already applied before. */
export interface MigrationReport {
  applied: string[];
  alreadyApplied: string[];
}

/** The migrations on disk, in name order, with their SHA-256 checksums. */
export async function listMigrations(dir = MIGRATIONS_DIR): Promise<{ name: string; sql: string; checksum: string }[]> {
  const entries = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    entries.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/**
 * Applies every migration not yet recorded in `_prisma_migrations` (Prisma's own bookkeeping table and columns),
 * each in its own transaction, under a PostgreSQL advisory lock so concurrent instances do not race.
 * A migration that fails is rolled back whole and the error is thrown; nothing after it runs.
 * @throws Error when an applied migration's file changed (checksum mismatch) or a migration fails.
 */
export async function migrate(db: Database, dir = MIGRATIONS_DIR): Promise<MigrationReport> {
  const migrations = await listMigrations(dir);
  const conn = await db.raw();
  try {
    await conn.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await conn.exec(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
        "id" VARCHAR(36) PRIMARY KEY NOT NULL,
        "checksum" VARCHAR(64) NOT NULL,
        "finished_at" TIMESTAMPTZ,
        "migration_name" VARCHAR(255) NOT NULL,
        "logs" TEXT,
        "rolled_back_at" TIMESTAMPTZ,
        "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
        "applied_steps_count" INTEGER NOT NULL DEFAULT 0
      )`);
      const rows = await conn.query<{ migration_name: string; checksum: string }>(
        'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
      );
      const done = new Map(rows.map((r) => [r.migration_name, r.checksum]));
      const report: MigrationReport = { applied: [], alreadyApplied: [] };
      for (const m of migrations) {
        const previous = done.get(m.name);
        if (previous !== undefined) {
          if (previous !== m.checksum) {
            throw new Error(`migration ${m.name} was changed after it was applied (checksum differs)`);
          }
          report.alreadyApplied.push(m.name);
          continue;
        }
        await conn.exec('BEGIN');
        try {
          await conn.exec(m.sql);
          await conn.query(
            `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
             VALUES ($1, $2, $3, now(), now(), 1)`,
            [randomUUID(), m.checksum, m.name],
          );
          await conn.exec('COMMIT');
        } catch (err) {
          await conn.exec('ROLLBACK');
          throw new Error(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
        }
        report.applied.push(m.name);
      }
      return report;
    } finally {
      await conn.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await conn.release();
  }
}

/** Names of migrations on disk that the database has not applied; empty when up to date (for /readyz). */
export async function pendingMigrations(db: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await listMigrations(dir);
  const rows = await db.prisma.$queryRawUnsafe<{ migration_name: string }[]>(
    'SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
  );
  const done = new Set(rows.map((r) => r.migration_name));
  return migrations.filter((m) => !done.has(m.name)).map((m) => m.name);
}
