// Which SMTP reply a failure to take a message gets (issue 26): a permanent condition answered `5xx` so the sending
// server bounces at once, `451` only for what can heal, so it retries (RFC 5321 4.2.1, 4.5.4.1; RFC 3463 codes).
import { DomainError } from '../domain/errors.js';

/** The message could not be parsed as MIME (over-nested, too many parts, an oversize header): the same bytes fail
 * the same way on every retry. */
export class UnparseableMessageError extends Error {
  constructor(override readonly cause: unknown) {
    super(`message is not parseable MIME: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'UnparseableMessageError';
  }
}

/** For `parse(raw).catch(unparseable)`: marks any parser failure as {@link UnparseableMessageError}. */
export function unparseable(err: unknown): never {
  throw new UnparseableMessageError(err);
}

/**
 * SQLSTATE classes of PostgreSQL errors the same data raises again: 22 data exception (e.g. 22021, a NUL byte); 42
 * syntax or access rule; 54 program limit exceeded (e.g. 54000, an index row over btree's 2,704 bytes: a Message-ID
 * of 990 CJK characters is 3,000 bytes, was answered 451 on every retry). Class 23 (a unique violation) is left
 * temporary: two instances storing the same message at once collide, and the retry finds it stored.
 */
const PERMANENT_SQLSTATE_CLASSES = new Set(['22', '42', '54']);

const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * The PostgreSQL SQLSTATE behind `err`: its own `code` (a pg error), or, for a Prisma error raised through the
 * driver adapter (`PrismaClientKnownRequestError` P2039 and kin), `meta.driverAdapterError.cause.originalCode`.
 */
function sqlState(err: unknown): string | undefined {
  const e = err as {
    name?: unknown;
    code?: unknown;
    meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } };
  };
  // A Prisma error's own `code` is Prisma's (P2039), which looks like a SQLSTATE but is not one.
  const code = String(e?.name).startsWith('PrismaClient') ? e?.meta?.driverAdapterError?.cause?.originalCode : e?.code;
  return typeof code === 'string' && SQLSTATE.test(code) ? code : undefined;
}

/**
 * The reply for a message that could not be parsed or stored:
 * - unparseable MIME (`UnparseableMessageError`, from mailparser: `EMAXLEN` over 1,000 nested parts or a 1 MiB
 *   header, …): `554 5.6.0` (RFC 3463 5.6.0: other or undefined media error);
 * - a client mistake the domain refused (a `DomainError` with a 4xx status: data it will refuse again): `554 5.6.0`;
 * - data PostgreSQL refuses (SQLSTATE class 22, 42 or 54): `554 5.6.0`;
 * - anything else (the database unreachable, a serialization failure, a timeout, a bug being fixed): `451 4.3.0`, so
 *   the sender retries and nothing is lost.
 * @returns `{code, message}` for smtp-server (message starts with the enhanced status code).
 */
export function storingFailureReply(err: unknown): { code: number; message: string } {
  if (err instanceof UnparseableMessageError) {
    return { code: 554, message: '5.6.0 Message is not valid MIME (too deeply nested or malformed); not accepted' };
  }
  if (err instanceof DomainError && err.status >= 400 && err.status < 500) {
    return { code: 554, message: `5.6.0 Message refused: ${err.code}` };
  }
  const state = sqlState(err);
  if (state && PERMANENT_SQLSTATE_CLASSES.has(state.slice(0, 2))) {
    return { code: 554, message: '5.6.0 Message content cannot be stored; not accepted' };
  }
  return { code: 451, message: '4.3.0 Temporary failure, try again later' };
}
