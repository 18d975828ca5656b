import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import { createAccount, issueKey, parseScopes, SCOPES } from './domain/accounts/account.service.js';
import { openDatabase } from './infra/db.js';
import { migrate } from './infra/migrate.js';

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  accounts:create --name <name> [--scopes a,b]   create an account and an API key; prints {"accountId","apiKey"}
  keys:create --account <id> --scopes a,b [--name <name>]   issue another API key; prints {"keyId","apiKey"}
  db:migrate                                     apply pending migrations and exit

Scopes: ${SCOPES.join(', ')} (default: all).
The database is chosen as by the service: DATABASE_URL, else PGlite in DATA_DIR (default ./data).
Stop the service first when it runs on PGlite: the embedded database admits one process at a time.`;

/** `npm run cli -- …`: account, key and migration administration. Prints JSON on stdout; errors on stderr, exit 1. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      scopes: { type: 'string' },
      account: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (!command || values.help) {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 1;
  }
  const config = loadConfig();
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  try {
    await migrate(db);
    switch (command) {
      case 'accounts:create': {
        if (!values.name) throw new Error('--name is required');
        const scopes = values.scopes ? parseScopes(values.scopes) : undefined;
        const { accountId, apiKey } = await createAccount(db.prisma, { name: values.name, scopes });
        process.stdout.write(`${JSON.stringify({ accountId, apiKey })}\n`);
        return 0;
      }
      case 'keys:create': {
        if (!values.account) throw new Error('--account is required');
        if (!values.scopes) throw new Error('--scopes is required');
        const account = await db.prisma.account.findUnique({ where: { id: values.account } });
        if (!account) throw new Error(`account ${values.account} not found`);
        const key = await issueKey(db.prisma, account.id, parseScopes(values.scopes), values.name ?? 'key');
        process.stdout.write(`${JSON.stringify(key)}\n`);
        return 0;
      }
      case 'db:migrate':
        process.stdout.write(`${JSON.stringify({ migrated: true })}\n`);
        return 0;
      default:
        throw new Error(`unknown command "${command}"\n\n${USAGE}`);
    }
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : `error: ${(err as Error).message}`}\n`);
    process.exit(1);
  },
);
