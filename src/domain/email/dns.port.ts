/** Record types the mail code asks for (SPF, DKIM, DMARC, ARC, MX checks, custom-domain verification). */
export type DnsRecordType = 'A' | 'AAAA' | 'MX' | 'TXT' | 'PTR' | 'CNAME' | 'NS';

/** An MX record (RFC 5321 5.1): the exchange host and its preference (lower is tried first). */
export interface MxRecord {
  exchange: string;
  priority: number;
}

/**
 * The DNS port: every lookup of the email area goes through it (src/infra/dns/resolver.ts is the adapter).
 *
 * Errors follow node:dns so that mailauth (whose `resolver` option takes {@link DnsResolver.resolve}) maps them to
 * its verdicts: a rejection with `code` `ENOTFOUND` (no such name) or `ENODATA` (the name has no record of that
 * type) means "no record" (`none`); any other code (`ETIMEOUT`, `ESERVFAIL`, `ECONNREFUSED`, `EBADRESP`…) is a
 * temporary failure (`temperror`). A lookup never waits longer than the adapter's timeout.
 */
export interface DnsResolver {
  /**
   * Resolves `name` for `rrtype` with the shape of `node:dns/promises` `resolve(name, rrtype)`: `string[]` for A,
   * AAAA, PTR, CNAME and NS, {@link MxRecord}`[]` for MX, `string[][]` (each record's character strings) for TXT.
   */
  resolve(name: string, rrtype: DnsRecordType): Promise<unknown[]>;
  /** TXT records of `name`, each as its list of character strings (join them to read the record). */
  resolveTxt(name: string): Promise<string[][]>;
  /** MX records of `name`. */
  resolveMx(name: string): Promise<MxRecord[]>;
}

/** True when `err` is a DNS answer that the name has no such record (`ENOTFOUND`, `ENODATA`), not a failure. */
export function isNoRecord(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOTFOUND' || code === 'ENODATA';
}
