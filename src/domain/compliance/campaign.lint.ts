import { CARRIERS, SPECIAL_USECASES, subUsecaseBounds } from './compliance.enums.js';

/**
 * The pre-submission lint (issue 14; research file §8.4): every likely rejection cause of a campaign, each with a
 * stable code, the field, a message and a fix. The same rules decide the sandbox registry's carrier reviews
 * (src/infra/registry/sandbox.rules.ts), so a campaign without lint errors is approved by every sandbox carrier and
 * a campaign with one is rejected by the carriers the finding names, with the reason TCR/the MNOs give.
 *
 * Sources of the rules: research file §5.4 (TCR campaign fields; Twilio errors 30889 embedded phone/link flags vs
 * samples, 30893 sample content; Sinch campaign-fields: brand name, opt-out language, no public URL shorteners;
 * opt-in reply must carry brand, frequency, "Msg & data rates may apply", HELP and STOP), §4.8 (sub-use-case bounds,
 * "Brand does not qualify for submitted campaign use-case").
 */

/** error: a carrier (or the registry) rejects for it; warning: TCR asks for it but the spec's requests lack it. */
export type LintSeverity = 'error' | 'warning';

/** One finding of the lint. */
export interface LintFinding {
  /** Stable code, e.g. SAMPLE_MISSING_OPT_OUT. */
  code: string;
  severity: LintSeverity;
  /** Dotted request field, e.g. `sampleMessages.1`. */
  field: string;
  message: string;
  /** What to change so the cause goes away. */
  fix: string;
  /** TCR network ids of the carriers that reject for it (empty: none do, e.g. warnings or brand status). */
  networkIds: number[];
}

/** The campaign content the rules read (a draft: any field may be missing or malformed). */
export interface LintCampaign {
  usecase?: string;
  description?: string;
  sampleMessages?: string[];
  subscriberOptIn?: boolean;
  subscriberHelp?: boolean;
  messageFlow?: string | null;
  helpMessage?: string | null;
  optinMessage?: string | null;
  optoutMessage?: string | null;
  optoutKeywords?: string | null;
  embeddedLink?: boolean;
  embeddedPhone?: boolean;
  subUsecases?: string[];
}

/** The brand facts the rules read. */
export interface LintBrand {
  name: string;
  displayName: string | null;
  status: string;
  /** Why the brand does not qualify for the campaign's use case (qualification of brand.service.ts), or null. */
  usecaseBlockedReason: string | null;
}

/** The reason text a carrier gives when it rejects for a code (TCR / MNO wording). */
export const CARRIER_REASONS: Record<string, string> = {
  SUBSCRIBER_OPT_IN_NOT_CONFIRMED: 'Subscriber opt-in must be collected (subscriberOptIn).',
  SUBSCRIBER_HELP_NOT_CONFIRMED: 'A HELP keyword response must be implemented (subscriberHelp).',
  USECASE_NOT_QUALIFIED: 'Brand does not qualify for submitted campaign use-case.',
  SUBUSECASE_COUNT: 'Sub-use cases do not match the requirements of the campaign use-case.',
  DESCRIPTION_TOO_SHORT: 'Campaign description is insufficient: describe the purpose, sender and audience.',
  MESSAGE_FLOW_TOO_SHORT: 'Call-to-action / message flow is insufficient: describe how subscribers opt in.',
  SAMPLE_COUNT_BELOW_CARRIER_MINIMUM: 'Insufficient number of sample messages for the campaign use-case.',
  SAMPLE_MISSING_BRAND_NAME: 'Sample messages must identify the brand: brand name missing.',
  SAMPLE_MISSING_OPT_OUT: 'Opt-out language missing from sample messages (e.g. "Reply STOP to opt out").',
  SAMPLE_PUBLIC_URL_SHORTENER: 'Public URL shorteners are not allowed; use a branded domain.',
  EMBEDDED_LINK_FLAG_MISMATCH: 'Embedded link attribute does not match the sample messages.',
  EMBEDDED_PHONE_FLAG_MISMATCH: 'Embedded phone number attribute does not match the sample messages.',
  OPTIN_MESSAGE_MISSING_FREQUENCY: 'Opt-in confirmation must disclose the message frequency.',
  OPTIN_MESSAGE_MISSING_RATES: 'Opt-in confirmation must include "Msg & data rates may apply".',
  OPTIN_MESSAGE_MISSING_HELP: 'Opt-in confirmation must include HELP instructions.',
  OPTIN_MESSAGE_MISSING_STOP: 'Opt-in confirmation must include STOP (opt-out) instructions.',
};

/** Public URL shortener hosts (carriers filter or reject them; research file §5.4). */
export const PUBLIC_URL_SHORTENERS = [
  'bit.ly',
  'tinyurl.com',
  'goo.gl',
  't.co',
  'ow.ly',
  'is.gd',
  'buff.ly',
  'rebrand.ly',
  'cutt.ly',
  'shorturl.at',
  'tiny.cc',
  'bl.ink',
  't.ly',
  'rb.gy',
];

const T_MOBILE = 10035;

/**
 * Minimum number of sample messages a carrier asks for (TCR qualify `minMsgSamples`, per use case and MNO). The
 * spec's minimum is 2 (spec 8); T-Mobile reviews MIXED, LOW_VOLUME and special use cases by hand and asks for 3.
 * These are this service's values (TCR serves them per brand at runtime); README/docs/compliance.md says so.
 */
export function minMsgSamples(usecase: string, networkId: number): number {
  const reviewed =
    usecase === 'MIXED' || usecase === 'LOW_VOLUME' || (SPECIAL_USECASES as readonly string[]).includes(usecase);
  return networkId === T_MOBILE && reviewed ? 3 : 2;
}

const ALL_CARRIERS = CARRIERS.map((c) => c.networkId);
const EMAIL = /[\w.+-]+@[\w-]+(\.[\w-]+)+/g;
const URL =
  /\bhttps?:\/\/\S+|\bwww\.[\w-]+\.\S+|\b[\w-]+(\.[\w-]+)*\.(com|net|org|io|co|us|ly|me|app|info|biz|gl|gd|at|cc|gy|example)(\/\S*)?/i;
const PHONE = /(?<![\w#])(\+?1[\s.-]?)?\(?\d{3}\)?[\s.-]?\d{3}[\s.-]?\d{4}(?!\d)/;
const OPT_OUT = /\b(stop|unsubscribe|opt[\s-]?out)\b/i;
const HELP = /\bhelp\b/i;
const STOP = /\bstop\b/i;
const RATES = /\b(msg|message)s?\s*(&|and)\s*data\s*rates\s*may\s*apply\b/i;
const FREQUENCY =
  /\b(msg|message)s?\s+frequency\s+varies\b|\b(\d+|one|two|three|four|five|ten)\s*(msgs?|messages?|texts?)\s*(\/|per|a|each)\s*(day|week|wk|month|mo)\b|\brecurring\b/i;
const LEGAL_SUFFIX =
  /[,.]?\s+(l\.?l\.?c\.?|inc\.?|incorporated|corp\.?|corporation|co\.?|company|ltd\.?|limited|plc|llp)$/i;

/** Strings that name the brand in a message: its display name and legal name without suffix, and their first word. */
export function brandNameTokens(brand: Pick<LintBrand, 'name' | 'displayName'>): string[] {
  const out = new Set<string>();
  for (const n of [brand.displayName, brand.name]) {
    if (!n) continue;
    const bare = n.trim().replace(LEGAL_SUFFIX, '').trim();
    if (bare.length >= 2) out.add(bare.toLowerCase());
    const first = bare.split(/\s+/)[0] ?? '';
    if (first.length >= 3) out.add(first.toLowerCase());
  }
  return [...out];
}

/** Hosts of public URL shorteners that `text` links to. */
export function shortenersIn(text: string): string[] {
  const lower = text.toLowerCase();
  return PUBLIC_URL_SHORTENERS.filter((h) => new RegExp(`(^|[\\s/(])${h.replace(/\./g, '\\.')}(/|\\b)`).test(lower));
}

/** Whether `text` carries a link (e-mail addresses are not links). */
export function hasLink(text: string): boolean {
  return URL.test(text.replace(EMAIL, ''));
}

/** Whether `text` carries a phone number. */
export function hasPhone(text: string): boolean {
  return PHONE.test(text);
}

function finding(
  code: string,
  field: string,
  message: string,
  fix: string,
  networkIds: number[] = ALL_CARRIERS,
  severity: LintSeverity = 'error',
): LintFinding {
  return { code, severity, field, message, fix, networkIds: severity === 'warning' ? [] : networkIds };
}

/**
 * The content rules: every likely rejection cause of `campaign` for `brand` (null when unknown), in a stable order
 * (consent, use case, texts, samples, flags, opt-in message, then warnings). Pure: reads nothing else.
 */
export function lintRules(campaign: LintCampaign, brand: LintBrand | null): LintFinding[] {
  const out: LintFinding[] = [];
  const samples = (campaign.sampleMessages ?? []).filter((s) => typeof s === 'string');
  const usecase = campaign.usecase;

  if (campaign.subscriberOptIn === false) {
    out.push(
      finding(
        'SUBSCRIBER_OPT_IN_NOT_CONFIRMED',
        'subscriberOptIn',
        'subscriberOptIn is false: every carrier requires collected opt-in consent.',
        'Collect opt-in consent (describe how in messageFlow) and set subscriberOptIn to true.',
      ),
    );
  }
  if (campaign.subscriberHelp === false) {
    out.push(
      finding(
        'SUBSCRIBER_HELP_NOT_CONFIRMED',
        'subscriberHelp',
        'subscriberHelp is false: every carrier requires a HELP keyword response.',
        'Answer HELP (see helpMessage) and set subscriberHelp to true.',
      ),
    );
  }
  if (brand && brand.status !== 'ACTIVE') {
    out.push(
      finding(
        'BRAND_NOT_ACTIVE',
        'brandId',
        `The brand is ${brand.status}; campaigns need an ACTIVE brand.`,
        'Wait for the identity decision, or fix the brand (GET …/feedback) and revet it.',
        [],
      ),
    );
  } else if (brand?.usecaseBlockedReason && usecase) {
    out.push(
      finding(
        'USECASE_NOT_QUALIFIED',
        'usecase',
        `${usecase}: ${brand.usecaseBlockedReason}`,
        'Pick a use case GET /compliance/brands/{id}/qualify lists as qualifying, or complete the vetting it needs.',
      ),
    );
  }
  if (usecase) {
    const subs = campaign.subUsecases ?? [];
    const { min, max } = subUsecaseBounds(usecase);
    if (subs.length < min || subs.length > max) {
      out.push(
        finding(
          'SUBUSECASE_COUNT',
          'subUsecases',
          max === 0
            ? `${usecase} takes no subUsecases; got ${subs.length}.`
            : `${usecase} needs ${min} to ${max} subUsecases; got ${subs.length}.`,
          max === 0 ? 'Remove subUsecases, or use MIXED.' : `Declare ${min}–${max} sub-use cases the messages carry.`,
        ),
      );
    }
  }
  if (typeof campaign.description === 'string' && campaign.description.trim().length < 40) {
    out.push(
      finding(
        'DESCRIPTION_TOO_SHORT',
        'description',
        `description has ${campaign.description.trim().length} characters; at least 40 are needed.`,
        'Say who sends, to whom, what and why, in 40 to 4096 characters.',
      ),
    );
  }
  if (typeof campaign.messageFlow === 'string' && campaign.messageFlow.trim().length < 40) {
    out.push(
      finding(
        'MESSAGE_FLOW_TOO_SHORT',
        'messageFlow',
        `messageFlow has ${campaign.messageFlow.trim().length} characters; at least 40 are needed.`,
        'Describe every way subscribers opt in (web form URL, keyword, paper form) in 40 to 2048 characters.',
      ),
    );
  }
  if (usecase) {
    const short = CARRIERS.filter((c) => samples.length < minMsgSamples(usecase, c.networkId));
    if (short.length > 0) {
      const need = Math.max(...short.map((c) => minMsgSamples(usecase, c.networkId)));
      out.push(
        finding(
          'SAMPLE_COUNT_BELOW_CARRIER_MINIMUM',
          'sampleMessages',
          `${short.map((c) => c.name).join(', ')} ask for at least ${need} sample messages for ${usecase}; got ${samples.length}.`,
          `Add sample messages up to ${need} (at most 5), one per kind of message sent.`,
          short.map((c) => c.networkId),
        ),
      );
    }
  }
  if (brand && samples.length > 0) {
    const tokens = brandNameTokens(brand);
    if (!samples.some((s) => tokens.some((t) => s.toLowerCase().includes(t)))) {
      out.push(
        finding(
          'SAMPLE_MISSING_BRAND_NAME',
          'sampleMessages',
          `No sample message names the brand (${brand.displayName ?? brand.name}).`,
          `Start messages with the brand name, e.g. "${brand.displayName ?? brand.name}: …".`,
        ),
      );
    }
  }
  if (samples.length > 0) {
    const optOutWords = (campaign.optoutKeywords ?? '').split(',').filter(Boolean);
    const optOut = (s: string) => OPT_OUT.test(s) || optOutWords.some((k) => new RegExp(`\\b${k}\\b`, 'i').test(s));
    if (!samples.some(optOut)) {
      out.push(
        finding(
          'SAMPLE_MISSING_OPT_OUT',
          'sampleMessages',
          'No sample message carries opt-out language.',
          'End at least the first message with "Reply STOP to opt out".',
        ),
      );
    }
  }
  samples.forEach((s, i) => {
    const hosts = shortenersIn(s);
    if (hosts.length > 0) {
      out.push(
        finding(
          'SAMPLE_PUBLIC_URL_SHORTENER',
          `sampleMessages.${i}`,
          `Sample ${i + 1} links through a public URL shortener (${hosts.join(', ')}).`,
          'Link to your own domain (or a branded short domain) instead.',
        ),
      );
    }
  });
  if (samples.length > 0) {
    const linked = samples.some(hasLink);
    if (linked && campaign.embeddedLink !== true) {
      out.push(
        finding(
          'EMBEDDED_LINK_FLAG_MISMATCH',
          'embeddedLink',
          'A sample message carries a link but embeddedLink is false.',
          'Set embeddedLink to true, or remove links from the messages.',
        ),
      );
    } else if (!linked && campaign.embeddedLink === true) {
      out.push(
        finding(
          'EMBEDDED_LINK_FLAG_MISMATCH',
          'embeddedLink',
          'embeddedLink is true but no sample message carries a link.',
          'Add a sample with the kind of link you send, or set embeddedLink to false.',
        ),
      );
    }
    const phoned = samples.some(hasPhone);
    if (phoned && campaign.embeddedPhone !== true) {
      out.push(
        finding(
          'EMBEDDED_PHONE_FLAG_MISMATCH',
          'embeddedPhone',
          'A sample message carries a phone number but embeddedPhone is false.',
          'Set embeddedPhone to true, or remove phone numbers from the messages.',
        ),
      );
    } else if (!phoned && campaign.embeddedPhone === true) {
      out.push(
        finding(
          'EMBEDDED_PHONE_FLAG_MISMATCH',
          'embeddedPhone',
          'embeddedPhone is true but no sample message carries a phone number.',
          'Add a sample with the phone number you send, or set embeddedPhone to false.',
        ),
      );
    }
  }
  const optin = campaign.optinMessage;
  if (typeof optin === 'string') {
    const checks: [string, RegExp, string, string][] = [
      [
        'OPTIN_MESSAGE_MISSING_FREQUENCY',
        FREQUENCY,
        'the message frequency',
        'e.g. "Up to 4 msgs/month" or "Msg frequency varies"',
      ],
      ['OPTIN_MESSAGE_MISSING_RATES', RATES, '"Msg & data rates may apply"', 'add "Msg & data rates may apply"'],
      ['OPTIN_MESSAGE_MISSING_HELP', HELP, 'HELP instructions', 'add "Reply HELP for help"'],
      ['OPTIN_MESSAGE_MISSING_STOP', STOP, 'STOP instructions', 'add "Reply STOP to cancel"'],
    ];
    for (const [code, re, what, fix] of checks) {
      if (!re.test(optin)) {
        out.push(finding(code, 'optinMessage', `optinMessage does not state ${what}.`, `In optinMessage, ${fix}.`));
      }
    }
  }
  // Warnings: TCR asks for these, but the spec's requests do not carry them, so carriers here do not reject.
  if (samples.length > 0 && !samples.some((s) => HELP.test(s))) {
    out.push(
      finding(
        'SAMPLE_MISSING_HELP',
        'sampleMessages',
        'No sample message mentions HELP.',
        'Mention HELP in one message, e.g. "Reply HELP for help".',
        [],
        'warning',
      ),
    );
  }
  const missing: [keyof LintCampaign, string, string][] = [
    ['messageFlow', 'MESSAGE_FLOW_MISSING', 'Describe how subscribers opt in (TCR messageFlow, 40–2048 characters).'],
    [
      'optinMessage',
      'OPTIN_MESSAGE_MISSING',
      'Give the opt-in confirmation with brand, frequency, rates, HELP and STOP.',
    ],
    ['optoutMessage', 'OPTOUT_MESSAGE_MISSING', 'Give the confirmation sent after STOP.'],
    ['helpMessage', 'HELP_MESSAGE_MISSING', 'Give the reply to HELP with the brand and a contact.'],
  ];
  for (const [field, code, fix] of missing) {
    if (campaign[field] === undefined || campaign[field] === null) {
      out.push(finding(code, field, `${field} is missing; TCR asks for it.`, fix, [], 'warning'));
    }
  }
  return out;
}

/** The predicted (sandbox: actual) decision of one carrier from the findings. */
export interface CarrierPrediction {
  networkId: number;
  carrier: string;
  wouldApprove: boolean;
  rejectionCode: string | null;
  rejectionReason: string | null;
}

/** The first error finding that names `networkId`, as that carrier's rejection; null when it approves. */
export function carrierRejection(findings: LintFinding[], networkId: number): { code: string; reason: string } | null {
  const f = findings.find((x) => x.severity === 'error' && x.networkIds.includes(networkId));
  return f ? { code: f.code, reason: CARRIER_REASONS[f.code] ?? f.message } : null;
}

/** Per-carrier predictions of {@link carrierRejection}, in carrier order. */
export function predictCarriers(findings: LintFinding[]): CarrierPrediction[] {
  return CARRIERS.map((c) => {
    const r = carrierRejection(findings, c.networkId);
    return {
      networkId: c.networkId,
      carrier: c.name,
      wouldApprove: r === null,
      rejectionCode: r?.code ?? null,
      rejectionReason: r?.reason ?? null,
    };
  });
}
