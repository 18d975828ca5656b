/** Result of one HTTP attempt: the status and Retry-After header, or why no answer came. */
export interface AttemptResult {
  /** HTTP status of the answer; undefined when none arrived (refused, DNS failure, connection error, timeout). */
  status?: number;
  /** Raw Retry-After header value, when present. */
  retryAfter?: string;
  /** Why the attempt failed without (or despite) an answer. */
  error?: string;
  /** True when the SSRF guard refused the address before connecting. */
  refused?: boolean;
}

/**
 * The webhook transport port (ARCHITECTURE "Outside systems sit behind ports"): POSTs one signed delivery attempt.
 * The adapter (src/infra/webhook-http/) keeps connections alive per receiver origin, follows no redirect, bounds the
 * whole attempt by the configured timeout, and refuses (without connecting) any address that
 * `refusedAddressReason` (webhook.ssrf.ts) refuses, checked on the address actually connected to, unless private
 * networks are allowed. It never throws: every failure is an {@link AttemptResult} with `error`.
 */
export interface WebhookTransport {
  /**
   * POSTs `body` (exact bytes) with `headers` to `url` once.
   * @param headers a flat list `[name0, value0, name1, value1, …]`, lowercase names each once (deliveryHeaders in
   *   webhook.signing.ts; undici's own form of request headers).
   * @returns the answer's status (and Retry-After), or the error; the answer body is read up to 64 KiB and dropped.
   */
  post(url: string, body: Buffer, headers: readonly string[]): Promise<AttemptResult>;
  /** Closes pooled connections (app stop). */
  close(): Promise<void>;
}
