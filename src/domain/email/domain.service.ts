import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { ConflictError, NotFoundError, UnprocessableError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import { deleteDkimKey, dkimRecordValue, ensureDkimKey } from './dkim.service.js';
import { isNoRecord } from './dns.port.js';
import type { dnsRecordShape, domainShape, recordCheckShape } from './email.shapes.js';
import {
  deleteDomainRow,
  domainOf,
  domainsOf,
  type EmailDomain,
  insertDomain,
  markDomainChecked,
  markDomainVerified,
  verifiedAmong,
} from './email-domain.store.js';
import { countActiveIdentitiesOnDomain } from './identity.store.js';
import { DOMAIN_NAME, hostedDomains, normalizeAddress } from './mail.rules.js';
import { smtpEndpoint } from './smtp-endpoint.js';

const domainName = z
  .string()
  .trim()
  .max(253)
  .refine((v) => DOMAIN_NAME.test(v) && v.includes('.'), {
    message: 'must be a DNS domain name with at least two labels',
    params: { code: 'INVALID_FORMAT' },
  })
  .describe('A DNS domain name, e.g. mail.example.com; stored lower-cased.');

/** Body of POST /api/email/domains and input of `addEmailDomain`. */
export const addDomainInput = z.object({ domain: domainName }).strict();
/** Parsed addDomainInput. */
export type AddDomainInput = z.output<typeof addDomainInput>;
/** Path parameters of /api/email/domains/{domain}: a DNS name (400 otherwise); one not the account's answers 404. */
export const domainParams = z.object({
  domain: z
    .string()
    .refine((v) => DOMAIN_NAME.test(v), { message: 'must be a DNS host name', params: { code: 'INVALID_FORMAT' } })
    .describe('The domain name.'),
});

/** `pending` until its DNS records verify; configured domains (EMAIL_DOMAINS) are `verified` by configuration. */
export type DomainStatus = 'pending' | 'verified';

/** One DNS record a domain owner publishes (issue 20 section 4). */
export type DnsRecordView = z.output<typeof dnsRecordShape>;

/** Result of checking one record through the resolver. */
export type RecordCheck = z.output<typeof recordCheckShape>;

/** A domain and the records it needs. */
export type DomainView = z.output<typeof domainShape>;

/** DMARC policy the records propose (RFC 7489 6.3): quarantine what fails, relaxed alignment. */
export const PROPOSED_DMARC = 'v=DMARC1; p=quarantine; adkim=r; aspf=r';

/** MX preference of the proposed record. */
const MX_PREFERENCE = 10;

/** The host name MX records point at and SPF names: SMTP_PUBLIC_HOST (identities' smtpHost). */
export function mxHost(ctx: DomainContext): string {
  return smtpEndpoint(ctx).smtpHost.toLowerCase();
}

/**
 * SPF record the records propose (RFC 7208): the MX hosts, the relay's host when one is set (`ip4:`/`ip6:` for an
 * address, else `a:`), soft-fail the rest.
 */
export function proposedSpf(ctx: DomainContext): string {
  const relay = ctx.config.SMTP_RELAY_URL ? new URL(ctx.config.SMTP_RELAY_URL).hostname : undefined;
  const bare = relay?.replace(/^\[|\]$/g, '');
  const mechanism = !bare
    ? []
    : ipaddr.IPv4.isValidFourPartDecimal(bare)
      ? [`ip4:${bare}`]
      : ipaddr.IPv6.isValid(bare)
        ? [`ip6:${bare}`]
        : [`a:${bare}`];
  return ['v=spf1', 'mx', ...(bare && bare !== mxHost(ctx) ? mechanism : []), '~all'].join(' ');
}

/** The four records of `domain` (lower-case): MX, SPF TXT, DKIM TXT at `<selector>._domainkey`, DMARC at `_dmarc`. */
export async function dnsRecordsFor(ctx: DomainContext, domain: string): Promise<DnsRecordView[]> {
  const key = await ensureDkimKey(ctx, domain);
  return [
    { type: 'MX', name: domain, value: `${MX_PREFERENCE} ${mxHost(ctx)}`, purpose: 'mx' },
    { type: 'TXT', name: domain, value: proposedSpf(ctx), purpose: 'spf' },
    { type: 'TXT', name: `${key.selector}._domainkey.${domain}`, value: dkimRecordValue(key), purpose: 'dkim' },
    { type: 'TXT', name: `_dmarc.${domain}`, value: PROPOSED_DMARC, purpose: 'dmarc' },
  ];
}

async function view(
  ctx: DomainContext,
  domain: string,
  status: DomainStatus,
  configured: boolean,
): Promise<DomainView> {
  return { domain, status, configured, dnsRecords: await dnsRecordsFor(ctx, domain) };
}

/**
 * GET /api/email/domains (issue 20 section 4): the configured domains (EMAIL_DOMAINS, `verified`) then the
 * account's own, oldest first, each with the records to publish. @returns `{domains}`.
 */
export async function listDomains(ctx: DomainContext, actor: Actor): Promise<DomainView[]> {
  requireScope(actor, 'email');
  const own = await domainsOf(ctx.db, actor.accountId);
  return Promise.all([
    ...hostedDomains(ctx.config).map((d) => view(ctx, d, 'verified', true)),
    ...own.map((d) => view(ctx, d.domain, d.status as DomainStatus, false)),
  ]);
}

/** The account's own custom domain. @throws NotFoundError (another account's domain answers the same). */
export async function findOwnDomain(ctx: DomainContext, accountId: string, domain: string): Promise<EmailDomain> {
  const row = await domainOf(ctx.db, accountId, domain.toLowerCase());
  if (!row) throw new NotFoundError('Email domain', domain, 'domain');
  return row;
}

/** GET one domain of the account (configured or own). @throws NotFoundError. */
export async function getDomain(ctx: DomainContext, actor: Actor, domain: string): Promise<DomainView> {
  requireScope(actor, 'email');
  const d = domain.toLowerCase();
  if (hostedDomains(ctx.config).includes(d)) return view(ctx, d, 'verified', true);
  const row = await findOwnDomain(ctx, actor.accountId, d);
  return view(ctx, row.domain, row.status as DomainStatus, false);
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === 'P2002';
}

/**
 * POST /api/email/domains (issue 20 section 4): adds a custom domain for the account, status `pending`, and
 * generates its DKIM key. `domain` is parsed at the door (`addDomainInput`; lower-cased here).
 * @returns the domain with the records to publish.
 * @throws ConflictError DOMAIN_TAKEN (409) when a configured domain, another account's, or already the account's.
 */
export async function addDomain(ctx: DomainContext, actor: Actor, data: AddDomainInput): Promise<DomainView> {
  requireScope(actor, 'email');
  const d = data.domain.toLowerCase();
  const taken = () => new ConflictError('DOMAIN_TAKEN', `The domain ${d} is already in use.`, 'domain');
  if (hostedDomains(ctx.config).includes(d)) throw taken();
  try {
    await insertDomain(ctx.db, {
      domain: d,
      accountId: actor.accountId,
      status: 'pending',
      createdAt: ctx.clock.now(),
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw taken();
    throw err;
  }
  return view(ctx, d, 'pending', false);
}

/**
 * DELETE /api/email/domains/{domain}: removes the account's custom domain and its DKIM key.
 * @throws NotFoundError (configured domains cannot be removed: 404 like another account's);
 *   UnprocessableError DOMAIN_IN_USE while an active identity uses it (deprovision those first).
 */
export async function deleteDomain(ctx: DomainContext, actor: Actor, domain: string): Promise<void> {
  requireScope(actor, 'email');
  const row = await findOwnDomain(ctx, actor.accountId, domain);
  const inUse = await countActiveIdentitiesOnDomain(ctx.db, row.domain);
  if (inUse > 0) {
    throw new UnprocessableError(
      'DOMAIN_IN_USE',
      `The domain ${row.domain} has ${inUse} active identities; deprovision them first.`,
      'domain',
    );
  }
  await deleteDomainRow(ctx.db, actor.accountId, row.domain);
  ctx.emailCaches.customDomains.delete(row.domain);
  await deleteDkimKey(ctx, row.domain);
}

/**
 * The rule of identity creation (issue 20 section 4): `domain` must be configured (EMAIL_DOMAINS) or a custom domain
 * of the account that is verified.
 * @throws UnprocessableError DOMAIN_NOT_VERIFIED (the account's, still pending) or DOMAIN_NOT_HOSTED (field `domain`).
 */
export async function requireIdentityDomain(ctx: DomainContext, accountId: string, domain: string): Promise<void> {
  if (hostedDomains(ctx.config).includes(domain)) return;
  const own = await domainOf(ctx.db, accountId, domain);
  if (own?.status === 'verified') return;
  if (own) {
    throw new UnprocessableError(
      'DOMAIN_NOT_VERIFIED',
      `The domain ${domain} is not verified yet: publish its DNS records, then POST /api/email/domains/${domain}/verify.`,
      'domain',
    );
  }
  throw new UnprocessableError(
    'DOMAIN_NOT_HOSTED',
    `The domain ${domain} is not hosted by this service (EMAIL_DOMAINS: ${hostedDomains(ctx.config).join(', ')}, or a verified domain of the account).`,
    'domain',
  );
}

/**
 * The addresses among `list` (lower-cased) that this service delivers locally: on a configured domain or on a
 * verified custom domain (answers cached for CUSTOM_DOMAIN_TTL_MS, send-caches.ts). Mail to any other address
 * goes to the relay.
 */
export async function localAddresses(ctx: DomainContext, list: string[]): Promise<string[]> {
  const hosted = hostedDomains(ctx.config);
  const addresses = list.map(normalizeAddress).filter((a) => a.lastIndexOf('@') > 0);
  const domainOf = (a: string) => a.slice(a.lastIndexOf('@') + 1);
  const others = [...new Set(addresses.map(domainOf).filter((d) => !hosted.includes(d)))];
  const cache = ctx.emailCaches.customDomains;
  const verdict = new Map(others.map((d) => [d, cache.get(d)]));
  const unknown = others.filter((d) => verdict.get(d) === undefined);
  if (unknown.length > 0) {
    const verified = await verifiedAmong(ctx.db, unknown);
    for (const d of unknown) {
      verdict.set(d, verified.has(d));
      cache.set(d, verified.has(d));
    }
  }
  return addresses.filter((a) => hosted.includes(domainOf(a)) || verdict.get(domainOf(a)) === true);
}

/** At most this many values of one lookup are echoed in a check, each cut at {@link FOUND_MAX_CHARS}. */
const FOUND_MAX = 10;
const FOUND_MAX_CHARS = 512;

function shown(values: string[]): string[] {
  return values.slice(0, FOUND_MAX).map((v) => (v.length > FOUND_MAX_CHARS ? `${v.slice(0, FOUND_MAX_CHARS)}…` : v));
}

/** RFC 6376 3.2 / RFC 7489 6.4 tag list: `k=v; k=v` → map (names lower-cased, values with whitespace removed). */
export function tagList(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    if (!tags.has(name)) tags.set(name, part.slice(eq + 1).replace(/\s+/g, ''));
  }
  return tags;
}

type Lookup<T> = { ok: true; values: T[] } | { ok: false; missing: boolean; error: string };

async function lookup<T>(run: () => Promise<T[]>): Promise<Lookup<T>> {
  try {
    return { ok: true, values: await run() };
  } catch (err) {
    if (isNoRecord(err)) return { ok: false, missing: true, error: '' };
    const code = (err as { code?: string }).code ?? 'ERROR';
    return { ok: false, missing: false, error: `DNS lookup failed (${code}); try again later` };
  }
}

function failed(l: Extract<Lookup<unknown>, { ok: false }>, what: string): RecordCheck {
  return l.missing
    ? { status: 'missing', found: [], detail: `no ${what} record` }
    : { status: 'error', found: [], detail: l.error };
}

/** Checks one expected record against what the resolver (ctx.dns) answers. */
async function checkRecord(ctx: DomainContext, r: DnsRecordView): Promise<RecordCheck> {
  if (r.purpose === 'mx') {
    const l = await lookup(() => ctx.dns.resolveMx(r.name));
    if (!l.ok) return failed(l, 'MX');
    const found = l.values.map((m) => `${m.priority} ${m.exchange.toLowerCase().replace(/\.$/, '')}`);
    const want = mxHost(ctx);
    if (found.length === 0) return { status: 'missing', found, detail: 'no MX record' };
    return found.some((f) => f.split(' ')[1] === want)
      ? { status: 'ok', found: shown(found), detail: null }
      : { status: 'wrong', found: shown(found), detail: `no MX record points at ${want}` };
  }
  const l = await lookup(() => ctx.dns.resolveTxt(r.name));
  if (!l.ok) return failed(l, r.purpose.toUpperCase());
  const txt = l.values.map((chunks) => chunks.join(''));
  const found = shown(txt);
  if (r.purpose === 'spf') {
    const spf = txt.filter((v) => /^v=spf1(\s|$)/i.test(v.trim()));
    if (spf.length === 0) return { status: 'missing', found, detail: 'no TXT record starting with v=spf1' };
    if (spf.length > 1) {
      return { status: 'wrong', found, detail: 'more than one v=spf1 record (RFC 7208 4.5: permerror); keep one' };
    }
    return { status: 'ok', found, detail: null };
  }
  if (r.purpose === 'dkim') {
    const want = tagList(r.value).get('p');
    const keys = txt.map(tagList).filter((t) => t.has('p'));
    if (keys.length === 0) return { status: 'missing', found, detail: 'no DKIM key record (p=) at this name' };
    return keys.some((t) => t.get('p') === want)
      ? { status: 'ok', found, detail: null }
      : { status: 'wrong', found, detail: 'the published p= is not this domain’s DKIM public key' };
  }
  const dmarc = txt.filter((v) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(v.trim()));
  if (dmarc.length === 0) return { status: 'missing', found, detail: 'no TXT record starting with v=DMARC1' };
  if (dmarc.length > 1) return { status: 'wrong', found, detail: 'more than one v=DMARC1 record (RFC 7489 6.6.3)' };
  const p = tagList(dmarc[0]!).get('p')?.toLowerCase();
  return p === 'none' || p === 'quarantine' || p === 'reject'
    ? { status: 'ok', found, detail: null }
    : { status: 'wrong', found, detail: 'the DMARC record has no valid p= (none, quarantine or reject)' };
}

/**
 * POST /api/email/domains/{domain}/verify (issue 20 section 4): looks up the domain's four records through the
 * resolver (ctx.dns: DNS_SERVERS, timeout, cache) and answers each record with a `check`. When every check is `ok`,
 * a `pending` domain becomes `verified` and `email.domain.verified` is emitted (payload `{domain, verifiedAt}`);
 * from then on identities can be created on it and inbound SMTP accepts its mail. A lookup that fails (timeout,
 * SERVFAIL, malformed answer) is check `error` and leaves the domain as it was, never an HTTP 5xx. A verified
 * domain stays verified whatever a later check shows. Answers may come from the resolver's cache (up to 30 s for
 * a missing record).
 * @throws NotFoundError (another account's or an unknown domain).
 */
export async function verifyDomain(ctx: DomainContext, actor: Actor, domain: string): Promise<DomainView> {
  requireScope(actor, 'email');
  const d = domain.toLowerCase();
  const configured = hostedDomains(ctx.config).includes(d);
  const row = configured ? undefined : await findOwnDomain(ctx, actor.accountId, d);
  const records = await dnsRecordsFor(ctx, d);
  const checked = await Promise.all(records.map(async (r) => ({ ...r, check: await checkRecord(ctx, r) })));
  if (!row) return { domain: d, status: 'verified', configured: true, dnsRecords: checked };
  const allOk = checked.every((r) => r.check.status === 'ok');
  const now = ctx.clock.now();
  let status = row.status as DomainStatus;
  if (allOk && status === 'pending') {
    status = await ctx.events.transaction(async (tx, emit) => {
      const count = await markDomainVerified(tx, actor.accountId, d, now);
      if (count > 0) {
        await emit(actor.accountId, 'email.domain.verified', {
          event: 'email.domain.verified',
          data: { domain: d, verifiedAt: now.toISOString() },
        });
      }
      return 'verified' as const;
    });
    ctx.emailCaches.customDomains.delete(d);
  } else {
    await markDomainChecked(ctx.db, actor.accountId, d, now);
  }
  return { domain: d, status, configured: false, dnsRecords: checked };
}
