// What the routes that carry a message's content share (send, reply, forward, and drafts, which are a send kept for
// later): the body limit, the error codes of sending, the route options built from them, and the download of a
// stored attachment. email.routes.ts and email-drafts.routes.ts build their routes from these, so a draft route
// cannot drift from the send route it stands for.
import type { FastifyReply } from 'fastify';
import type { ErrorCode } from '../error-codes.js';

/**
 * Body limit of send, reply, forward and draft create/update: 25 MiB of attachments is about 33.4 MiB of base64,
 * plus the JSON around it; the domain answers 413 ATTACHMENTS_TOO_LARGE naming the 25 MiB limit for anything up to
 * this size.
 */
export const CONTENT_BODY_LIMIT = 40 * 1024 * 1024;

/** The codes every operation that sends answers (send, reply, forward, send a draft), beside its own. */
export const SEND_ERRORS = [
  'FORBIDDEN',
  'NOT_FOUND',
  'IDENTITY_DEPROVISIONING',
  'RECIPIENT_SUPPRESSED',
  'RECIPIENT_BLOCKED',
] as const satisfies readonly ErrorCode[];

/**
 * Options of a route whose body is a message's content: {@link CONTENT_BODY_LIMIT} and tag `email` around `schema`
 * (operationId, errors, summary, params, body, response as on any route).
 */
export function contentRoute<const S extends { errors: readonly ErrorCode[] }>(schema: S) {
  return { bodyLimit: CONTENT_BODY_LIMIT, schema: { tags: ['email'], ...schema } };
}

/**
 * Streams a stored attachment as the answer: its content type, RFC 6266 Content-Disposition with its filename
 * (`inline` for an inline part, else `attachment`), `nosniff`, and Content-Length when the size is known exactly.
 */
export function sendAttachment(
  reply: FastifyReply,
  attachment: { contentType: string; filename: string | null; inline?: boolean },
  stream: NodeJS.ReadableStream,
  exactSize?: number,
): FastifyReply {
  reply.header('content-type', attachment.contentType);
  if (exactSize !== undefined) reply.header('content-length', String(exactSize));
  reply.header('content-disposition', contentDisposition(attachment.inline ?? false, attachment.filename));
  reply.header('x-content-type-options', 'nosniff');
  return reply.send(stream);
}

/** RFC 6266 Content-Disposition with an ASCII fallback and the UTF-8 `filename*` (RFC 8187). */
export function contentDisposition(inline: boolean, filename: string | null): string {
  const type = inline ? 'inline' : 'attachment';
  if (!filename) return type;
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${type}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
