import type { Logger } from 'pino';
import type { Database } from './db.js';

/**
 * A start-up failure the operator can fix by changing one setting: `npm start` prints it as one line,
 * `Switchboard not started: <VARIABLE>: <what is wrong>`, and exits 1 (no stack trace).
 */
export class StartupError extends Error {
  constructor(
    /** The environment variable at fault (docs/configuration.md), e.g. `DATABASE_URL`, `PORT`. */
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'StartupError';
  }
}

/** `host:port/path` of a URL without its user and password (they are never printed), or `(unparsable URL)`. */
export function whereUrlPoints(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}

/** The error code of a connection failure (`ECONNREFUSED`, a PostgreSQL SQLSTATE…), looking into AggregateErrors. */
function codeOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; errors?: unknown[] } | undefined;
  if (typeof e?.code === 'string' && e.code !== '') return e.code;
  if (Array.isArray(e?.errors)) for (const inner of e.errors) if (codeOf(inner)) return codeOf(inner);
  return undefined;
}

/** Failures of reaching the database that a later attempt may not have (it is starting, DNS not yet there…). */
const TRANSIENT = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  '57P03', // cannot_connect_now: the server is starting up
  '53300', // too_many_connections
]);

/**
 * At start with `DATABASE_URL`, waits until PostgreSQL answers `SELECT 1`, retrying connection failures with a
 * doubling pause (0.25 s up to 5 s) for at most `timeoutMs` (DATABASE_CONNECT_TIMEOUT_SECONDS), so instances started
 * together with their database (compose, Kubernetes) do not crash-loop. Failures a retry cannot fix (bad password,
 * unknown database) fail at once.
 * @throws StartupError naming DATABASE_URL, where it points (no credentials) and the cause, in one line.
 */
export async function waitForDatabase(
  database: Database,
  url: string,
  log: Logger,
  timeoutMs: number,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<void> {
  const started = Date.now();
  const where = whereUrlPoints(url);
  let pause = 250;
  for (let attempt = 1; ; attempt++) {
    try {
      await database.statement({ text: 'SELECT 1', values: [] });
      if (attempt > 1) log.info({ attempt }, `database at ${where} reachable`);
      return;
    } catch (err) {
      const code = codeOf(err);
      const message = (err as Error).message || String(err);
      const elapsed = Date.now() - started;
      if (!code || !TRANSIENT.has(code)) {
        throw new StartupError('DATABASE_URL', `the database at ${where} refused the connection: ${message}`);
      }
      if (elapsed + pause > timeoutMs) {
        throw new StartupError(
          'DATABASE_URL',
          `cannot reach the database at ${where} (${code}); tried ${attempt} times in ${Math.round(elapsed / 1000)} s ` +
            '(DATABASE_CONNECT_TIMEOUT_SECONDS)',
        );
      }
      log.warn({ attempt, code, retryInMs: pause }, `database at ${where} not reachable yet (${code}); retrying`);
      await sleep(pause);
      pause = Math.min(pause * 2, 5_000);
    }
  }
}

/**
 * Turns a failed `listen` into a one-line {@link StartupError} naming the variable of the port (`PORT`,
 * `SMTP_PORT`) or of the interface (`HOST`); any other error is returned unchanged.
 */
export function listenError(err: unknown, variable: string, host: string, port: number): unknown {
  const code = codeOf(err);
  if (code === 'EADDRINUSE') {
    return new StartupError(
      variable,
      `port ${port} on ${host} is already in use (EADDRINUSE): stop the process using it or set another ${variable}`,
    );
  }
  if (code === 'EACCES') {
    return new StartupError(variable, `port ${port} on ${host} needs privileges this process lacks (EACCES)`);
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new StartupError('HOST', `${host} is not an address of this machine (${code})`);
  }
  return err;
}
