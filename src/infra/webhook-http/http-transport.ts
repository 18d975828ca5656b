import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { Agent, type Dispatcher, errors as undiciErrors } from 'undici';
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
   * sending `traceparent` so the receiver can continue the trace; a no-op wrapper while tracing is off.
   */
  async post(url: string, body: Buffer, headers: Record<string, string>): Promise<AttemptResult> {
    if (!this.#traced) return this.#post(url, body, headers);
    return inSpan(
      'webhook POST',
      SpanKind.CLIENT,
      {
        'http.request.method': 'POST',
        'server.address': URL.canParse(url) ? new URL(url).hostname : 'invalid',
        [EVENT_ID_ATTRIBUTE]: headers['x-switchboard-event-id'] ?? '',
        'switchboard.delivery_id': headers['x-switchboard-delivery'] ?? '',
        'switchboard.attempt': Number(headers['x-switchboard-attempt'] ?? 0),
      },
      async (span) => {
        const carried = { ...headers };
        propagation.inject(context.active(), carried);
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
   * One POST through undici's Dispatcher API (`dispatch` with a handler) rather than `request`: the answer's status
   * and Retry-After are all an attempt needs, so its body is counted and dropped as it arrives instead of going
   * through a Readable stream, and the whole-attempt bound is one timer calling the abort undici hands the handler
   * instead of an AbortController per attempt (issue 24: CPU per delivery). Outcomes are those of `request`: once the
   * status arrived, an answer cut short (too long, timed out, connection lost) still counts as that status.
   */
  #post(url: string, body: Buffer, headers: Record<string, string>): Promise<AttemptResult> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return Promise.resolve({ error: 'invalid URL' });
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') return Promise.resolve({ error: 'invalid URL' });
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) && !this.opts.allowPrivate) {
      const reason = refusedAddressReason(host);
      if (reason) return Promise.resolve({ error: `refused: ${reason}`, refused: true });
    }
    const timeoutMs = this.opts.timeoutMs;
    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      let timedOut = false;
      let abort: ((err?: Error) => void) | undefined;
      let status: number | undefined;
      let retryAfter: string | undefined;
      let bytes = 0;
      const answered = (): AttemptResult => ({
        status: status!,
        ...(retryAfter !== undefined ? { retryAfter } : {}),
      });
      const finish = (r: AttemptResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(r);
      };
      const timer = setTimeout(() => {
        timedOut = true;
        finish(status !== undefined ? answered() : { error: `timeout after ${timeoutMs} ms` });
        abort?.(new Error(`timeout after ${timeoutMs} ms`));
      }, timeoutMs);
      const handler: Dispatcher.DispatchHandlers = {
        onConnect(a) {
          abort = a;
          if (timedOut) a(new Error(`timeout after ${timeoutMs} ms`));
        },
        onHeaders(statusCode, raw) {
          if (statusCode < 200) return true;
          status = statusCode;
          for (let i = 0; i + 1 < raw.length; i += 2) {
            const name = raw[i]!;
            if (name.length === 11 && name.toString('latin1').toLowerCase() === 'retry-after') {
              retryAfter = raw[i + 1]!.toString('latin1');
            }
          }
          return true;
        },
        onData(chunk) {
          bytes += chunk.length;
          if (bytes <= MAX_ANSWER_BYTES) return true;
          // A longer answer is cut and its connection closed; the status stands.
          finish(answered());
          abort?.(new Error('answer too long'));
          return false;
        },
        onComplete() {
          finish(answered());
        },
        onError(err) {
          if (settled) return;
          if (timedOut) return finish({ error: `timeout after ${timeoutMs} ms` });
          // The status arrived; an answer body cut short does not change the outcome.
          if (status !== undefined) return finish(answered());
          finish(attemptError(err, timeoutMs));
        },
      };
      try {
        this.#agent.dispatch(
          {
            origin: target.origin,
            path: `${target.pathname}${target.search}`,
            method: 'POST',
            headers: { ...headers, 'content-length': String(body.length) },
            body,
          },
          handler,
        );
      } catch (err) {
        finish(attemptError(err, timeoutMs));
      }
    });
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
