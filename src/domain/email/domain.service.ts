import type { AppContext } from '../../app-context.js';
import type { EmailDomain } from '../../generated/prisma/client.js';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { ConflictError, NotFoundError, UnprocessableError } from '../errors.js';
import { deleteDkimKey, dkimRecordValue, ensureDkimKey } from './dkim.service.js';
import { hostedDomains, normalizeAddress } from './mail.rules.js';
import { smtpEndpoint } from './smtp-credentials.service.js';

/** `pending` until its DNS records verify; configured domains (EMAIL_DOMAINS) are `verified` by configuration. */
export type DomainStatus = 'pending' | 'verified';

/** One DNS record a domain owner publishes (issue 20 section 4). */
export interface DnsRecordView {
  type: 'MX' | 'TXT';
  /** Owner name of the record (fully qualified, no trailing dot). */
  name: string;
  /** Record data as entered at a DNS provider (MX: `<preference> <host>`). */
  value: string;
  /** `mx` (inbound mail), `spf` (RFC 7208), `dkim` (RFC 6376), `dmarc` (RFC 7489). */
  purpose: 'mx' | 'spf' | 'dkim' | 'dmarc';
  /** Present in the answer of verify: what the resolver returned and whether it fits. */
  check?: RecordCheck;
}

/** Result of checking one record through the resolver. */
export interface RecordCheck {
  /** `ok`; `missing` (no such record); `wrong` (records there, none fits); `error` (the lookup failed: try later). */
  status: 'ok' | 'missing' | 'wrong' | 'error';
  /** The values found (TXT strings joined, MX as `<preference> <host>`), at most 10, each cut at 512 chars. */
  found: string[];
  /** Why it is not ok, in words; null when ok. */
  detail: string | null;
}

/** A domain and the records it needs. */
export interface DomainView {
  domain: string;
  status: DomainStatus;
  /** Whether it is one of EMAIL_DOMAINS (shared by every account) rather than the account's own. */
  configured: boolean;
  dnsRecords: DnsRecordView[];
}

/** DMARC policy the records propose (RFC 7489 6.3): quarantine what fails, relaxed alignment. */
export const PROPOSED_DMARC = 'v=DMARC1; p=quarantine; adkim=r; aspf=r';

/** MX preference of the proposed record. */
const MX_PREFERENCE = 10;

/** The host name MX records point at and SPF names: SMTP_PUBLIC_HOST (identities' smtpHost). */
export function mxHost(ctx: AppContext): string {
  return smtpEndpoint(ctx).smtpHost.toLowerCase();
}

/** SPF record the records propose (RFC 7208): the MX hosts, the relay's host when one is set, soft-fail the rest. */
export function proposedSpf(ctx: AppContext): string {
  const relay = ctx.config.SMTP_RELAY_URL ? new URL(ctx.config.SMTP_RELAY_URL).hostname : undefined;
  return ['v=spf1', 'mx', ...(relay && relay !== mxHost(ctx) ? [`a:${relay}`] : []), '~all'].join(' ');
}

/** The four records of `domain` (lower-case): MX, SPF TXT, DKIM TXT at `<selector>._domainkey`, DMARC at `_dmarc`. */
export async function dnsRecordsFor(ctx: AppContext, domain: string): Promise<DnsRecordView[]> {
  const key = await ensureDkimKey(ctx, domain);
  return [
    { type: 'MX', name: domain, value: `${MX_PREFERENCE} ${mxHost(ctx)}`, purpose: 'mx' },
    { type: 'TXT', name: domain, value: proposedSpf(ctx), purpose: 'spf' },
    { type: 'TXT', name: `${key.selector}._domainkey.${domain}`, value: dkimRecordValue(key), purpose: 'dkim' },
    { type: 'TXT', name: `_dmarc.${domain}`, value: PROPOSED_DMARC, purpose: 'dmarc' },
  ];
}

async function view(ctx: AppContext, domain: string, status: DomainStatus, configured: boolean): Promise<DomainView> {
  return { domain, status, configured, dnsRecords: await dnsRecordsFor(ctx, domain) };
}

/**
 * GET /api/email/domains (issue 20 section 4): the configured domains (EMAIL_DOMAINS, `verified`) then the
 * account's own, oldest first, each with the records to publish. @returns `{domains}`.
 */
export async function listDomains(ctx: AppContext, actor: Actor): Promise<DomainView[]> {
  requireScope(actor, 'email');
  const own = await ctx.db.emailDomain.findMany({
    where: { accountId: actor.accountId },
    orderBy: [{ createdAt: 'asc' }, { domain: 'asc' }],
  });
  return Promise.all([
    ...hostedDomains(ctx.config).map((d) => view(ctx, d, 'verified', true)),
    ...own.map((d) => view(ctx, d.domain, d.status as DomainStatus, false)),
  ]);
}

/** The account's own custom domain. @throws NotFoundError (another account's domain answers the same). */
export async function findOwnDomain(ctx: AppContext, accountId: string, domain: string): Promise<EmailDomain> {
  const row = await ctx.db.emailDomain.findFirst({ where: { domain: domain.toLowerCase(), accountId } });
  if (!row) throw new NotFoundError('Email domain', domain, 'domain');
  return row;
}

/** GET one domain of the account (configured or own). @throws NotFoundError. */
export async function getDomain(ctx: AppContext, actor: Actor, domain: string): Promise<DomainView> {
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
export async function addDomain(ctx: AppContext, actor: Actor, domain: string): Promise<DomainView> {
  requireScope(actor, 'email');
  const d = domain.toLowerCase();
  const taken = () => new ConflictError('DOMAIN_TAKEN', `The domain ${d} is already in use.`, 'domain');
  if (hostedDomains(ctx.config).includes(d)) throw taken();
  try {
    await ctx.db.emailDomain.create({
      data: { domain: d, accountId: actor.accountId, status: 'pending', createdAt: ctx.clock.now() },
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
export async function deleteDomain(ctx: AppContext, actor: Actor, domain: string): Promise<void> {
  requireScope(actor, 'email');
  const row = await findOwnDomain(ctx, actor.accountId, domain);
  const inUse = await ctx.db.emailIdentity.count({ where: { domain: row.domain, status: 'active' } });
  if (inUse > 0) {
    throw new UnprocessableError(
      'DOMAIN_IN_USE',
      `The domain ${row.domain} has ${inUse} active identities; deprovision them first.`,
      'domain',
    );
  }
  await ctx.db.emailDomain.deleteMany({ where: { domain: row.domain, accountId: actor.accountId } });
  await deleteDkimKey(ctx, row.domain);
}

/**
 * The rule of identity creation (issue 20 section 4): `domain` must be configured (EMAIL_DOMAINS) or a custom domain
 * of the account that is verified.
 * @throws UnprocessableError DOMAIN_NOT_VERIFIED (the account's, still pending) or DOMAIN_NOT_HOSTED (field `domain`).
 */
export async function requireIdentityDomain(ctx: AppContext, accountId: string, domain: string): Promise<void> {
  if (hostedDomains(ctx.config).includes(domain)) return;
  const own = await ctx.db.emailDomain.findFirst({ where: { domain, accountId } });
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
 * verified custom domain. Mail to any other address goes to the relay.
 */
export async function localAddresses(ctx: AppContext, list: string[]): Promise<string[]> {
  const hosted = hostedDomains(ctx.config);
  const addresses = list.map(normalizeAddress).filter((a) => a.lastIndexOf('@') > 0);
  const domainOf = (a: string) => a.slice(a.lastIndexOf('@') + 1);
  const others = [...new Set(addresses.map(domainOf).filter((d) => !hosted.includes(d)))];
  const verified =
    others.length > 0
      ? new Set(
          (
            await ctx.db.emailDomain.findMany({
              where: { domain: { in: others }, status: 'verified' },
              select: { domain: true },
            })
          ).map((r) => r.domain),
        )
      : new Set<string>();
  return addresses.filter((a) => hosted.includes(domainOf(a)) || verified.has(domainOf(a)));
}
