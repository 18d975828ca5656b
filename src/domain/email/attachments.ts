import { Readable } from 'node:stream';
import { type Actor, requireScope } from '../accounts/account.service.js';
import { NotFoundError, PayloadTooLargeError } from '../errors.js';
import type { DomainContext } from '../kernel/context.js';
import type { Tx } from '../kernel/db.js';
import { uuidv7 } from '../kernel/ids.js';
import { type AttachmentView, attachmentView } from './attachment.view.js';
import { type AttachmentInput, MAX_ATTACHMENT_BYTES } from './email.schemas.js';
import { findBlob, readBlob } from './mail-blob.store.js';
import type { InboundAttachment, OutgoingAttachment } from './mail-transport.port.js';
import { getMessageRow } from './thread.service.js';
import { attachmentOfMessage, attachmentsOfMessage, type EmailMessage, insertAttachments } from './thread.store.js';

export { type AttachmentView, attachmentView };

/** The attachment metadata rows of a stored message (ids drawn here; U+0000 removed, text capped). */
export function attachmentRows(message: Pick<EmailMessage, 'id' | 'accountId'>, list: InboundAttachment[]) {
  return list.map((a) => ({
    id: uuidv7(),
    accountId: message.accountId,
    messageRowId: message.id,
    position: a.position,
    filename: a.filename ? a.filename.replaceAll('\u0000', '').slice(0, 255) : null,
    contentType: a.contentType.replaceAll('\u0000', '').slice(0, 255),
    size: a.size,
    inline: a.inline,
    contentId: a.contentId ? a.contentId.replaceAll('\u0000', '').slice(0, 998) : null,
  }));
}

/** Writes the attachment metadata of a stored message (the bytes stay in its raw message). */
export async function storeAttachments(tx: Tx, message: EmailMessage, list: InboundAttachment[]): Promise<void> {
  if (list.length === 0) return;
  await insertAttachments(tx, attachmentRows(message, list));
}

/**
 * Decodes the base64 attachments of a send/reply (already checked to be base64 by the schema).
 * @throws PayloadTooLargeError 413 ATTACHMENTS_TOO_LARGE (field `attachments`) past {@link MAX_ATTACHMENT_BYTES} decoded.
 */
export function decodeAttachments(list: AttachmentInput[] | undefined): OutgoingAttachment[] {
  if (!list || list.length === 0) return [];
  // Decoded size from the base64 length, before decoding anything (RFC 4648 4: 3 bytes per 4 characters).
  const total = list.reduce((n, a) => n + (a.content.length / 4) * 3 - (a.content.match(/=+$/)?.[0].length ?? 0), 0);
  if (total > MAX_ATTACHMENT_BYTES) {
    throw new PayloadTooLargeError(
      'ATTACHMENTS_TOO_LARGE',
      `attachments total ${total} bytes; at most ${MAX_ATTACHMENT_BYTES} bytes (25 MiB) decoded per message`,
      'attachments',
    );
  }
  return list.map((a) => ({
    filename: a.filename,
    contentType: a.contentType,
    content: Buffer.from(a.content, 'base64'),
  }));
}

/** One attachment's metadata and its bytes as a stream (see {@link openAttachment}). */
export interface AttachmentDownload {
  attachment: AttachmentView;
  stream: NodeJS.ReadableStream;
}

/**
 * GET /api/email/identities/{id}/messages/{messageId}/attachments/{attachmentId}: the decoded bytes, streamed from
 * the stored raw message (read chunk by chunk, the other parts skipped).
 * @throws NotFoundError (field `id`, `messageId` or `attachmentId`).
 */
export async function openAttachment(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  messageId: string,
  attachmentId: string,
): Promise<AttachmentDownload> {
  requireScope(actor, 'email');
  const message = await getMessageRow(ctx, actor, identityId, messageId);
  const row = await attachmentOfMessage(ctx.db, message.id, attachmentId);
  if (!row || !message.rawBlobId) throw new NotFoundError('Attachment', attachmentId, 'attachmentId');
  const stream = await ctx.mail.extractAttachment(readBlob(ctx.db, message.rawBlobId), row.position);
  if (!stream) throw new NotFoundError('Attachment', attachmentId, 'attachmentId');
  return { attachment: attachmentView(row), stream };
}

/**
 * The `Authentication-Results` header field (RFC 8601) this service wrote for a message, folded at its `;`
 * separators (RFC 5322 2.2.3) and ended by CRLF; '' when the row has none (outbound mail, mail stored before
 * sender authentication). The stored value is one line; CR/LF in it are dropped.
 */
export function authenticationResultsField(value: string | null): string {
  const v = (value ?? '').replace(/[\r\n]+/g, ' ').trim();
  if (v === '') return '';
  return `Authentication-Results: ${v.split(/;\s+/).join(';\r\n\t')}\r\n`;
}

/**
 * GET /api/email/identities/{id}/messages/{messageId}/raw: the stored RFC 5322 message (`message/rfc822`) as
 * a stream, and its size in bytes. Inbound mail gets the `Authentication-Results` field this service wrote at
 * receipt prepended (RFC 8601 5: added at the top by the receiving MTA; the stored raw stays as received, the
 * verdicts are on the row). @throws NotFoundError (field `id` or `messageId`; also for mail stored before raw
 * messages were kept).
 */
export async function openRawMessage(
  ctx: DomainContext,
  actor: Actor,
  identityId: string,
  messageId: string,
): Promise<{ size: number; stream: NodeJS.ReadableStream }> {
  requireScope(actor, 'email');
  const message = await getMessageRow(ctx, actor, identityId, messageId);
  if (!message.rawBlobId) throw new NotFoundError('Message', messageId, 'messageId');
  const blob = await findBlob(ctx.db, message.rawBlobId);
  if (!blob) throw new NotFoundError('Message', messageId, 'messageId');
  const field = Buffer.from(authenticationResultsField(message.authenticationResults), 'utf8');
  if (field.length === 0) return { size: blob.size, stream: readBlob(ctx.db, message.rawBlobId) };
  const body = readBlob(ctx.db, message.rawBlobId) as AsyncIterable<Buffer>;
  async function* withField(): AsyncGenerator<Buffer> {
    yield field;
    yield* body;
  }
  return { size: blob.size + field.length, stream: Readable.from(withField()) };
}

/** The attachments of a stored message with their bytes in memory (for a forward; at most the message's size). */
export async function loadAttachments(ctx: DomainContext, message: EmailMessage): Promise<OutgoingAttachment[]> {
  if (!message.rawBlobId) return [];
  const rows = await attachmentsOfMessage(ctx.db, message.id);
  const out: OutgoingAttachment[] = [];
  for (const a of rows) {
    const stream = await ctx.mail.extractAttachment(readBlob(ctx.db, message.rawBlobId), a.position);
    if (!stream) continue;
    const parts: Buffer[] = [];
    for await (const c of stream as AsyncIterable<Buffer>) parts.push(c);
    out.push({
      filename: a.filename,
      contentType: a.contentType,
      content: Buffer.concat(parts),
      contentId: a.inline ? a.contentId : null,
    });
  }
  return out;
}
