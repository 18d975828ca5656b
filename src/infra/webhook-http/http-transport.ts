import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { LRUCache } from 'lru-cache';
import { Agent, type Dispatcher, errors as undiciErrors } from 'undici';
import { headerValue } from '../../domain/webhooks/webhook.signing.js';
import { refusedAddressReason } from '../../domain/webhooks/webhook.ssrf.js';
import type { AttemptResult, WebhookTransport } from '../../domain/webhooks/webhook-transport.port.js';
import {
  context,
  EVENT_ID_ATTRIBUTE,
  inSpan,
  propagation,
  SpanKind,
  SpanStatusCode,
  tracingEnabled,
} from '../tracing.js';

/** Answer bytes read (and dropped) per attempt; a longer answer is cut and its connection closed. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Raised inside the guarded lookup; carries the refusal reason. */
class RefusedAddressError extends Error {
  readonly refused = true;
}

/**
 * A `lookup` for sockets that resolves the host name once, refuses it when any resolved address is not public
 * (unless `allowPrivate`), and hands exactly the checked addresses to the socket, so the connection goes to an
 * address that was checked (no second DNS lookup between check and connect). A kept-alive connection was checked
 * when it was opened.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, family: options.family, hints: options.hints }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      if (!allowPrivate) {
        for (const a of addresses) {
          const reason = refusedAddressReason(a.address);
          if (reason) return callback(new RefusedAddressError(`refused: ${hostname} resolves to ${reason}`), '', 4);
        }
      }
      if (addresses.length === 0) return callback(new Error(`no address for ${hostname}`), '', 4);
      if ((options as { all?: boolean }).all)
        return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/** What a failed attempt without an answer reports: a refusal by the SSRF guard, a timeout, or the error's code and message. */
function attemptError(err: unknown, timeoutMs: number): AttemptResult {
  const e = err as Error & { refused?: boolean; code?: string; cause?: Error & { refused?: boolean } };
  const refused = e.refused ? e : e.cause?.refused ? e.cause : undefined;
  if (refused) return { error: refused.message, refused: true };
  if (
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError
  ) {
    return { error: `timeout after ${timeoutMs} ms` };
  }
  const cause = e.cause && !(e.code && e.code !== 'UND_ERR_SOCKET') ? e.cause : e;
  const c = cause as Error & { code?: string };
  return { error: c.code ? `${c.code}: ${c.message}` : c.message };
}

/** Most receiver URLs whose parsed form the transport keeps. */
const TARGET_CACHE_MAX = 10_000;

/** A receiver URL as an attempt uses it: where to send, or the result that refuses it without sending. */
type Target = { origin: string; path: string } | { refusal: AttemptResult };

/** Parses receiver `url` ({@link UndiciWebhookTransport}'s `#target`). */
function parseTarget(url: string, allowPrivate: boolean): Target {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { refusal: { error: 'invalid URL' } };
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return { refusal: { error: 'invalid URL' } };
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) && !allowPrivate) {
    const reason = refusedAddressReason(host);
    if (reason) return { refusal: { error: `refused: ${reason}`, refused: true } };
  }
  return { origin: target.origin, path: `${target.pathname}${target.search}` };
}

/**
 * The undici handler of one attempt (one object with prototype methods rather than a closure per callback): reads
 * the status and Retry-After, counts and drops the answer's bytes (cut at {@link MAX_ANSWER_BYTES}), and settles
 * once, on completion, error, the cut, or the whole-attempt timeout (`timeoutMs`), whichever comes first.
 */
class AttemptHandler implements Dispatcher.DispatchHandlers {
  #settled = false;
  #timedOut = false;
  #abort: ((err?: Error) => void) | undefined;
  #status: number | undefined;
  #retryAfter: string | undefined;
  #bytes = 0;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly resolve: (r: AttemptResult) => void,
    private readonly timeoutMs: number,
  ) {
    this.#timer = setTimeout(() => this.#expire(), timeoutMs);
  }

  #expire(): void {
    this.#timedOut = true;
    this.finish(this.#status !== undefined ? this.#answered() : { error: `timeout after ${this.timeoutMs} ms` });
    this.#abort?.(new Error(`timeout after ${this.timeoutMs} ms`));
  }

  #answered(): AttemptResult {
    return this.#retryAfter !== undefined
      ? { status: this.#status!, retryAfter: this.#retryAfter }
      : { status: this.#status! };
  }

  /** Settles the attempt with `r` (only the first call counts). */
  finish(r: AttemptResult): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.resolve(r);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.#abort = abort;
    if (this.#timedOut) abort(new Error(`timeout after ${this.timeoutMs} ms`));
  }

  onHeaders(statusCode: number, raw: Buffer[]): boolean {
    if (statusCode < 200) return true;
    this.#status = statusCode;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i]!;
      if (name.length === 11 && name.toString('latin1').toLowerCase() === 'retry-after') {
        this.#retryAfter = raw[i + 1]!.toString('latin1');
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#bytes += chunk.length;
    if (this.#bytes <= MAX_ANSWER_BYTES) return true;
    // A longer answer is cut and its connection closed; the status stands.
    this.finish(this.#answered());
    this.#abort?.(new Error('answer too long'));
    return false;
  }

  onComplete(): void {
    this.finish(this.#answered());
  }

  onError(err: Error): void {
    if (this.#settled) return;
    if (this.#timedOut) this.finish({ error: `timeout after ${this.timeoutMs} ms` });
    // The status arrived; an answer body cut short does not change the outcome.
    else if (this.#status !== undefined) this.finish(this.#answered());
    else this.finish(attemptError(err, this.timeoutMs));
  }
}

/** Options of {@link UndiciWebhookTransport}. */
export interface HttpTransportOptions {
  /** Bound of one whole attempt (connect, answer headers, answer body), in ms (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** Deliver to private, loopback and other non-public addresses too (WEBHOOK_ALLOW_PRIVATE_NETWORKS). */
  allowPrivate: boolean;
  /** Most open connections per receiver origin (default 64); further attempts to it wait for one. */
  connectionsPerOrigin?: number;
}

/**
 * The webhook HTTP client: an undici `Agent`, i.e. one keep-alive connection pool per receiver origin (at most
 * `connectionsPerOrigin` sockets each, idle sockets closed after 4 s), no redirects followed, every new connection
 * made through {@link guardedLookup}; a literal IP host is checked before anything is sent.
 */
export class UndiciWebhookTransport implements WebhookTransport {
  readonly #agent: Agent;
  /** Tracing was on when this transport was made (src/infra/tracing.ts). */
  readonly #traced = tracingEnabled();
  /** Parsed receiver URLs ({@link #target}). */
  readonly #targets = new LRUCache<string, Target>({ max: TARGET_CACHE_MAX });

  constructor(private readonly opts: HttpTransportOptions) {
    this.#agent = new Agent({
      connections: opts.connectionsPerOrigin ?? 64,
      pipelining: 1,
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 30_000,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      connectTimeout: opts.timeoutMs,
      connect: { lookup: guardedLookup(opts.allowPrivate) },
    });
  }

  /**
   * One delivery attempt as a CLIENT span `webhook POST` (receiver host, event and delivery ids, attempt, status),
   * sending `traceparent` so the receiver can continue the trace; without a wrapper (no extra promise) while tracing
   * is off.
   */
  post(url: string, body: Buffer, headers: readonly string[]): Promise<AttemptResult> {
    if (!this.#traced) return this.#post(url, body, headers);
    return inSpan(
      'webhook POST',
      SpanKind.CLIENT,
      {
        'http.request.method': 'POST',
        'server.address': URL.canParse(url) ? new URL(url).hostname : 'invalid',
        [EVENT_ID_ATTRIBUTE]: headerValue(headers, 'x-switchboard-event-id') ?? '',
        'switchboard.delivery_id': headerValue(headers, 'x-switchboard-delivery') ?? '',
        'switchboard.attempt': Number(headerValue(headers, 'x-switchboard-attempt') ?? 0),
      },
      async (span) => {
        const injected: Record<string, string> = {};
        propagation.inject(context.active(), injected);
        const carried = [...headers];
        for (const name in injected) carried.push(name, injected[name]!);
        const result = await this.#post(url, body, carried);
        if (result.status !== undefined) span.setAttribute('http.response.status_code', result.status);
        if (result.error || (result.status ?? 0) >= 400) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? `HTTP ${result.status}` });
        }
        return result;
      },
    );
  }

  /**
   * Where `url` sends an attempt (origin and path), or the result that refuses it at once (not a URL, not http(s),
   * a literal IP that is not public): parsed once per URL, as every delivery of a webhook goes to the same one
   * (issue 24: CPU per delivery). The cache keeps the {@link TARGET_CACHE_MAX} most recently used URLs.
   */
  #target(url: string): Target {
    let t = this.#targets.get(url);
    if (t !== undefined) return t;
    t = parseTarget(url, this.opts.allowPrivate);
    this.#targets.set(url, t);
    return t;
  }

  /**
   * One POST through undici's Dispatcher API (`dispatch` with a handler) rather than `request`: the answer's status
   * and Retry-After are all an attempt needs, so its body is counted and dropped as it arrives instead of going
   * through a Readable stream, and the whole-attempt bound is one timer calling the abort undici hands the handler
   * instead of an AbortController per attempt (issue 24: CPU per delivery). Outcomes are those of `request`: once the
   * status arrived, an answer cut short (too long, timed out, connection lost) still counts as that status. The
   * headers go as the flat array they come in (undici's own form; its content-length comes from the Buffer body).
   */
  #post(url: string, body: Buffer, headers: readonly string[]): Promise<AttemptResult> {
    const target = this.#target(url);
    if ('refusal' in target) return Promise.resolve(target.refusal);
    return new Promise<AttemptResult>((resolve) => {
      const handler = new AttemptHandler(resolve, this.opts.timeoutMs);
      try {
        this.#agent.dispatch(
          { origin: target.origin, path: target.path, method: 'POST', headers: headers as string[], body },
          handler,
        );
      } catch (err) {
        handler.finish(attemptError(err, this.opts.timeoutMs));
      }
    });
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
