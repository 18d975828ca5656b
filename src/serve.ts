import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { countAccounts, createAccount } from './domain/accounts/account.service.js';
import { DataDirLockedError, EXIT_DATA_DIR_LOCKED } from './infra/data-dir-lock.js';
import { StartupError } from './infra/startup.js';

/**
 * Run by src/main.ts (the entry point of `npm start`): reads the configuration, builds the app, listens, and shuts
 * down on SIGTERM/SIGINT.
 */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Switchboard not started: invalid configuration: ${err.problems.join('; ')}\n`);
      process.exit(1);
    }
    throw err;
  }
  const app = await buildApp(config);
  if (config.BOOTSTRAP_ACCOUNT && (await countAccounts(app.ctx.db)) === 0) {
    const { accountId, apiKey } = await createAccount(app.ctx.db, { name: 'default' });
    // Printed once, on stdout and never through the logger, so a new user can follow the README's quickstart.
    process.stdout.write(
      `\nFirst start: created account ${accountId}. Its API key is shown only now:\n\n  ${apiKey}\n\n` +
        `  export SWITCHBOARD_API_KEY=${apiKey}\n\n`,
    );
  }
  const address = await app.listen();
  app.ctx.log.info({ address, database: app.ctx.database.kind }, 'Switchboard listening');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.ctx.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      app.ctx.log.error('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000);
    timer.unref();
    await app.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  if (err instanceof StartupError) {
    process.stderr.write(`Switchboard not started: ${err.message}\n`);
    process.exit(1);
  }
  if (err instanceof DataDirLockedError) {
    process.stderr.write(`Switchboard not started: ${err.message}\n`);
    process.exit(EXIT_DATA_DIR_LOCKED);
  }
  process.stderr.write(`Switchboard failed to start: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
