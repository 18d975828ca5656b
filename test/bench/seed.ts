/**
 * Seeding step of `npm run bench`, run before the service starts (PGlite admits one process): applies the
 * migrations and creates accounts through the domain's `createAccount` (as `npm run cli -- accounts:create` does).
 * Input: argv[2] JSON `{ names: string[] }`; the database comes from DATABASE_URL or DATA_DIR like the service.
 * Prints `{ "result": { "<name>": { accountId, apiKey } } }`.
 */
import { loadConfig } from '../../src/config.js';
import { createAccount } from '../../src/domain/accounts/account.service.js';
import { openDatabase } from '../../src/infra/db.js';
import { migrate } from '../../src/infra/migrate.js';
import { printResult } from './lib.js';

const { names } = JSON.parse(process.argv[2]!) as { names: string[] };
const config = loadConfig();
const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
await migrate(db);
const out: Record<string, { accountId: string; apiKey: string }> = {};
for (const name of names) {
  const { accountId, apiKey } = await createAccount(db.prisma, { name });
  out[name] = { accountId, apiKey };
}
await db.close();
printResult(out);
