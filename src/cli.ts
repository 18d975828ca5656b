import { connect as tlsConnect } from 'node:tls';
import { parseArgs } from 'node:util';
import { Agent, fetch, type Response } from 'undici';
import { type Config, ConfigError, loadConfig } from './config.js';
import { parseScopes, SCOPES } from './domain/accounts/account.service.js';
import {
  adminAccountInput,
  adminCreateAccount,
  adminIssueKey,
  adminKeyInput,
  adminRevokeKey,
} from './domain/accounts/admin.service.js';
import { DomainError } from './domain/errors.js';
import { parseInput } from './domain/validation.js';
import { readAdminFile } from './infra/admin-file.js';
import { DataDirLockedError, EXIT_DATA_DIR_LOCKED } from './infra/data-dir-lock.js';
import { openDatabase } from './infra/db.js';
import { migrate } from './infra/migrate.js';

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  accounts:create --name <name> [--scopes a,b]             create an account and an API key; prints {"accountId","apiKey"}
  keys:create --account <id> --scopes a,b [--name <name>]  issue another API key; prints {"keyId","apiKey"}
  keys:revoke --key <keyId>                                revoke an API key; prints {"revoked":"<keyId>"}
  db:migrate                                               apply pending migrations and exit

Scopes: ${SCOPES.join(', ')} (default: all).

Where it acts (docs/operations.md "CLI"):
  1. SWITCHBOARD_URL and ADMIN_TOKEN set: through that service's /admin API.
  2. Else a service running on this DATA_DIR (it writes DATA_DIR/admin.json): through its /admin API.
  3. Else directly on the database (DATABASE_URL, or PGlite in DATA_DIR, locked while in use).
A printed key works on the next request; on any failure nothing is printed on stdout and the exit code is not 0
(1: refused or failed, 3: DATA_DIR held by a service the CLI cannot reach).`;

/** A failure with the exit code to end with. */
class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** One admin operation, done either over HTTP or directly on the database. */
type Operation =
  | { kind: 'createAccount'; body: { name: string; scopes?: string[] } }
  | { kind: 'createKey'; body: { accountId: string; scopes: string[]; name?: string } }
  | { kind: 'revokeKey'; keyId: string };

/** Whether process `pid` runs on this host. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Where to send admin operations: a running service's /admin API, or the database itself. */
function target(config: Config): Target | undefined {
  const url = process.env.SWITCHBOARD_URL;
  if (url) {
    if (!config.ADMIN_TOKEN)
      throw new CliError('SWITCHBOARD_URL is set but ADMIN_TOKEN is not: the /admin API needs it.');
    return { url, token: config.ADMIN_TOKEN, source: 'SWITCHBOARD_URL' };
  }
  if (config.DATA_DIR.startsWith('memory://')) return undefined;
  const file = readAdminFile(config.DATA_DIR);
  if (file && alive(file.pid))
    return {
      url: file.url,
      token: file.token,
      source: `${config.DATA_DIR}/admin.json`,
      ...(file.certSha256 ? { certSha256: file.certSha256 } : {}),
    };
  return undefined;
}

/** Where {@link overHttp} sends: the base URL, the admin token, where they came from, and a pinned certificate. */
interface Target {
  url: string;
  token: string;
  source: string;
  /** SHA-256 fingerprint (`AB:CD:…`) of the only certificate accepted (from DATA_DIR/admin.json); else the usual TLS checks. */
  certSha256?: string;
}

/**
 * An undici dispatcher whose TLS connections accept exactly the certificate whose SHA-256 fingerprint is
 * `certSha256` (the service's own, read from DATA_DIR/admin.json, a file only its user can read), and nothing else:
 * a loopback service with a self-signed certificate is reached, and a different listener on that port is refused.
 * The connection fails with `CERT_PIN_MISMATCH` otherwise.
 */
function pinnedDispatcher(certSha256: string): Agent {
  return new Agent({
    connect(opts, callback) {
      // The chain and names are not checked: the pin is the whole check (like SSH's known host key).
      const socket = tlsConnect({
        host: opts.hostname,
        port: Number(opts.port),
        rejectUnauthorized: false,
        ALPNProtocols: ['http/1.1'],
      });
      let settled = false;
      socket.once('secureConnect', () => {
        settled = true;
        if (socket.getPeerCertificate().fingerprint256 === certSha256) return callback(null, socket);
        socket.destroy();
        callback(
          Object.assign(new Error('the certificate is not the one in admin.json'), { code: 'CERT_PIN_MISMATCH' }),
          null,
        );
      });
      socket.once('error', (err) => {
        if (!settled) callback(err, null);
      });
    },
  });
}

/**
 * Sends `op` to a running service. @returns the JSON answer, or undefined when nothing listens there (a service
 * that just stopped) and `fallback` allows acting on the database instead.
 * @throws CliError with the service's error code and message on any other failure.
 */
async function overHttp(to: Target, op: Operation, fallback: boolean): Promise<unknown> {
  const request =
    op.kind === 'revokeKey'
      ? { method: 'DELETE', path: `/admin/keys/${encodeURIComponent(op.keyId)}`, body: undefined }
      : { method: 'POST', path: op.kind === 'createAccount' ? '/admin/accounts' : '/admin/keys', body: op.body };
  let res: Response;
  try {
    res = await fetch(new URL(request.path, to.url), {
      method: request.method,
      headers: {
        authorization: `Bearer ${to.token}`,
        ...(request.body ? { 'content-type': 'application/json' } : {}),
      },
      body: request.body ? JSON.stringify(request.body) : undefined,
      signal: AbortSignal.timeout(15_000),
      ...(to.certSha256 ? { dispatcher: pinnedDispatcher(to.certSha256) } : {}),
    });
  } catch (err) {
    const code = (err as { cause?: { code?: string } }).cause?.code;
    if (fallback && code === 'ECONNREFUSED') return undefined;
    throw new CliError(
      `could not reach the service at ${to.url} (from ${to.source}): ${code ?? (err as Error).message}`,
    );
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  if (!res.ok) {
    const error = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new CliError(
      `the service at ${to.url} answered ${res.status}${error ? ` ${error.code}: ${error.message}` : ''}`,
    );
  }
  return body ?? { revoked: op.kind === 'revokeKey' ? op.keyId : undefined };
}

/** Does `op` directly on the database (no service reachable). */
async function onDatabase(config: Config, op: Operation): Promise<unknown> {
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  try {
    await migrate(db);
    switch (op.kind) {
      case 'createAccount':
        return await adminCreateAccount(db.prisma, parseInput(adminAccountInput, op.body));
      case 'createKey':
        return await adminIssueKey(db.prisma, parseInput(adminKeyInput, op.body));
      case 'revokeKey':
        await adminRevokeKey({ db: db.prisma, auth: { invalidate() {} } }, op.keyId);
        return { revoked: op.keyId };
    }
  } finally {
    await db.close();
  }
}

/** `npm run cli -- …`: account, key and migration administration. Prints JSON on stdout; errors on stderr. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      scopes: { type: 'string' },
      account: { type: 'string' },
      key: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (!command || values.help) {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 1;
  }
  const config = loadConfig();
  let op: Operation;
  switch (command) {
    case 'accounts:create':
      if (!values.name) throw new CliError('--name is required');
      op = {
        kind: 'createAccount',
        body: { name: values.name, ...(values.scopes ? { scopes: parseScopes(values.scopes) } : {}) },
      };
      break;
    case 'keys:create':
      if (!values.account) throw new CliError('--account is required');
      if (!values.scopes) throw new CliError('--scopes is required');
      op = {
        kind: 'createKey',
        body: {
          accountId: values.account,
          scopes: parseScopes(values.scopes),
          ...(values.name ? { name: values.name } : {}),
        },
      };
      break;
    case 'keys:revoke':
      if (!values.key) throw new CliError('--key is required');
      op = { kind: 'revokeKey', keyId: values.key };
      break;
    case 'db:migrate': {
      const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
      try {
        const report = await migrate(db);
        process.stdout.write(`${JSON.stringify({ migrated: true, applied: report.applied })}\n`);
      } finally {
        await db.close();
      }
      return 0;
    }
    default:
      throw new CliError(`unknown command "${command}"\n\n${USAGE}`);
  }

  const to = target(config);
  let result = to ? await overHttp(to, op, !process.env.SWITCHBOARD_URL) : undefined;
  result ??= await onDatabase(config, op);
  const r = result as { accountId?: string; keyId?: string; apiKey?: string; revoked?: string };
  const printed =
    op.kind === 'createAccount'
      ? { accountId: r.accountId, apiKey: r.apiKey }
      : op.kind === 'createKey'
        ? { keyId: r.keyId, apiKey: r.apiKey }
        : { revoked: op.keyId };
  process.stdout.write(`${JSON.stringify(printed)}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    let message: string;
    let code = 1;
    if (err instanceof ConfigError) message = err.message;
    else if (err instanceof CliError) {
      message = `error: ${err.message}`;
      code = err.exitCode;
    } else if (err instanceof DataDirLockedError) {
      message =
        `error: ${err.message}\nThat service did not leave a reachable DATA_DIR/admin.json; set SWITCHBOARD_URL and ` +
        'ADMIN_TOKEN to act through its /admin API.';
      code = EXIT_DATA_DIR_LOCKED;
    } else if (err instanceof DomainError) message = `error: ${err.code}: ${err.message}`;
    else message = `error: ${(err as Error).message}`;
    process.stderr.write(`${message}\n`);
    process.exit(code);
  },
);
