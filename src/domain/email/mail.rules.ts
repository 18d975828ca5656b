/**
 * Pure mail rules of the email area: address syntax (RFC 5321), subjects and threading headers (RFC 5322 3.6.4),
 * and when an agent must not answer (RFC 3834).
 */

import { hostname } from 'node:os';

/**
 * The service's mail host name: SMTP_PUBLIC_HOST, else the machine's host name. Both SMTP listeners greet with it
 * (banner, EHLO) and it is the authserv-id of the Authentication-Results headers the service writes (RFC 8601 2.5).
 */
export function mailHostName(config: { SMTP_PUBLIC_HOST?: string | undefined }): string {
  return config.SMTP_PUBLIC_HOST ?? machineName();
}

let machineNameRead: string | undefined;
/** The machine's host name, read once (a system call per inbound message was measurable: issue 24). */
function machineName(): string {
  machineNameRead ??= hostname();
  return machineNameRead;
}

/** RFC 5322 `atext`: the characters of a dot-atom label. */
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]";
/** RFC 5321 4.1.2 Dot-string: atoms separated by single dots, no leading/trailing dot. */
export const DOT_ATOM = new RegExp(`^${ATEXT}+(?:\\.${ATEXT}+)*$`);
/** RFC 5321 4.5.3.1.1: a local part is at most 64 octets. */
export const MAX_LOCAL_PART_OCTETS = 64;
/** RFC 1035 host name: labels of letters, digits and inner hyphens, 1–63 chars each, 253 chars in all. */
export const DOMAIN_NAME =
  /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * The domains this service hosts mail for (config EMAIL_DOMAINS, default EMAIL_DOMAIN alone), lower-cased.
 * Identities exist only on these, and only mail to these is delivered locally; anything else goes to the relay.
 */
export function hostedDomains(config: { EMAIL_DOMAIN: string; EMAIL_DOMAINS?: string[] | undefined }): string[] {
  return config.EMAIL_DOMAINS ?? [config.EMAIL_DOMAIN.toLowerCase()];
}

/** Whether `address` (any case) is on one of {@link hostedDomains}. */
export function isHostedAddress(
  config: { EMAIL_DOMAIN: string; EMAIL_DOMAINS?: string[] | undefined },
  address: string,
): boolean {
  const a = normalizeAddress(address);
  const at = a.lastIndexOf('@');
  return at > 0 && hostedDomains(config).includes(a.slice(at + 1));
}

/** Lower-cased, trimmed address (identities and senders are matched case-insensitively). */
export function normalizeAddress(address: string): string {
  return address.trim().toLowerCase();
}

const REPLY_PREFIX = /^\s*(?:re|aw|sv|fwd?)\s*(?:\[\d+\])?\s*:\s*/i;

/** The subject without any leading `Re:`/`AW:`/`SV:` prefixes (so replies never become `Re: Re: `). */
export function baseSubject(subject: string): string {
  let s = subject.trim();
  for (let i = 0; i < 20 && /^\s*(?:re|aw|sv)\s*(?:\[\d+\])?\s*:/i.test(s); i++) s = s.replace(REPLY_PREFIX, '');
  return s;
}

/** Spec 2.7: a reply's subject is the original subject prefixed with `Re: ` exactly once. */
export function replySubject(subject: string): string {
  return `Re: ${baseSubject(subject)}`;
}

/**
 * RFC 5322 3.6.4 `References` of a reply: the parent's References (or, lacking them, its In-Reply-To) followed by
 * the parent's Message-ID; at most `max` ids are kept (the first and the newest ones, as RFC 5322 suggests trimming).
 */
export function replyReferences(
  parent: { messageId: string; references: string[]; inReplyTo: string | null },
  max = 20,
): string[] {
  const base = parent.references.length > 0 ? parent.references : parent.inReplyTo ? [parent.inReplyTo] : [];
  const chain = [...base.filter((id) => id !== parent.messageId), parent.messageId];
  if (chain.length <= max) return chain;
  return [chain[0]!, ...chain.slice(chain.length - (max - 1))];
}

/** Splits a References/In-Reply-To header value into `<id>` tokens. */
export function messageIdsIn(value: string | string[] | undefined | null): string[] {
  if (!value) return [];
  const text = Array.isArray(value) ? value.join(' ') : value;
  return text.match(/<[^<>\s]+>/g) ?? [];
}

/** The facts about an inbound message that decide whether an agent may answer it. */
export interface AutoReplyFacts {
  /** Envelope MAIL FROM; '' for the null reverse-path `<>`. */
  returnPath: string;
  from: string;
  headers: Map<string, unknown> | Record<string, unknown>;
  contentType?: string;
}

function header(headers: AutoReplyFacts['headers'], name: string): string | undefined {
  const v = headers instanceof Map ? headers.get(name) : headers[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && 'value' in (v as object)) return String((v as { value: unknown }).value);
  return String(v);
}

/**
 * Why an agent must not answer this message, or undefined when it may (RFC 3834 section 2 and 3.1.8):
 * - `BOUNCE`: a delivery status report (`multipart/report`) or a sender named MAILER-DAEMON/postmaster;
 * - `EMPTY_RETURN_PATH`: MAIL FROM:<> (RFC 3834 3.1.8: never respond to it);
 * - `AUTO_SUBMITTED`: `Auto-Submitted` present with a value other than `no`;
 * - `MAILING_LIST`: `List-Id` present or `Precedence: bulk|junk|list`.
 */
export function autoReplyBlocker(facts: AutoReplyFacts): string | undefined {
  const local = facts.from.split('@')[0]?.toLowerCase() ?? '';
  if (facts.contentType?.toLowerCase().startsWith('multipart/report') || /^(mailer-daemon|postmaster)$/.test(local)) {
    return 'BOUNCE';
  }
  if (facts.returnPath.trim() === '') return 'EMPTY_RETURN_PATH';
  const auto = header(facts.headers, 'auto-submitted');
  if (auto !== undefined && auto.trim().split(';')[0]!.trim().toLowerCase() !== 'no') return 'AUTO_SUBMITTED';
  if (header(facts.headers, 'list-id') !== undefined) return 'MAILING_LIST';
  const precedence = header(facts.headers, 'precedence')?.trim().toLowerCase();
  if (precedence === 'bulk' || precedence === 'junk' || precedence === 'list') return 'MAILING_LIST';
  return undefined;
}

/** The subject of a forward: `Fwd: ` + the subject without earlier `Fwd:`/`Fw:` prefixes. */
export function forwardSubject(subject: string): string {
  let s = subject.trim();
  for (let i = 0; i < 20 && /^\s*fwd?\s*:/i.test(s); i++) s = s.replace(/^\s*fwd?\s*:\s*/i, '');
  return `Fwd: ${s}`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Subject, text and HTML of a forward (the common "Forwarded message" block of mail clients): the note written by
 * the forwarder, then the original's From, Date, Subject, To (and Cc) and its text; the HTML part likewise when
 * the note or the original has HTML.
 */
export function forwardContent(
  original: {
    from: string;
    to: string[];
    cc: string[];
    subject: string;
    body: string;
    html: string | null;
    sentAt: Date;
  },
  note: { body: string; html: string | null },
): { subject: string; body: string; html: string | null } {
  const head = [
    '---------- Forwarded message ---------',
    `From: ${original.from}`,
    `Date: ${original.sentAt.toUTCString()}`,
    `Subject: ${original.subject}`,
    `To: ${original.to.join(', ')}`,
    ...(original.cc.length > 0 ? [`Cc: ${original.cc.join(', ')}`] : []),
  ];
  const body = `${note.body ? `${note.body}\n\n` : ''}${head.join('\n')}\n\n${original.body}`;
  let html: string | null = null;
  if (note.html || original.html) {
    const noteHtml = note.html ?? (note.body ? `<p>${escapeHtml(note.body).replace(/\n/g, '<br>')}</p>` : '');
    const originalHtml = original.html ?? `<pre>${escapeHtml(original.body)}</pre>`;
    html = `${noteHtml}<div>${head.map(escapeHtml).join('<br>')}</div><br>${originalHtml}`;
  }
  return { subject: forwardSubject(original.subject), body, html };
}

/** Participants of a thread after adding `more`: lower-cased, first appearance order, no duplicates. */
export function mergeParticipants(current: string[], more: string[]): string[] {
  const out = [...current];
  for (const a of more.map(normalizeAddress)) if (a && !out.includes(a)) out.push(a);
  return out;
}
