import { z } from 'zod';
import { decimalInt } from '../validation.js';
import { DOMAIN_NAME, DOT_ATOM, MAX_LOCAL_PART_OCTETS } from './mail.rules.js';

/** Threads page size when `limit` is absent, and the largest accepted `limit` (README "Email"). */
export const THREADS_DEFAULT_LIMIT = 20;
export const THREADS_MAX_LIMIT = 100;
/** What the agent does with its answer (issue 21 item 3): `send` it (default) or leave it as a `draft` for a person. */
export const REPLY_MODES = ['send', 'draft'] as const;
export type ReplyMode = (typeof REPLY_MODES)[number];
/** Description of replyMode shared by both surfaces. */
export const REPLY_MODE_DESCRIPTION =
  'send (default): the agent’s answers go out; draft: each answer becomes a draft on the thread (createdBy agent) that a person reviews and sends, and mail from a sender that is not authenticated gets such a draft too (reviewReason SENDER_NOT_AUTHENTICATED) instead of nothing.';
/** Context sources an agent may draw on (spec 4.5). */
export const CONTEXT_SOURCES = ['sms', 'calls', 'knowledge'] as const;
export type ContextSource = (typeof CONTEXT_SOURCES)[number];

/** Largest plain-text body accepted by send/reply, in characters. */
export const MAX_BODY_CHARS = 100_000;

const localPart = z
  .string()
  .min(1)
  .refine((v) => Buffer.byteLength(v) <= MAX_LOCAL_PART_OCTETS, {
    message: `must be at most ${MAX_LOCAL_PART_OCTETS} octets (RFC 5321 4.5.3.1.1)`,
    params: { code: 'TOO_LONG' },
  })
  .refine((v) => DOT_ATOM.test(v), {
    message: "must be an RFC 5321 dot-atom (letters, digits, !#$%&'*+/=?^_`{|}~- and single inner dots)",
    params: { code: 'INVALID_FORMAT' },
  })
  .describe('Local part, an RFC 5321 dot-atom of at most 64 octets; stored lower-cased.');

const domain = z
  .string()
  .refine((v) => DOMAIN_NAME.test(v), { message: 'must be a DNS host name', params: { code: 'INVALID_FORMAT' } })
  .describe('Domain; default EMAIL_DOMAIN. Stored lower-cased.');

const displayName = z.string().trim().min(1).max(200);
const id = z.string().min(1).max(200);

/** Body of POST /api/email/identities and input of `createIdentity` (spec 4.4). */
export const createIdentityInput = z
  .object({
    localPart,
    domain: domain.nullish(),
    displayName: displayName.nullish().describe('Display name used in From headers.'),
    agentId: id.nullish().describe('Agent to assign; it must have a textModel.'),
    replyMode: z.enum(REPLY_MODES).optional().describe(REPLY_MODE_DESCRIPTION),
  })
  .strict();
/** Parsed createIdentityInput. */
export type CreateIdentityInput = z.output<typeof createIdentityInput>;

/** Body of PATCH /api/email/identities/{id} and input of `updateIdentity`; null clears a field. */
export const updateIdentityInput = z
  .object({
    displayName: displayName.nullable().optional(),
    agentId: id.nullable().optional().describe('null unassigns the agent.'),
    replyMode: z.enum(REPLY_MODES).optional().describe(REPLY_MODE_DESCRIPTION),
  })
  .strict();
/** Parsed updateIdentityInput. */
export type UpdateIdentityInput = z.output<typeof updateIdentityInput>;

export const address = z.string().trim().email().max(320);
/** A subject line (one line, at most 998 characters). */
export const subject = z
  .string()
  .max(998)
  .refine((v) => !/[\r\n]/.test(v), { message: 'must be one line', params: { code: 'INVALID_FORMAT' } })
  .describe('Subject (one header line, at most 998 characters).');
/** A plain-text body (at most MAX_BODY_CHARS). */
export const body = z.string().max(MAX_BODY_CHARS).describe('Plain-text body.');

/** Most recipients of one message, To, Cc and Bcc together (issue 21). */
export const MAX_RECIPIENTS = 50;
/** Most attachments of one message. */
export const MAX_ATTACHMENTS = 100;
/** Largest total of decoded attachment bytes of one message (25 MiB; issue 21). Over it: 413 ATTACHMENTS_TOO_LARGE. */
export const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;
/** Largest HTML body accepted by send/reply/forward, in characters. */
export const MAX_HTML_CHARS = 1_000_000;
/** Largest label, in characters (issue 21 item 4). */
export const MAX_LABEL_CHARS = 50;
/** Labels the service sets itself; a client cannot add or remove them. */
export const SYSTEM_LABELS = ['received', 'sent', 'spam', 'unauthenticated', 'bounced'] as const;

/** A list of recipient addresses (at most MAX_RECIPIENTS). */
export const recipients = z.array(address).max(MAX_RECIPIENTS);
const EMAIL_CHECK = z.string().email();
/** `to`: one address (spec 4.4) or a list of them; errors name `to` (a string) or `to.N` (a list). */
const toField = z
  .union([z.string(), z.array(z.string())])
  .superRefine((v, ctx) => {
    const list = typeof v === 'string' ? [v] : v;
    if (list.length === 0)
      ctx.addIssue({ code: 'custom', message: 'at least one recipient', params: { code: 'TOO_FEW' } });
    list.forEach((a, i) => {
      const path = typeof v === 'string' ? [] : [i];
      if (a.trim().length > 320) {
        ctx.addIssue({ code: 'custom', path, message: 'at most 320 characters', params: { code: 'TOO_LONG' } });
      } else if (!EMAIL_CHECK.safeParse(a.trim()).success) {
        ctx.addIssue({ code: 'custom', path, message: 'must be an email address', params: { code: 'INVALID_FORMAT' } });
      }
    });
  })
  .transform((v) => (typeof v === 'string' ? [v] : v).map((a) => a.trim()))
  .describe('Recipient address, or a list of them.');
const html = z.string().max(MAX_HTML_CHARS).describe('HTML body (sent as the text/html alternative).');

/** Whether `v` holds a C0 control character or DEL (NUL included). */
export function hasControl(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** One attachment of a sent message: `content` is standard base64 (RFC 4648 4; whitespace ignored). */
export const attachmentInput = z
  .object({
    filename: z
      .string()
      .min(1)
      .max(255)
      .refine((v) => !hasControl(v) && !v.includes('/') && !v.includes('\\'), {
        message: 'must not contain control characters or path separators',
        params: { code: 'INVALID_FORMAT' },
      }),
    contentType: z
      .string()
      .max(255)
      .regex(/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/, {
        message: 'must be a MIME type such as application/pdf (RFC 6838 4.2)',
      })
      .nullish()
      .transform((v) => v ?? 'application/octet-stream'),
    content: z
      .string()
      .transform((v) => v.replace(/\s+/g, ''))
      .refine((v) => v.length % 4 === 0 && BASE64.test(v), {
        message: 'must be base64 (RFC 4648 section 4)',
        params: { code: 'INVALID_BASE64' },
      }),
  })
  .strict();
/** Parsed attachmentInput. */
export type AttachmentInput = z.output<typeof attachmentInput>;

/** A custom label: lower-case letters, digits and `._:/-`, 1–50 characters; system labels are refused. */
export const label = z
  .string()
  .min(1)
  .max(MAX_LABEL_CHARS)
  .regex(/^[\p{Ll}\p{Lo}\p{N}][\p{Ll}\p{Lo}\p{N}._:/-]*$/u, {
    message: 'must be lower-case letters, digits and ._:/- (at most 50 characters)',
  })
  .refine((v) => !(SYSTEM_LABELS as readonly string[]).includes(v), {
    message: 'is a system label the service sets itself',
    params: { code: 'SYSTEM_LABEL' },
  });
const labels = z
  .array(label)
  .max(50)
  .transform((a) => [...new Set(a)]);

/** `body` or `html` must be there; checked even when other fields fail, so every problem is listed at once. */
function bodyOrHtml(v: unknown): boolean {
  const o = v as { body?: unknown; html?: unknown } | null;
  return typeof o !== 'object' || o === null || o.body !== undefined || o.html !== undefined;
}
const BODY_OR_HTML = {
  path: ['body'],
  message: 'body or html is required',
  params: { code: 'REQUIRED' },
  when: () => true,
};

/** Refinement: at most MAX_RECIPIENTS in to, cc and bcc together (field `to`, TOO_MANY_RECIPIENTS). */
export function recipientCount(
  v: { to?: string[] | undefined; cc?: string[] | undefined; bcc?: string[] | undefined },
  ctx: z.RefinementCtx,
) {
  const n = (v.to?.length ?? 0) + (v.cc?.length ?? 0) + (v.bcc?.length ?? 0);
  if (n > MAX_RECIPIENTS) {
    ctx.addIssue({
      code: 'custom',
      path: ['to'],
      message: `at most ${MAX_RECIPIENTS} recipients in all (to, cc and bcc together); got ${n}`,
      params: { code: 'TOO_MANY_RECIPIENTS' },
    });
  }
}

/** The send fields besides to/subject/body (cc, bcc, replyTo, html, attachments, labels). */
export const sendFields = {
  cc: recipients.optional().describe('Cc addresses.'),
  bcc: recipients.optional().describe('Bcc addresses: they get the mail and never appear in a header.'),
  replyTo: address.optional().describe('Reply-To address.'),
  html: html.optional(),
  attachments: z
    .array(attachmentInput)
    .max(MAX_ATTACHMENTS)
    .optional()
    .describe('Attachments, at most 100 and 25 MiB decoded in all.'),
  labels: labels.optional().describe('Custom labels of the sent message.'),
};

/** Body of POST /api/email/identities/{id}/send (spec 4.4, issue 21). `body` or `html` is required. */
export const sendEmailInput = z
  .object({ to: toField, subject: subject.min(1), body: body.optional(), ...sendFields })
  .strict()
  .superRefine(recipientCount)
  .refine(bodyOrHtml, BODY_OR_HTML);
/** Parsed sendEmailInput. */
export type SendEmailInput = z.output<typeof sendEmailInput>;

/**
 * Body of POST /api/email/identities/{id}/reply (spec 4.4, issue 21): `replyAll` answers every participant of the
 * replied message but the identity itself; `to`/`cc`/`bcc` add recipients.
 */
export const replyInput = z
  .object({
    threadId: id,
    body: body.optional(),
    replyAll: z.boolean().optional(),
    to: recipients.optional().describe('Extra To addresses.'),
    ...sendFields,
  })
  .strict()
  .superRefine(recipientCount)
  .refine(bodyOrHtml, BODY_OR_HTML);
/** Parsed replyInput. */
export type ReplyInput = z.output<typeof replyInput>;

/** Body of POST /api/email/identities/{id}/messages/{messageId}/forward (issue 21). */
export const forwardInput = z
  .object({
    to: toField,
    cc: sendFields.cc,
    bcc: sendFields.bcc,
    body: body.optional().describe('Text written above the forwarded message.'),
    html: html.optional(),
    labels: sendFields.labels,
  })
  .strict()
  .superRefine(recipientCount);
/** Parsed forwardInput. */
export type ForwardInput = z.output<typeof forwardInput>;

/** Path parameters `{id}/…/{messageId}`: `messageId` is the RFC 5322 Message-ID (URL-encoded in the path). */
export const messageParams = z.object({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, { message: 'must be an id: 1 to 100 characters from A-Z a-z 0-9 _ -' }),
  messageId: z
    .string()
    .max(998)
    .regex(/^<[!-;=?-~]+>$/, { message: 'must be a Message-ID such as <id@host> (URL-encoded in the path)' }),
});
/** Path parameters of an attachment download. */
export const attachmentParams = messageParams.extend({
  attachmentId: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, { message: 'must be an id' }),
});

/** Query of GET /api/email/identities/{id}/threads. */
export const listThreadsInput = z
  .object({
    limit: decimalInt(1, THREADS_MAX_LIMIT).default(THREADS_DEFAULT_LIMIT),
    cursor: z.string().max(500).optional(),
    label: z.lazy(() => labelFilter).optional(),
  })
  .strict();
/** Parsed listThreadsInput. */
export type ListThreadsInput = z.output<typeof listThreadsInput>;

const sources = z
  .array(z.enum(CONTEXT_SOURCES))
  .max(3)
  .refine((a) => new Set(a).size === a.length, { message: 'must not repeat a source', params: { code: 'DUPLICATE' } });

/** Body of POST /api/agents (spec 4.5). */
export const createAgentInput = z
  .object({
    name: z.string().trim().min(1).max(200),
    systemPrompt: z.string().max(20_000).default(''),
    textModel: z.string().trim().min(1).max(200).nullish().describe('Model id of the OpenAI-compatible endpoint.'),
    contextSources: sources.default([]),
  })
  .strict();
/** Parsed createAgentInput. */
export type CreateAgentInput = z.output<typeof createAgentInput>;

/** Body of PATCH /api/agents/{id}: any subset of the creation fields (textModel null clears it). */
export const updateAgentInput = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    systemPrompt: z.string().max(20_000).optional(),
    textModel: z.string().trim().min(1).max(200).nullable().optional(),
    contextSources: sources.optional(),
  })
  .strict();
/** Parsed updateAgentInput. */
export type UpdateAgentInput = z.output<typeof updateAgentInput>;

/** Body of POST /api/agents/{id}/knowledge. */
export const addKnowledgeInput = z
  .object({ title: z.string().trim().min(1).max(200), content: z.string().min(1).max(100_000) })
  .strict();
/** Parsed addKnowledgeInput. */
export type AddKnowledgeInput = z.output<typeof addKnowledgeInput>;

/** Path parameter `{address}` of DELETE /api/email/suppressions/{address}: any address-like text (unknown: 404). */
export const suppressionParams = z.object({
  address: z
    .string()
    .min(1)
    .max(320)
    .regex(/^[!-~]+@[!-~]+$/, { message: 'must be an email address (printable ASCII, with @)' }),
});

/** A label in a filter (`?label=`): system or custom, same format. */
export const labelFilter = z
  .string()
  .min(1)
  .max(MAX_LABEL_CHARS)
  .regex(/^[\p{Ll}\p{Lo}\p{N}][\p{Ll}\p{Lo}\p{N}._:/-]*$/u, {
    message: 'must be a label (lower-case, at most 50 characters)',
  });

/** Body of PATCH …/threads/{threadId} and PATCH …/messages/{messageId} (issue 21 item 4): custom labels only. */
export const labelsPatchInput = z
  .object({
    addLabels: z.array(label).max(50).optional(),
    removeLabels: z.array(label).max(50).optional(),
  })
  .strict()
  .refine((v) => (v.addLabels?.length ?? 0) + (v.removeLabels?.length ?? 0) > 0, {
    path: ['addLabels'],
    message: 'addLabels or removeLabels is required',
    params: { code: 'REQUIRED' },
  });
/** Parsed labelsPatchInput. */
export type LabelsPatchInput = z.output<typeof labelsPatchInput>;

/** Path parameters `{id}/threads/{threadId}`. */
export const threadParams = z.object({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, { message: 'must be an id: 1 to 100 characters from A-Z a-z 0-9 _ -' }),
  threadId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, { message: 'must be an id: 1 to 100 characters from A-Z a-z 0-9 _ -' }),
});
