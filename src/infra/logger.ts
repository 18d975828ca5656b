import { AsyncLocalStorage } from 'node:async_hooks';
import { type DestinationStream, type Logger, pino } from 'pino';

/**
 * The request a piece of async work belongs to, so log lines from domain code carry its id. The HTTP host
 * (src/http/server.ts) enters it for each request; the logger reads it.
 */
export const requestScope = new AsyncLocalStorage<{ reqId: string }>();

/**
 * The service's logger: JSON lines (pino) at `level`, secrets redacted, and the id of the request the line belongs
 * to (`reqId`) on every line written while serving it, domain code's included. `destination` defaults to stdout.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      // Domain code logs through ctx.log; during a request its lines carry the request id too.
      mixin: () => {
        const store = requestScope.getStore();
        return store ? { reqId: store.reqId } : {};
      },
      redact: {
        paths: ['req.headers.authorization', 'apiKey', 'secret', '*.secret', '*.apiKey'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
