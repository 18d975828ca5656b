import { requireScope } from '../../domain/accounts/account.service.js';
import { AGENT_ANSWER_STATUSES, MESSAGE_DIRECTIONS, MESSAGE_STATUSES } from '../../domain/email/email.enums.js';
import { forwardInput, labelsPatchInput, replyInput, sendEmailInput } from '../../domain/email/email.schemas.js';
import { getIdentity } from '../../domain/email/identity.service.js';
import { patchMessageLabels, patchThreadLabels } from '../../domain/email/labels.js';
import { forwardMessage, replyToThread, sendEmail } from '../../domain/email/outbound.service.js';
import { AUTH_VERDICTS, authenticationView, type SenderAuthentication } from '../../domain/email/sender-auth.js';
import { findThreadRow, getMessageRow, getThreadRow } from '../../domain/email/thread.service.js';
import type { StoredEvent } from '../../domain/events/event.js';
import type { EmailMessage, EmailThread } from '../../generated/prisma/client.js';
import { builder } from '../builder.js';
import { parseArgs } from '../parse-args.js';
import { type Change, changesOf, orNull, topicId } from '../subscriptions.js';
import { NodeRef } from './node.js';

const AgentAnswerStatusEnum = builder.enumType('AgentAnswerStatus', {
  description: 'State of an agent’s answer: pending, then answered, skipped (see reason) or failed.',
  values: AGENT_ANSWER_STATUSES,
});
const MessageDirectionEnum = builder.enumType('MessageDirection', {
  description: 'inbound (received) or outbound (sent by this service).',
  values: MESSAGE_DIRECTIONS,
});
const MessageStatusEnum = builder.enumType('MessageStatus', {
  description: 'received (inbound); queued, sent, delivered, undelivered or failed (outbound).',
  values: MESSAGE_STATUSES,
});

export const EmailThreadRef = builder.prismaObject('EmailThread', {
  interfaces: [NodeRef],
  description: 'A conversation of one identity (spec 2.7).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Thread id (UUID); the same as threadId.' }),
    threadId: t.exposeID('id', { description: 'Thread id (UUID).' }),
    subject: t.exposeString('subject'),
    participants: t.exposeStringList('participants', { description: 'Addresses, in order of first appearance.' }),
    messageCount: t.exposeInt('messageCount'),
    labels: t.exposeStringList('labels', { description: 'System and custom labels.' }),
    lastMessageAt: t.expose('lastMessageAt', { type: 'DateTime' }),
    messages: t.relation('messages', {
      description: 'Every message, oldest first.',
      query: { orderBy: [{ sentAt: 'asc' }, { id: 'asc' }] },
    }),
  }),
});

builder.prismaObject('AgentJob', {
  name: 'AgentAnswer',
  description: 'State of the agent’s answer to an inbound message.',
  fields: (t) => ({
    status: t.field({ type: AgentAnswerStatusEnum, resolve: (j) => j.status as never }),
    reason: t.exposeString('reason', {
      nullable: true,
      description:
        'Why skipped or failed (AUTO_SUBMITTED, SENDER_NOT_AUTHENTICATED, REPLY_BUDGET_EXHAUSTED, IDENTITY_REPLY_BUDGET_EXHAUSTED, MODEL_ERROR, …).',
    }),
    attempts: t.exposeInt('attempts', { description: 'Model calls made.' }),
    lastError: t.exposeString('lastError', { nullable: true }),
    replyMessageId: t.exposeString('replyMessageId', { nullable: true, description: 'Message-ID of the answer.' }),
  }),
});

const AuthVerdictEnum = builder.enumType('AuthVerdict', {
  description: 'A sender-authentication verdict (mailauth’s words, RFC 8601 2.7).',
  values: AUTH_VERDICTS,
});

const SenderAuthenticationRef = builder.objectRef<SenderAuthentication>('SenderAuthentication').implement({
  description:
    'SPF, DKIM, DMARC and ARC verdicts of an inbound message and whether its sender counts as authenticated ' +
    '(docs/email.md "Sender authentication").',
  fields: (t) => ({
    spf: t.field({ type: AuthVerdictEnum, resolve: (a) => a.spf }),
    dkim: t.field({ type: AuthVerdictEnum, resolve: (a) => a.dkim }),
    dmarc: t.field({ type: AuthVerdictEnum, resolve: (a) => a.dmarc }),
    arc: t.field({ type: AuthVerdictEnum, resolve: (a) => a.arc }),
    authenticated: t.exposeBoolean('authenticated', {
      description:
        'DMARC pass; or, without a DMARC record, an SPF or DKIM pass aligned with the From domain; or local delivery.',
    }),
    authenticatedBy: t.exposeString('authenticatedBy', {
      nullable: true,
      description: 'dmarc, spf, dkim or local; null when not authenticated.',
    }),
  }),
});

const EmailMessageRef = builder.prismaObject('EmailMessage', {
  description: 'One message of a thread (spec 2.7) with its delivery status.',
  fields: (t) => ({
    messageId: t.exposeString('messageId', { description: 'RFC 5322 Message-ID, angle brackets included.' }),
    threadId: t.exposeString('threadId'),
    from: t.exposeString('from'),
    to: t.exposeStringList('to'),
    subject: t.exposeString('subject'),
    body: t.exposeString('body', { description: 'Plain text.' }),
    sentAt: t.expose('sentAt', { type: 'DateTime' }),
    direction: t.field({ type: MessageDirectionEnum, resolve: (m) => m.direction as never }),
    inReplyTo: t.exposeString('inReplyTo', { nullable: true }),
    references: t.exposeStringList('references'),
    status: t.field({
      type: MessageStatusEnum,
      description: 'Delivery status (README "Message status").',
      resolve: (m) => m.status as never,
    }),
    statusDetail: t.exposeString('statusDetail', { nullable: true }),
    agentAnswer: t.relation('agentJob', { nullable: true, description: 'The agent’s answer, on inbound mail.' }),
    authentication: t.field({
      type: SenderAuthenticationRef,
      nullable: true,
      description: 'Sender authentication of inbound mail; null on outbound mail.',
      select: { authentication: true },
      resolve: (m) => authenticationView(m.authentication),
    }),
    cc: t.exposeStringList('cc'),
    bcc: t.stringList({
      description: 'Bcc addresses: only on the identity’s own sent mail (never in a header); [] on inbound mail.',
      resolve: (m) => (m.direction === 'outbound' ? m.bcc : []),
    }),
    replyTo: t.exposeString('replyTo', { nullable: true }),
    html: t.exposeString('html', {
      nullable: true,
      description: 'The HTML part, sanitised (no scripts, event handlers or javascript: URLs).',
    }),
    extractedText: t.string({
      description: 'The new text without quoted history and signature (email-reply-parser).',
      resolve: (m) => m.extractedText ?? m.body,
    }),
    labels: t.exposeStringList('labels', {
      description:
        'System labels (received, sent, spam for DMARC quarantine, unauthenticated, bounced) and custom labels.',
    }),
    size: t.exposeInt('size', { description: 'Size of the raw message in bytes.' }),
    attachments: t.relation('attachments', { query: { orderBy: { position: 'asc' } } }),
    rawPath: t.string({
      description: 'REST path that streams the raw message (message/rfc822).',
      resolve: (m) => `/api/email/identities/${m.identityId}/messages/${encodeURIComponent(m.messageId)}/raw`,
    }),
  }),
});

builder.prismaObject('EmailAttachment', {
  description: 'An attachment of a message; its bytes download from `downloadPath` (REST, streamed).',
  fields: (t) => ({
    attachmentId: t.exposeID('id'),
    filename: t.exposeString('filename', { nullable: true }),
    contentType: t.exposeString('contentType'),
    size: t.exposeInt('size', { description: 'Decoded size in bytes.' }),
    inline: t.exposeBoolean('inline'),
    contentId: t.exposeString('contentId', { nullable: true }),
    downloadPath: t.string({
      select: { message: { select: { identityId: true, messageId: true } } },
      resolve: (a) =>
        `/api/email/identities/${a.message.identityId}/messages/${encodeURIComponent(a.message.messageId)}/attachments/${a.id}`,
    }),
  }),
});

builder.queryFields((t) => ({
  emailThread: t.prismaField({
    type: 'EmailThread',
    description: 'One thread of one of the account’s identities.',
    args: { threadId: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => findThreadRow(ctx.app, ctx.actor, String(args.threadId), query),
  }),
}));

export const EmailAttachmentInput = builder.inputType('EmailAttachmentInput', {
  description: 'An attachment to send: `content` is base64 (RFC 4648 4).',
  fields: (t) => ({
    filename: t.string({ required: true }),
    contentType: t.string({ description: 'MIME type; default application/octet-stream.' }),
    content: t.string({ required: true, description: 'The bytes, base64.' }),
  }),
});

const SendEmailInput = builder.inputType('SendEmailInput', {
  description:
    'A new message from one of the account’s identities (a new thread). At most 50 recipients in all and 25 MiB ' +
    'of attachments (this endpoint’s 1 MiB request limit applies first; REST takes up to 40 MiB).',
  fields: (t) => ({
    identityId: t.id({ required: true, description: 'The sending identity.' }),
    to: t.stringList({ required: true, description: 'One address or a list.' }),
    cc: t.stringList(),
    bcc: t.stringList({ description: 'They get the mail and never appear in a header.' }),
    replyTo: t.string(),
    subject: t.string({ required: true }),
    body: t.string({ description: 'Plain text; body or html is required.' }),
    html: t.string(),
    attachments: t.field({ type: [EmailAttachmentInput] }),
    labels: t.stringList({ description: 'Custom labels (lower-case, at most 50 characters).' }),
  }),
});

const ReplyToEmailThreadInput = builder.inputType('ReplyToEmailThreadInput', {
  description: 'A reply on a thread of one of the account’s identities.',
  fields: (t) => ({
    identityId: t.id({ required: true, description: 'The identity the thread belongs to.' }),
    threadId: t.string({ required: true }),
    body: t.string({ description: 'Plain text; body or html is required.' }),
    replyAll: t.boolean({ description: 'Every participant of the answered message but the identity itself.' }),
    to: t.stringList({ description: 'Extra To addresses.' }),
    cc: t.stringList(),
    bcc: t.stringList(),
    replyTo: t.string(),
    html: t.string(),
    attachments: t.field({ type: [EmailAttachmentInput] }),
    labels: t.stringList(),
  }),
});

const UpdateEmailThreadLabelsInput = builder.inputType('UpdateEmailThreadLabelsInput', {
  description: 'Custom labels to add and remove (lower-case, at most 50 characters; system labels refused).',
  fields: (t) => ({
    identityId: t.id({ required: true }),
    threadId: t.id({ required: true }),
    addLabels: t.stringList(),
    removeLabels: t.stringList(),
  }),
});
const UpdateEmailMessageLabelsInput = builder.inputType('UpdateEmailMessageLabelsInput', {
  description: 'Custom labels to add and remove; added ones join the thread’s too.',
  fields: (t) => ({
    identityId: t.id({ required: true }),
    messageId: t.string({ required: true, description: 'RFC 5322 Message-ID.' }),
    addLabels: t.stringList(),
    removeLabels: t.stringList(),
  }),
});

const ForwardEmailMessageInput = builder.inputType('ForwardEmailMessageInput', {
  description: 'Forward a message of an identity: `Fwd:` subject, the original attachments kept, a new thread.',
  fields: (t) => ({
    identityId: t.id({ required: true }),
    messageId: t.string({ required: true, description: 'RFC 5322 Message-ID of the message to forward.' }),
    to: t.stringList({ required: true }),
    cc: t.stringList(),
    bcc: t.stringList(),
    body: t.string({ description: 'Text above the forwarded message.' }),
    html: t.string(),
    labels: t.stringList(),
  }),
});

/** `SendEmailPayload` / `ReplyToEmailThreadPayload`: the message queued (spec 4.4). */
const sentPayload = (name: string, description: string) =>
  builder.objectRef<{ messageId: string; threadId: string }>(name).implement({
    description,
    fields: (t) => ({
      messageId: t.exposeString('messageId', { description: 'RFC 5322 Message-ID.' }),
      threadId: t.exposeString('threadId'),
      thread: t.prismaField({
        type: 'EmailThread',
        description: 'The thread the message is on, with the message.',
        resolve: (query, p, _args, ctx) => findThreadRow(ctx.app, ctx.actor, p.threadId, query),
      }),
    }),
  });
const SendEmailPayload = sentPayload('SendEmailPayload', 'The message sent and its new thread (spec 4.4).');
const ReplyToEmailThreadPayload = sentPayload('ReplyToEmailThreadPayload', 'The reply sent and its thread.');
const UpdateEmailThreadLabelsPayload = builder
  .objectRef<{ threadId: string }>('UpdateEmailThreadLabelsPayload')
  .implement({
    description: 'The thread after the label change.',
    fields: (t) => ({
      thread: t.prismaField({
        type: 'EmailThread',
        resolve: (query, p, _args, ctx) => findThreadRow(ctx.app, ctx.actor, p.threadId, query),
      }),
    }),
  });
const UpdateEmailMessageLabelsPayload = builder
  .objectRef<{ message: EmailMessage }>('UpdateEmailMessageLabelsPayload')
  .implement({
    description: 'The message after the label change.',
    fields: (t) => ({ message: t.field({ type: EmailMessageRef, resolve: (p) => p.message }) }),
  });
const ForwardEmailMessagePayload = sentPayload('ForwardEmailMessagePayload', 'The forward sent and its new thread.');

builder.mutationFields((t) => ({
  sendEmail: t.field({
    type: SendEmailPayload,
    errors: {},
    description: 'Sends a new message from an identity (new thread).',
    args: { input: t.arg({ type: SendEmailInput, required: true }) },
    resolve: (_root, { input: { identityId, ...input } }, ctx) =>
      sendEmail(ctx.app, ctx.actor, String(identityId), parseArgs(ctx, 'email', sendEmailInput, input)),
  }),
  replyToEmailThread: t.field({
    type: ReplyToEmailThreadPayload,
    errors: {},
    description: 'Replies on a thread of an identity.',
    args: { input: t.arg({ type: ReplyToEmailThreadInput, required: true }) },
    resolve: (_root, { input: { identityId, ...input } }, ctx) =>
      replyToThread(ctx.app, ctx.actor, String(identityId), parseArgs(ctx, 'email', replyInput, input)),
  }),
  updateEmailThreadLabels: t.field({
    type: UpdateEmailThreadLabelsPayload,
    errors: {},
    description: 'Adds or removes custom labels of a thread (REST PATCH …/threads/{threadId}).',
    args: { input: t.arg({ type: UpdateEmailThreadLabelsInput, required: true }) },
    resolve: async (_root, { input: { identityId, threadId, ...patch } }, ctx) => {
      await patchThreadLabels(
        ctx.app,
        ctx.actor,
        String(identityId),
        String(threadId),
        parseArgs(ctx, 'email', labelsPatchInput, patch),
      );
      return { threadId: String(threadId) };
    },
  }),
  updateEmailMessageLabels: t.field({
    type: UpdateEmailMessageLabelsPayload,
    errors: {},
    description: 'Adds or removes custom labels of a message (REST PATCH …/messages/{messageId}).',
    args: { input: t.arg({ type: UpdateEmailMessageLabelsInput, required: true }) },
    resolve: async (_root, { input: { identityId, messageId, ...patch } }, ctx) => {
      await patchMessageLabels(
        ctx.app,
        ctx.actor,
        String(identityId),
        messageId,
        parseArgs(ctx, 'email', labelsPatchInput, patch),
      );
      return { message: await getMessageRow(ctx.app, ctx.actor, String(identityId), messageId) };
    },
  }),
  forwardEmailMessage: t.field({
    type: ForwardEmailMessagePayload,
    errors: {},
    description: 'Forwards a message of an identity (new thread, original attachments kept).',
    args: { input: t.arg({ type: ForwardEmailMessageInput, required: true }) },
    resolve: (_root, { input: { identityId, messageId, ...input } }, ctx) =>
      forwardMessage(ctx.app, ctx.actor, String(identityId), messageId, parseArgs(ctx, 'email', forwardInput, input)),
  }),
}));

/** The email event's `data` field `key` (email events carry spec 6.1's `{event, data: {...}}`). */
function dataString(e: StoredEvent, key: string): string | undefined {
  const data = e.payload.data as Record<string, unknown> | undefined;
  const value = data?.[key];
  return typeof value === 'string' ? value : undefined;
}

const ThreadChangeRef = builder.objectRef<Change<EmailThread>>('ThreadChange').implement({
  description: 'A change of one of an identity’s threads (a message received, sent, answered by the agent or failed).',
  fields: (t) => ({
    eventId: t.exposeString('eventId', { description: 'The event id; resume after it with `lastEventId`.' }),
    eventType: t.exposeString('eventType', { description: 'email.received, email.sent, email.agent.response, …' }),
    timestamp: t.exposeString('timestamp', { description: 'When the event was recorded (ISO 8601 UTC).' }),
    thread: t.field({
      type: EmailThreadRef,
      nullable: true,
      description: 'The thread re-read after the change; null once gone.',
      resolve: (c) => c.node,
    }),
  }),
});

const MessageChangeRef = builder.objectRef<Change<EmailMessage>>('MessageReceived').implement({
  description: 'A message received by an identity (event email.received).',
  fields: (t) => ({
    eventId: t.exposeString('eventId', { description: 'The event id; resume after it with `lastEventId`.' }),
    timestamp: t.exposeString('timestamp', { description: 'When the event was recorded (ISO 8601 UTC).' }),
    message: t.field({
      type: EmailMessageRef,
      nullable: true,
      description: 'The message as stored; null once gone (identity deleted).',
      resolve: (c) => c.node,
    }),
  }),
});

builder.subscriptionFields((t) => ({
  threadUpdated: t.field({
    type: ThreadChangeRef,
    description:
      'Changes of the threads of one identity, or of every identity of the account when `identityId` is omitted ' +
      '(scopes email and events:read): each yields the thread re-read after the change. With `lastEventId`, first ' +
      'the changes after it, then live ones, on every instance (Redis). NOT_FOUND for another account’s identity.',
    args: {
      identityId: t.arg.id({ description: 'The identity; omitted: every identity of the account.' }),
      lastEventId: t.arg.string({ description: 'Resume after this event id.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const identityId =
        args.identityId === null || args.identityId === undefined ? undefined : String(args.identityId);
      if (identityId) await getIdentity(ctx.app, ctx.actor, identityId);
      else requireScope(ctx.actor, 'email');
      return changesOf(ctx, {
        channels: ['email'],
        topic: ['thread', topicId(identityId)],
        lastEventId: args.lastEventId,
        matches: (e) => {
          const of = dataString(e, 'identityId');
          return (
            of !== undefined &&
            (identityId === undefined || of === identityId) &&
            dataString(e, 'threadId') !== undefined
          );
        },
        load: (e) => orNull(getThreadRow(ctx.app, ctx.actor, dataString(e, 'identityId')!, dataString(e, 'threadId')!)),
      });
    },
    resolve: (change) => change,
  }),
  messageReceived: t.field({
    type: MessageChangeRef,
    description:
      'Messages received by one identity (scopes email and events:read), each the stored message. With ' +
      '`lastEventId`, first those after it, then live ones. NOT_FOUND for another account’s identity.',
    args: {
      identityId: t.arg.id({ required: true }),
      lastEventId: t.arg.string({ description: 'Resume after this event id.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const identityId = String(args.identityId);
      await getIdentity(ctx.app, ctx.actor, identityId);
      return changesOf(ctx, {
        channels: ['email'],
        topic: ['thread', identityId],
        lastEventId: args.lastEventId,
        matches: (e) =>
          e.eventType === 'email.received' &&
          dataString(e, 'identityId') === identityId &&
          dataString(e, 'messageId') !== undefined,
        load: (e) => orNull(getMessageRow(ctx.app, ctx.actor, identityId, dataString(e, 'messageId')!)),
      });
    },
    resolve: (change) => change,
  }),
}));
