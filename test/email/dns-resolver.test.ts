import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver, MAX_TXT_BYTES, parseDnsServers } from '../../src/infra/dns/resolver.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';

/** The DNS adapter against a real DNS server on loopback (dns2): answers, errors mailauth reads, timeout, cache. */
describe('DNS resolver (DNS_SERVERS)', () => {
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startDnsServer({
      'example.test': {
        TXT: ['v=spf1 ip4:127.0.0.1 -all', `v=DKIM1; k=rsa; p=${'A'.repeat(400)}`],
        MX: [{ exchange: 'mx.example.test', priority: 10 }],
        A: ['127.0.0.1'],
      },
      'only-a.test': { A: ['127.0.0.2'] },
      'slow.test': { hang: true },
      'broken.test': { servfail: true },
      'huge.test': { TXT: Array.from({ length: 100 }, (_, i) => `${i}-${'x'.repeat(240)}`) },
    });
  });
  afterAll(async () => {
    await dns?.close();
  });
  // Lookups that must be answered get 10 s: at load 15+ the in-process server's answer took over 2 s and the
  // lookup failed with ETIMEOUT (seen by helpers on 2026-11-27). The timeout test sets its own 300 ms.
  const resolver = (timeoutMs = 10_000) =>
    createDnsResolver({ servers: [dns.address], timeoutMs, cacheEntries: 100, cacheTtlS: 60 });

  it('answers TXT (long records joined by the caller), MX and A in node:dns shapes', async () => {
    const r = resolver();
    const txt = await r.resolveTxt('example.test');
    expect(txt.map((parts) => parts.join(''))).toEqual(
      expect.arrayContaining(['v=spf1 ip4:127.0.0.1 -all', `v=DKIM1; k=rsa; p=${'A'.repeat(400)}`]),
    );
    expect(await r.resolveMx('example.test')).toEqual([{ exchange: 'mx.example.test', priority: 10 }]);
    expect(await r.resolve('example.test', 'A')).toEqual(['127.0.0.1']);
  });

  it('rejects with the codes mailauth reads: ENOTFOUND (no name), ENODATA (no record), ESERVFAIL', async () => {
    const r = resolver();
    await expect(r.resolveTxt('missing.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(r.resolveTxt('only-a.test')).rejects.toMatchObject({ code: 'ENODATA' });
    await expect(r.resolveTxt('broken.test')).rejects.toMatchObject({ code: 'ESERVFAIL' });
  });

  it('gives up on a server that never answers with ETIMEOUT, near its timeout', async () => {
    const r = resolver(300);
    const started = Date.now();
    await expect(r.resolveTxt('slow.test')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    // The bound is the point: a hung resolver must not hold an SMTP session (generous for a busy machine).
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('refuses a TXT answer over the size bound as EBADRESP', async () => {
    await expect(resolver(5000).resolveTxt('huge.test')).rejects.toMatchObject({ code: 'EBADRESP' });
    expect(100 * 243).toBeGreaterThan(MAX_TXT_BYTES);
  });

  it('keeps answers and negative answers, shares concurrent lookups, never keeps failures', async () => {
    const r = resolver();
    const count = (q: string) => dns.queries.filter((x) => x === q).length;
    const before = count('MX example.test');
    await Promise.all([r.resolveMx('example.test'), r.resolveMx('example.test'), r.resolveMx('EXAMPLE.test.')]);
    await r.resolveMx('example.test');
    expect(count('MX example.test') - before).toBe(1);

    const nx = count('TXT nowhere.test');
    await expect(r.resolveTxt('nowhere.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(r.resolveTxt('nowhere.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(count('TXT nowhere.test') - nx).toBe(1);

    const fail = count('TXT broken.test');
    await expect(r.resolveTxt('broken.test')).rejects.toMatchObject({ code: 'ESERVFAIL' });
    await expect(r.resolveTxt('broken.test')).rejects.toMatchObject({ code: 'ESERVFAIL' });
    expect(count('TXT broken.test') - fail).toBeGreaterThanOrEqual(2);
  });

  it('parses DNS_SERVERS and names a bad entry', () => {
    expect(parseDnsServers(' 127.0.0.1:53, ::1 ,[::1]:5353')).toEqual(['127.0.0.1:53', '::1', '[::1]:5353']);
    expect(parseDnsServers(undefined)).toEqual([]);
    expect(() => parseDnsServers('127.0.0.1,dns.example')).toThrow(/dns\.example/);
    expect(() => parseDnsServers('127.0.0.1:70000')).toThrow(/70000/);
  });
});
