import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { refusedAddressReason } from './webhook.ssrf.js';

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

/** Raised inside the guarded lookup; carries the refusal reason. */
class RefusedAddressError extends Error {
  readonly refused = true;
}

/**
 * A `lookup` for node:http that resolves the host name once, refuses it when any resolved address is not public
 * (unless `allowPrivate`), and hands exactly the checked addresses to the socket, so the connection goes to an
 * address that was checked (no second DNS lookup between check and connect).
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

/**
 * POSTs `body` to `url` once: no redirects followed, no keep-alive, the whole attempt (DNS, connect, answer
 * headers, answer body up to 64 KiB) bounded by `timeoutMs`. A literal IP host is checked before connecting; a
 * host name through {@link guardedLookup}.
 */
export function postOnce(
  url: string,
  body: Buffer,
  headers: Record<string, string>,
  opts: { timeoutMs: number; allowPrivate: boolean },
): Promise<AttemptResult> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return resolve({ error: 'invalid URL' });
    }
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) && !opts.allowPrivate) {
      const reason = refusedAddressReason(host);
      if (reason) return resolve({ error: `refused: ${reason}`, refused: true });
    }
    let settled = false;
    const finish = (r: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const send = target.protocol === 'https:' ? https.request : http.request;
    const req = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(body.length) },
        agent: false,
        lookup: guardedLookup(opts.allowPrivate),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const retryAfter = res.headers['retry-after'];
        let received = 0;
        const done = () => finish({ status, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) });
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > 64 * 1024) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', done);
        res.on('close', done);
      },
    );
    const timer = setTimeout(() => {
      finish({ error: `timeout after ${opts.timeoutMs} ms` });
      req.destroy();
    }, opts.timeoutMs);
    req.on('error', (err: Error & { refused?: boolean; code?: string }) => {
      if (err.refused) return finish({ error: err.message, refused: true });
      finish({ error: err.code ? `${err.code}: ${err.message}` : err.message });
    });
    req.end(body);
  });
}
