import { z } from 'zod';
import { REPLY_MODE_DESCRIPTION, REPLY_MODES } from './email.schemas.js';
import { AUTH_VERDICTS } from './sender-auth.js';

/*
 * The shapes of the email nouns as the API shows them (identity, thread, message, attachment, agent, knowledge
 * document, SMTP credentials, domain), declared once (issue 23 step 3): the domain's view types are their
 * `z.output`, the REST routes answer with them as response schemas (and the OpenAPI document names them), and the
 * views in the services build exactly these. GraphQL types expose the same fields from the rows (Pothos
 * plugin-prisma objects over the Prisma models).
 */

/** Spec 2.6 shape of an identity (`smtpPass` is always null: no password is ever shown again). */
export const identityShape = z.object({
  id: z.string(),
  address: z.string(),
  localPart: z.string(),
  domain: z.string(),
  displayName: z.string().nullable(),
  agentId: z.string().nullable(),
  replyMode: z.enum(REPLY_MODES).describe(REPLY_MODE_DESCRIPTION),
  status: z.enum(['active', 'deprovisioning']),
  smtpHost: z.string(),
  smtpPort: z.number(),
  smtpUser: z.string(),
  smtpPass: z.null(),
  createdAt: z.string(),
});
/** Answer of POST /api/email/identities/{id}/smtp-credentials: the only time the password is shown. */
export const smtpCredentialsShape = z.object({
  smtpHost: z.string(),
  smtpPort: z.number(),
  smtpUser: z.string(),
  smtpPass: z.string().describe('The password; shown only in this answer (stored as a salted scrypt hash).'),
});
/** Spec 2.7 thread summary; `labels` are system and custom labels (issue 21 item 4). */
export const threadSummaryShape = z.object({
  threadId: z.string(),
  subject: z.string(),
  participants: z.array(z.string()),
  messageCount: z.number(),
  lastMessageAt: z.string(),
  labels: z.array(z.string()),
});
const verdict = z.enum(AUTH_VERDICTS);
/** State of the agent's answer to an inbound message (README "Agents"). */
export const agentAnswerShape = z.object({
  status: z.string(),
  reason: z.string().nullable(),
  attempts: z.number(),
  lastError: z.string().nullable(),
  replyMessageId: z.string().nullable(),
});
/** SPF/DKIM/DMARC/ARC verdicts of inbound mail and whether the sender is authenticated (sender-auth.ts). */
export const senderAuthenticationShape = z.object({
  spf: verdict,
  dkim: verdict,
  dmarc: verdict,
  arc: verdict,
  authenticated: z.boolean().describe('DMARC pass, or an aligned SPF/DKIM pass without DMARC, or local delivery.'),
  authenticatedBy: z.enum(['dmarc', 'spf', 'dkim', 'local']).nullable(),
});
/** An attachment as the API shows it (issue 21 item 2). `size` is the decoded size in bytes. */
export const attachmentShape = z.object({
  attachmentId: z.string(),
  filename: z.string().nullable(),
  contentType: z.string(),
  size: z.number().describe('Decoded size in bytes.'),
  inline: z.boolean(),
  contentId: z.string().nullable(),
});
/** Spec 2.7 message plus `direction`, delivery `status`/`statusDetail`, `agent` and the issue 21 fields. */
export const messageShape = z.object({
  messageId: z.string(),
  threadId: z.string(),
  from: z.string(),
  to: z.array(z.string()),
  subject: z.string(),
  body: z.string(),
  sentAt: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  inReplyTo: z.string().nullable(),
  references: z.array(z.string()),
  status: z.string(),
  statusDetail: z.string().nullable(),
  agent: agentAnswerShape.nullable(),
  authentication: senderAuthenticationShape
    .nullable()
    .describe('Sender authentication of inbound mail (mailauth verdicts); null on outbound mail.'),
  /** Cc addresses; bcc only on the identity's own outbound mail (never in a header), [] on inbound mail. */
  cc: z.array(z.string()),
  bcc: z.array(z.string()).describe('Only on the identity’s own sent mail; never in a header.'),
  replyTo: z.string().nullable(),
  html: z.string().nullable().describe('The HTML part, sanitised (no scripts, event handlers or javascript: URLs).'),
  extractedText: z.string().describe('The new text without quoted history and signature.'),
  attachments: z.array(attachmentShape),
  labels: z
    .array(z.string())
    .describe('System labels (received, sent, spam for DMARC quarantine, unauthenticated, bounced) and custom ones.'),
  /** 0 for mail stored before raw messages were kept. */
  size: z.number().describe('Size of the raw message in bytes.'),
});
/** Answer of send and reply (spec 4.4). `messageId` is the RFC 5322 Message-ID, angle brackets included. */
export const sentShape = z.object({ messageId: z.string(), threadId: z.string() });
/** An agent as the API shows it (spec 2.8). */
export const agentShape = z.object({
  id: z.string(),
  name: z.string(),
  systemPrompt: z.string(),
  textModel: z.string().nullable(),
  contextSources: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
/** A knowledge document of an agent. */
export const knowledgeDocumentShape = z.object({
  id: z.string(),
  agentId: z.string(),
  title: z.string(),
  content: z.string(),
  createdAt: z.string(),
});

/** Result of checking one DNS record through the resolver (`ok`, `missing`, `wrong`, `error`). */
export const recordCheckShape = z.object({
  /** `ok`; `missing` (no such record); `wrong` (records there, none fits); `error` (the lookup failed: try later). */
  status: z.enum(['ok', 'missing', 'wrong', 'error']),
  /** The values found (TXT strings joined, MX as `<preference> <host>`), at most 10, each cut at 512 chars. */
  found: z.array(z.string()),
  /** Why it is not ok, in words; null when ok. */
  detail: z.string().nullable(),
});
/** One DNS record a domain owner publishes (issue 20 section 4); `check` only in the answer of verify. */
export const dnsRecordShape = z.object({
  type: z.enum(['MX', 'TXT']),
  /** Owner name of the record (fully qualified, no trailing dot); `value` as entered at a DNS provider (MX: `<preference> <host>`). */
  name: z.string(),
  value: z.string(),
  /** `mx` (inbound mail), `spf` (RFC 7208), `dkim` (RFC 6376), `dmarc` (RFC 7489). */
  purpose: z.enum(['mx', 'spf', 'dkim', 'dmarc']),
  check: recordCheckShape.optional().describe('Only in the answer of verify.'),
});
/** A mail domain and the DNS records it needs. */
export const domainShape = z.object({
  domain: z.string(),
  status: z.enum(['pending', 'verified']),
  /** Whether it is one of EMAIL_DOMAINS (shared by every account) rather than the account's own. */
  configured: z.boolean(),
  dnsRecords: z.array(dnsRecordShape),
});
