import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString } from 'pino';

/**
 * Fastify's per-request logger (`request.log`, `reply.log`), whose pino child is made only when a line is written
 * at an enabled level (or a child or level change is asked for). Fastify makes one per request; at LOG_LEVEL=warn a
 * successful request writes no line, so the child (pino serialises the `reqId` binding to JSON text when it is
 * made) was work for nothing on every request. A line, once written, is exactly the child's: same bindings
 * (`reqId`), serialisers, redaction and mixin, since it is written by that child.
 *
 * `base` is the logger the child is made from (src/http/server.ts: the request base that carries the `req`
 * serialiser and the reqId mark); `bindings` the child's (`{ reqId }`).
 */
export class LazyRequestLogger implements FastifyBaseLogger {
  readonly #base: FastifyBaseLogger;
  readonly #bindings: Bindings;
  #child: FastifyBaseLogger | undefined;

  constructor(base: FastifyBaseLogger, bindings: Bindings) {
    this.#base = base;
    this.#bindings = bindings;
  }

  /** The real child, made on first use. */
  #logger(): FastifyBaseLogger {
    if (this.#child === undefined) this.#child = this.#base.child(this.#bindings);
    return this.#child;
  }

  /** Whether a line at `level` would be written (the child's level once made, else the base's, which it inherits). */
  #enabled(level: string): boolean {
    const logger = this.#child ?? this.#base;
    return (logger as unknown as { isLevelEnabled(level: string): boolean }).isLevelEnabled(level);
  }

  get level(): LevelWithSilentOrString {
    return (this.#child ?? this.#base).level;
  }

  set level(level: LevelWithSilentOrString) {
    this.#logger().level = level;
  }

  /** Writes one line at `level` through the child (made now if it was not). */
  #write(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]): void {
    const logger = this.#logger();
    (logger[level] as (...a: unknown[]) => void).apply(logger, args);
  }

  fatal(...args: unknown[]): void {
    if (this.#enabled('fatal')) this.#write('fatal', args);
  }

  error(...args: unknown[]): void {
    if (this.#enabled('error')) this.#write('error', args);
  }

  warn(...args: unknown[]): void {
    if (this.#enabled('warn')) this.#write('warn', args);
  }

  info(...args: unknown[]): void {
    if (this.#enabled('info')) this.#write('info', args);
  }

  debug(...args: unknown[]): void {
    if (this.#enabled('debug')) this.#write('debug', args);
  }

  trace(...args: unknown[]): void {
    if (this.#enabled('trace')) this.#write('trace', args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options);
  }
}
