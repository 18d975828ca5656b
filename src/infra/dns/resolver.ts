import { Resolver } from 'node:dns/promises';
import { LRUCache } from 'lru-cache';
import type { DnsRecordType, DnsResolver, MxRecord } from '../../domain/email/dns.port.js';

/** Settings of {@link createDnsResolver}. */
export interface DnsResolverOptions {
  /** Servers as `ip` or `ip:port` (`[v6]:port` for IPv6); empty or absent: the system's (/etc/resolv.conf). */
  servers?: string[];
  /** Longest a lookup may take, in ms, retries included; past it the lookup rejects with `ETIMEOUT`. */
  timeoutMs: number;
  /** Most answers kept (least recently used go first). */
  cacheEntries: number;
  /**
   * Longest an answer is kept, in s. A and AAAA answers are kept for their own TTL when it is shorter; node:dns does
   * not expose the TTL of TXT and MX answers, so they are kept this long (the bound the operator sets).
   */
  cacheTtlS: number;
}

/** TXT answers longer than this (all records of one name, in bytes) are refused as `EBADRESP`: no mail needs more. */
export const MAX_TXT_BYTES = 16 * 1024;
/** "No such record" answers (ENOTFOUND / ENODATA) are kept at most this long, in s (RFC 2308 negative caching). */
const NEGATIVE_TTL_S = 30;

type Answer = { ok: true; value: unknown[] } | { ok: false; code: string; message: string };

/**
 * A DNS failure as node:dns gives it (`code`). Without a stack: a cached "no such record" is thrown to mailauth for
 * every message (the DMARC lookup of a domain without a record), and capturing a stack each time was measurable.
 */
function dnsError(code: string, message: string): Error {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return Object.assign(new Error(message), { code });
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export { parseDnsServers } from '../../config.js';

/**
 * The DNS adapter of the {@link DnsResolver} port: `node:dns` `Resolver` (c-ares) on the configured servers, with
 * - a hard timeout per lookup (`ETIMEOUT` after `timeoutMs`, whatever the server does, so an SMTP session never
 *   hangs on DNS);
 * - a bounded LRU cache of answers (positive up to `cacheTtlS`, negative up to 30 s; failures are never kept);
 * - one query in flight per name and type: concurrent lookups of the same record share it;
 * - TXT answers over {@link MAX_TXT_BYTES} refused as `EBADRESP` (a temporary error to mailauth).
 */
export function createDnsResolver(opts: DnsResolverOptions): DnsResolver {
  // c-ares retries on its own: two tries within the budget, each with half of it.
  const resolver = new Resolver({ timeout: Math.max(1, Math.floor(opts.timeoutMs / 2)), tries: 2 });
  if (opts.servers && opts.servers.length > 0) resolver.setServers(opts.servers);
  // ttlResolution 0: read the clock on each lookup. lru-cache's default (1 ms) caches it behind a new timer per
  // lookup, i.e. one setTimeout for each of the two cached answers every inbound message reads (issue 24).
  const cache = new LRUCache<string, Answer>({ max: opts.cacheEntries, ttlAutopurge: false, ttlResolution: 0 });
  const inFlight = new Map<string, Promise<Answer>>();
  const maxTtlMs = opts.cacheTtlS * 1000;

  async function query(name: string, rrtype: DnsRecordType): Promise<{ value: unknown[]; ttlMs: number }> {
    switch (rrtype) {
      case 'A':
      case 'AAAA': {
        const recs =
          rrtype === 'A' ? await resolver.resolve4(name, { ttl: true }) : await resolver.resolve6(name, { ttl: true });
        const ttl = recs.reduce((m, r) => Math.min(m, r.ttl), opts.cacheTtlS);
        return { value: recs.map((r) => r.address), ttlMs: Math.max(0, ttl) * 1000 };
      }
      case 'TXT': {
        const recs = await resolver.resolveTxt(name);
        const bytes = recs.reduce((n, r) => n + r.reduce((m, s) => m + Buffer.byteLength(s), 0), 0);
        if (bytes > MAX_TXT_BYTES) throw dnsError('EBADRESP', `TXT answer of ${name} is ${bytes} bytes`);
        return { value: recs, ttlMs: maxTtlMs };
      }
      case 'MX':
        return { value: await resolver.resolveMx(name), ttlMs: maxTtlMs };
      case 'PTR':
        return { value: await resolver.resolvePtr(name), ttlMs: maxTtlMs };
      case 'CNAME':
        return { value: await resolver.resolveCname(name), ttlMs: maxTtlMs };
      case 'NS':
        return { value: await resolver.resolveNs(name), ttlMs: maxTtlMs };
      default:
        throw dnsError('EBADQUERY', `unsupported record type ${String(rrtype)}`);
    }
  }

  function lookup(name: string, rrtype: DnsRecordType): Promise<Answer> {
    const key = `${rrtype} ${name.toLowerCase().replace(/\.$/, '')}`;
    const cached = cache.get(key);
    if (cached) return Promise.resolve(cached);
    const pending = inFlight.get(key);
    if (pending) return pending;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(dnsError('ETIMEOUT', `DNS ${key} timed out`)), opts.timeoutMs);
      timer.unref();
    });
    const p = Promise.race([query(name, rrtype), timeout])
      .then(
        ({ value, ttlMs }): Answer => {
          const answer: Answer = { ok: true, value };
          // lru-cache keeps a ttl of 0 forever, so nothing is kept when either bound is 0 (DNS_CACHE_TTL_S=0).
          const ttl = Math.min(ttlMs, maxTtlMs);
          if (ttl > 0) cache.set(key, answer, { ttl });
          return answer;
        },
        (err: unknown): Answer => {
          const code = String((err as { code?: unknown })?.code ?? 'ESERVFAIL');
          const answer: Answer = { ok: false, code, message: (err as Error)?.message ?? code };
          if (code === 'ENOTFOUND' || code === 'ENODATA') {
            const ttl = Math.min(NEGATIVE_TTL_S * 1000, maxTtlMs);
            if (ttl > 0) cache.set(key, answer, { ttl });
          }
          return answer;
        },
      )
      .finally(() => {
        clearTimeout(timer);
        inFlight.delete(key);
      });
    inFlight.set(key, p);
    return p;
  }

  const answerValue = (answer: Answer): unknown[] => {
    if (!answer.ok) throw dnsError(answer.code, answer.message);
    return answer.value;
  };

  // One promise per cached answer (issue 24: two cached lookups per inbound message), none from an async wrapper.
  function resolve(name: string, rrtype: DnsRecordType): Promise<unknown[]> {
    try {
      return lookup(name, rrtype).then(answerValue);
    } catch (err) {
      return Promise.reject(err); // as the async function did: a bad name rejects, never throws at the caller
    }
  }

  return {
    resolve,
    resolveTxt: (name) => resolve(name, 'TXT') as Promise<string[][]>,
    resolveMx: (name) => resolve(name, 'MX') as Promise<MxRecord[]>,
  };
}
