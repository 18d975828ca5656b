import { z } from 'zod';
import { decimalInt } from '../validation.js';
import { DOMAIN_NAME, DOT_ATOM, MAX_LOCAL_PART_OCTETS } from './mail.rules.js';

/** Threads page size when `limit` is absent, and the largest accepted `limit` (README "Email"). */
export const THREADS_DEFAULT_LIMIT = 20;
export const THREADS_MAX_LIMIT = 100;
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
  })
  .strict();
/** Parsed createIdentityInput. */
export type CreateIdentityInput = z.output<typeof createIdentityInput>;

/** Body of PATCH /api/email/identities/{id} and input of `updateIdentity`; null clears a field. */
export const updateIdentityInput = z
  .object({
    displayName: displayName.nullable().optional(),
    agentId: id.nullable().optional().describe('null unassigns the agent.'),
  })
  .strict();
/** Parsed updateIdentityInput. */
export type UpdateIdentityInput = z.output<typeof updateIdentityInput>;

const address = z.string().trim().email().max(320);
const subject = z
  .string()
  .max(998)
  .refine((v) => !/[\r\n]/.test(v), { message: 'must be one line', params: { code: 'INVALID_FORMAT' } })
  .describe('Subject (one header line, at most 998 characters).');
const body = z.string().max(MAX_BODY_CHARS).describe('Plain-text body.');

/** Body of POST /api/email/identities/{id}/send (spec 4.4). */
export const sendEmailInput = z
  .object({ to: address.describe('Recipient address.'), subject: subject.min(1), body })
  .strict();
/** Parsed sendEmailInput. */
export type SendEmailInput = z.output<typeof sendEmailInput>;

/** Body of POST /api/email/identities/{id}/reply (spec 4.4). */
export const replyInput = z.object({ threadId: id, body }).strict();
/** Parsed replyInput. */
export type ReplyInput = z.output<typeof replyInput>;

/** Query of GET /api/email/identities/{id}/threads. */
export const listThreadsInput = z
  .object({
    limit: decimalInt(1, THREADS_MAX_LIMIT).default(THREADS_DEFAULT_LIMIT),
    cursor: z.string().max(500).optional(),
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
