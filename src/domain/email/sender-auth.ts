import type { Readable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import { authenticate } from 'mailauth';
import { getDomain } from 'tldts';
import type { DnsResolver } from './dns.port.js';
// mailauth's header scan without its per-byte array copies (issue 24): mailauth-header-scan.ts.
import './mailauth-header-scan.js';

/**
 * Sender authentication of inbound mail (issue 20 section 1; docs/email.md "Sender authentication"): SPF (RFC 7208),
 * DKIM (RFC 6376), DMARC (RFC 7489) and ARC (RFC 8617) checked by `mailauth` through the service's one DNS resolver,
 * reduced to the verdicts stored on the message, the RFC 8601 Authentication-Results header, the DMARC disposition
 * at SMTP time and whether the sender counts as *authenticated*, which decides what an agent may do.
 */

/** mailauth's verdict words (RFC 8601 2.7 result values). */
export const AUTH_VERDICTS = [
  'pass',
  'fail',
  'softfail',
  'neutral',
  'none',
  'temperror',
  'permerror',
  'policy',
] as const;
export type AuthVerdict = (typeof AUTH_VERDICTS)[number];

/** How a sender was authenticated (null: it was not). */
export type AuthenticatedBy = 'dmarc' | 'spf' | 'dkim' | 'local';

/** What is stored on an inbound message as `authentication` (REST, GraphQL, `email.received`). */
export interface SenderAuthentication {
  spf: AuthVerdict;
  dkim: AuthVerdict;
  dmarc: AuthVerdict;
  arc: AuthVerdict;
  /**
   * The sender is authenticated: DMARC `pass`; or, for a From domain without a DMARC record, an SPF or DKIM `pass`
   * aligned (relaxed, organisational domain) with the From domain; or the mail never left the service (local
   * delivery from one of its identities).
   */
  authenticated: boolean;
  authenticatedBy: AuthenticatedBy | null;
}

/** What the SMTP listener does with the message after DATA. */
export type DmarcDisposition = 'accept' | 'quarantine' | 'reject';

/** The outcome of checking one message. */
export interface SenderAuthOutcome {
  authentication: SenderAuthentication;
  /** The RFC 8601 Authentication-Results header value (`authserv-id; method=result …`), without the field name. */
  authenticationResults: string;
  /**
   * RFC 7489 6.6.4 / 6.7: `reject` when DMARC failed under `p=reject` (and `pct` sampled it), `quarantine` under
   * `p=quarantine` (or a `p=reject` message that `pct` sampled out), else `accept`.
   */
  disposition: DmarcDisposition;
}

/** The system labels a message gets from its authentication: `spam` (quarantined), `unauthenticated`. */
export function authLabels(outcome: Pick<SenderAuthOutcome, 'authentication' | 'disposition'>): string[] {
  return [
    ...(outcome.disposition === 'quarantine' ? ['spam'] : []),
    ...(outcome.authentication.authenticated ? [] : ['unauthenticated']),
  ];
}

/** The SMTP session facts SPF needs (RFC 7208 4.1). */
export interface SmtpPeer {
  /** Client IP address. */
  ip: string;
  /** EHLO/HELO name. */
  helo: string;
  /** MAIL FROM address ('' for the null reverse-path). */
  mailFrom: string;
}

/** Options of {@link authenticateSender}. */
export interface SenderAuthOptions {
  resolver: DnsResolver;
  /** The authserv-id of the Authentication-Results header (RFC 8601 2.5): our public SMTP host name. */
  authServId: string;
  /** Overall deadline in ms: a check still running then yields `temperror` for every verdict not known. */
  timeoutMs: number;
  /**
   * When the deadline starts counting (default: at once). For a message read from a stream as it arrives (SMTP
   * DATA), the end of the data, so a slow client does not eat into the DNS checks' time.
   */
  deadlineFrom?: Promise<unknown>;
  /** [0, 1) sampler for DMARC `pct` (default Math.random). */
  random?: () => number;
}

const asVerdict = (v: unknown): AuthVerdict =>
  typeof v === 'string' && (AUTH_VERDICTS as readonly string[]).includes(v) ? (v as AuthVerdict) : 'none';

/** Domains whose organisational domain {@link orgDomain} remembers (a pure function of the name), most recent first. */
const ORG_DOMAIN_MEMO_ENTRIES = 1_000;
const orgDomains = new LRUCache<string, string>({ max: ORG_DOMAIN_MEMO_ENTRIES });

/**
 * The organisational domain (public-suffix list, private suffixes included, as mailauth aligns). Remembered per
 * name: the same From and MAIL FROM domains recur in every message of a sender (two tldts walks per message).
 */
function orgDomain(domain: string): string {
  const known = orgDomains.get(domain);
  if (known !== undefined) return known;
  const d = domain.toLowerCase().replace(/\.$/, '');
  const org = getDomain(d, { allowIcannDomains: true, allowPrivateDomains: true }) ?? d;
  orgDomains.set(domain, org);
  return org;
}

/** The verdicts and header when the check ran out of time: every verdict `temperror`. */
function timedOut(authServId: string): SenderAuthOutcome {
  return {
    authentication: {
      spf: 'temperror',
      dkim: 'temperror',
      dmarc: 'temperror',
      arc: 'temperror',
      authenticated: false,
      authenticatedBy: null,
    },
    authenticationResults: `${authServId}; spf=temperror (timeout); dkim=temperror (timeout); dmarc=temperror (timeout); arc=temperror (timeout)`,
    disposition: 'accept',
  };
}

/**
 * Checks SPF (client IP, HELO, MAIL FROM), DKIM, DMARC and ARC of `message` (RFC 5322 bytes, whole or as a stream
 * read as it arrives; mailauth hashes the body as it streams and keeps only the header) with mailauth, every
 * DNS lookup through `opts.resolver` (its timeout bounds each lookup; `opts.timeoutMs` bounds the whole check, so
 * a dead or slow resolver gives `temperror` and never a hung SMTP session).
 * - `dkim` is `pass` when any signature passes, else the first signature's verdict, `none` without signatures;
 * - DMARC `fail` under `p=reject` is `reject` when a draw below `pct`/100 samples it (RFC 7489 6.6.4), otherwise
 *   the next policy down, `quarantine`; under `p=quarantine` sampled `quarantine`, otherwise `accept`.
 * Never throws: an internal error yields `temperror` verdicts.
 */
export async function authenticateSender(
  message: Buffer | NodeJS.ReadableStream,
  peer: SmtpPeer,
  opts: SenderAuthOptions,
): Promise<SenderAuthOutcome> {
  const resolver = (name: string, rrtype: string) =>
    opts.resolver.resolve(name, rrtype as Parameters<DnsResolver['resolve']>[1]) as Promise<string[][] | string[]>;
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  try {
    // The check or the deadline (undefined), whichever comes first: one promise, not a race of two (issue 24).
    const result = await new Promise<MailauthResult | undefined>((resolve, reject) => {
      const arm = () => {
        if (!settled) timer = setTimeout(() => resolve(undefined), opts.timeoutMs);
      };
      if (opts.deadlineFrom) opts.deadlineFrom.then(arm, arm);
      else arm();
      authenticate(message as Buffer | Readable, {
        ip: peer.ip,
        helo: peer.helo || peer.ip,
        sender: peer.mailFrom,
        mta: opts.authServId,
        resolver,
        disableBimi: true,
      }).then(resolve, reject);
    });
    if (!result) return timedOut(opts.authServId);
    return summarise(result, opts);
  } catch {
    return timedOut(opts.authServId);
  } finally {
    settled = true;
    clearTimeout(timer);
  }
}

type MailauthResult = Awaited<ReturnType<typeof authenticate>>;

function summarise(result: MailauthResult, opts: SenderAuthOptions): SenderAuthOutcome {
  const spf = result.spf ? asVerdict(result.spf.status?.result) : 'none';
  const signatures = result.dkim?.results ?? [];
  const dkimPass = signatures.filter((s) => s.status?.result === 'pass');
  const dkim: AuthVerdict =
    dkimPass.length > 0 ? 'pass' : signatures[0] ? asVerdict(signatures[0].status?.result) : 'none';
  const dmarc = result.dmarc ? asVerdict(result.dmarc.status?.result) : 'none';
  const arc = result.arc ? asVerdict(result.arc.status?.result) : 'none';

  const fromDomains = (result.dkim?.headerFrom ?? []).map((a) => a.split('@').pop() ?? '').filter(Boolean);
  const fromDomain = fromDomains.length === 1 ? orgDomain(fromDomains[0]!) : undefined;
  let authenticatedBy: AuthenticatedBy | null = null;
  if (fromDomain !== undefined) {
    if (dmarc === 'pass') authenticatedBy = 'dmarc';
    else if (dmarc === 'none') {
      const spfDomain = result.spf && spf === 'pass' ? (result.spf as { domain?: string }).domain : undefined;
      if (spfDomain && orgDomain(spfDomain) === fromDomain) authenticatedBy = 'spf';
      else if (dkimPass.some((s) => s.signingDomain && orgDomain(s.signingDomain) === fromDomain)) {
        authenticatedBy = 'dkim';
      }
    }
  }

  let disposition: DmarcDisposition = 'accept';
  if (result.dmarc && dmarc === 'fail') {
    const policy = String((result.dmarc as { policy?: string }).policy ?? 'none').toLowerCase();
    const pct = (result.dmarc as { pct?: number }).pct;
    const sampled = (opts.random ?? Math.random)() * 100 < (typeof pct === 'number' ? pct : 100);
    if (policy === 'reject') disposition = sampled ? 'reject' : 'quarantine';
    else if (policy === 'quarantine' && sampled) disposition = 'quarantine';
  }

  const header = /^Authentication-Results: ([\s\S]*?)\r\n(?![ \t])/m.exec(result.headers)?.[1];
  return {
    authentication: { spf, dkim, dmarc, arc, authenticated: authenticatedBy !== null, authenticatedBy },
    authenticationResults: (header ?? `${opts.authServId}; none`).replace(/\r\n[ \t]+/g, ' ').trim(),
    disposition,
  };
}

/**
 * The authentication of mail delivered locally from one of the service's identities to another (the outbound
 * path hands it to the inbound path in process): it never crossed a network, and its sender is the identity that
 * wrote it, so it counts as authenticated (`authenticatedBy: 'local'`). SPF/DKIM/DMARC/ARC were not evaluated
 * (`none`); the header says so with RFC 8601's `auth` method (2.7.4), naming the identity.
 */
export function localDeliveryAuthentication(fromAddress: string, authServId: string): SenderAuthOutcome {
  return {
    authentication: {
      spf: 'none',
      dkim: 'none',
      dmarc: 'none',
      arc: 'none',
      authenticated: true,
      authenticatedBy: 'local',
    },
    authenticationResults: `${authServId}; auth=pass (delivered within the service) smtp.auth=${fromAddress}`,
    disposition: 'accept',
  };
}

/** The stored `authentication` JSON of a message as its view (null on outbound mail or when never checked). */
export function authenticationView(stored: unknown): SenderAuthentication | null {
  if (typeof stored !== 'object' || stored === null) return null;
  const a = stored as Record<string, unknown>;
  return {
    spf: asVerdict(a.spf),
    dkim: asVerdict(a.dkim),
    dmarc: asVerdict(a.dmarc),
    arc: asVerdict(a.arc),
    authenticated: a.authenticated === true,
    authenticatedBy: (['dmarc', 'spf', 'dkim', 'local'] as const).find((b) => b === a.authenticatedBy) ?? null,
  };
}

/** Whether the stored `authentication` JSON of a message says its sender is authenticated. */
export function isAuthenticated(authentication: unknown): boolean {
  return (
    typeof authentication === 'object' &&
    authentication !== null &&
    (authentication as { authenticated?: unknown }).authenticated === true
  );
}
