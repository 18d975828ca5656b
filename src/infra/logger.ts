import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { type DestinationStream, type Logger, pino } from 'pino';

/**
 * The request a piece of async work belongs to, so log lines from domain code carry its id. The HTTP host
 * (src/http/server.ts) enters it for each request; the logger reads it.
 */
export const requestScope = new AsyncLocalStorage<{ reqId: string }>();

/** Marks a logger (and, through pino's prototype chain, its children) as already bound to a `reqId`. */
const BOUND = Symbol('switchboard.reqIdBound');

/**
 * Marks `logger` as carrying `reqId` in its own bindings (Fastify's per-request child logger), so the mixin does
 * not add the key a second time: every line has exactly one `reqId`.
 */
export function markRequestBound<T extends object>(logger: T): T {
  (logger as Record<symbol, boolean>)[BOUND] = true;
  return logger;
}

/** Log output format: `json` lines for collectors, `pretty` (pino-pretty, coloured) for a terminal. */
export type LogFormat = 'json' | 'pretty';

/**
 * The service's logger: pino at `level`, secrets redacted, and the id of the request the line belongs to (`reqId`,
 * once) on every line written while serving it, domain code's included. `destination` defaults to stdout;
 * `format: 'pretty'` writes readable lines through pino-pretty in this process (loaded only then).
 */
export function createLogger(level: string, destination?: DestinationStream, format: LogFormat = 'json'): Logger {
  let dest = destination;
  if (format === 'pretty') {
    const pretty = createRequire(import.meta.url)('pino-pretty') as (opts: object) => DestinationStream;
    dest = pretty({
      destination: destination ?? 1,
      colorize: destination === undefined,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
      singleLine: true,
      sync: true,
    });
  }
  return pino(
    {
      level,
      // Domain code logs through ctx.log; during a request its lines carry the request id too, unless the logger
      // is Fastify's request logger, whose bindings already hold it.
      mixin: (_obj, _level, logger) => {
        if ((logger as unknown as Record<symbol, boolean>)[BOUND]) return {};
        const store = requestScope.getStore();
        return store ? { reqId: store.reqId } : {};
      },
      redact: {
        paths: ['req.headers.authorization', 'apiKey', 'secret', '*.secret', '*.apiKey', 'token', '*.token'],
        censor: '[redacted]',
      },
    },
    dest,
  );
}
