/**
 * The source of "now" for every rule that depends on time (registry schedule, webhook retries, retention).
 * Injected so tests can move time forward in milliseconds instead of waiting.
 */
export interface Clock {
  /** Current time. */
  now(): Date;
}
