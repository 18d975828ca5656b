import { writeFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import type { Database } from './infra/db.js';
import { migrate } from './infra/migrate.js';

/**
 * `node dist/build-template.js <out.tgz>` (run by `npm run build`): initialises a PGlite database in memory, applies
 * every migration, and writes its data directory as a gzipped tar to `out`. The service unpacks it on a first
 * start (src/infra/db.ts PGLITE_TEMPLATE) instead of running initdb. Exit 1 with the reason on failure.
 */
async function main(out: string | undefined): Promise<void> {
  if (!out) throw new Error('usage: build-template <out.tgz>');
  const lite = await PGlite.create();
  const raw = {
    async exec(sql: string) {
      await lite.exec(sql);
    },
    async query<T>(sql: string, params?: unknown[]) {
      return (await lite.query(sql, params)).rows as T[];
    },
    async release() {},
  };
  // migrate() only needs raw SQL; the rest of Database is never touched here.
  const report = await migrate({ kind: 'pglite', raw: async () => raw } as unknown as Database);
  const dump = await lite.dumpDataDir('gzip');
  writeFileSync(out, Buffer.from(await dump.arrayBuffer()));
  await lite.close();
  process.stdout.write(`PGlite template: ${report.applied.length} migrations, ${dump.size} bytes -> ${out}\n`);
}

main(process.argv[2]).catch((err) => {
  process.stderr.write(`build-template failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
