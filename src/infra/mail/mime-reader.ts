import { PassThrough } from 'node:stream';
import type { AddressObject, AttachmentStream, HeaderLines, Headers, MailParser, MessageText } from 'mailparser';
import { type InboundAttachment, type InboundMessage, MimeError } from '../../domain/email/mail-transport.port.js';

/**
 * Most MIME parts (nodes) one message may have; every nested part counts, so this bounds nesting depth too.
 * Beyond it the message is refused permanently (SMTP `554 5.6.0`, issue 26 item 4). Real mail has a few dozen.
 */
export const MAX_MIME_PARTS = 500;
/** Largest text or HTML body kept from an inbound message, in characters (the raw message keeps all of it). */
export const MAX_INBOUND_BODY_CHARS = 2_000_000;
/** Bytes kept of a delivery report's parts and of a report's head (DSNs are small; RFC 3464). */
export const MAX_REPORT_BYTES = 256 * 1024;
const REPORT_PARTS = ['message/delivery-status', 'text/rfc822-headers', 'message/global-delivery-status'];

/** mailparser, loaded with the first message (not at start-up) and then kept: one dynamic import, not one per message. */
let mailparserModule: Promise<typeof import('mailparser')> | undefined;

/** mailparser's class once loaded: later messages build their parser without an await (issue 24). */
let MailParserClass: typeof MailParser | undefined;

async function loadParser(): Promise<MailParser> {
  // mailparser is loaded with the first message, not at start-up (docs/operations.md "Start-up").
  mailparserModule ??= import('mailparser');
  MailParserClass = (await mailparserModule).MailParser;
  return parserOf(MailParserClass);
}

function parserOf(Parser: typeof MailParser): MailParser {
  return new Parser({
    skipHtmlToText: false,
    skipTextToHtml: true,
    skipImageLinks: true,
    maxChildNodes: MAX_MIME_PARTS,
    // The machine-readable part of a DSN (RFC 3464) as its own part, not folded into the text.
    keepDeliveryStatus: true,
  } as ConstructorParameters<typeof MailParser>[0]);
}

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  const list = Array.isArray(field) ? field : field ? [field] : [];
  return list.flatMap((a) => a.value.flatMap((v) => [v.address ?? '', ...addressesOfGroup(v.group)]));
}

function addressesOfGroup(group: { address?: string }[] | undefined): string[] {
  return (group ?? []).map((g) => g.address ?? '');
}

function mimeError(err: unknown): Error {
  const e = err as { code?: string; message?: string };
  if (e?.code === 'EMAXLEN') return new MimeError(`5.6.0 ${e.message ?? 'MIME structure too large'}`);
  return err as Error;
}

/**
 * Reads one RFC 5322 message from a stream with bounded memory (mailparser's streaming `MailParser`): the headers,
 * the text and HTML bodies (each cut to {@link MAX_INBOUND_BODY_CHARS}) and each attachment's metadata; attachment
 * bytes are counted and dropped (they stay in the raw message, read again on download by
 * {@link readMimeAttachment}). A message already whole in memory (`raw` a Buffer: the SMTP listener's small mail,
 * src/domain/email/inbound-stream.ts) is written to the parser in one call, with no stream in front of it.
 * @throws MimeError (permanent) past {@link MAX_MIME_PARTS} parts or an oversized header block; other stream errors
 * as they are.
 */
export async function readMime(raw: Buffer | NodeJS.ReadableStream): Promise<InboundMessage> {
  const parser = MailParserClass ? parserOf(MailParserClass) : await loadParser();
  let size = 0;
  let headers: Headers | undefined;
  let lines: HeaderLines = [];
  let text = '';
  let html: string | null = null;
  const attachments: InboundAttachment[] = [];
  const report: Record<string, Buffer[]> = {};
  const head: Buffer[] = [];
  let headBytes = 0;
  parser.on('headers', (h: Headers) => {
    headers ??= h;
  });
  parser.on('headerLines', (l: HeaderLines) => {
    if (lines.length === 0) lines = l;
  });
  parser.on('data', (data: AttachmentStream | MessageText) => {
    if (data.type === 'attachment') {
      const meta: InboundAttachment = {
        position: attachments.length,
        filename: data.filename ?? null,
        contentType: data.contentType || 'application/octet-stream',
        size: 0,
        inline: data.contentDisposition === 'inline' || Boolean(data.related),
        contentId: data.cid ?? null,
      };
      attachments.push(meta);
      let keep: Buffer[] | undefined;
      if (REPORT_PARTS.includes(meta.contentType)) {
        keep = report[meta.contentType] ?? [];
        report[meta.contentType] = keep;
      }
      data.content.on('data', (c: Buffer) => {
        if (keep && meta.size < MAX_REPORT_BYTES) keep.push(c);
        meta.size += c.length;
      });
      data.content.on('end', () => data.release());
      return;
    }
    text = (data.text ?? '').slice(0, MAX_INBOUND_BODY_CHARS);
    html = typeof data.html === 'string' ? data.html.slice(0, MAX_INBOUND_BODY_CHARS) : null;
  });
  await new Promise<void>((resolve, reject) => {
    const fail = (err: unknown) => reject(mimeError(err));
    parser.on('error', fail);
    parser.on('end', () => resolve());
    if (Buffer.isBuffer(raw)) {
      size = raw.length;
      head.push(raw.subarray(0, MAX_REPORT_BYTES));
      parser.end(raw);
      return;
    }
    raw.on('error', fail);
    raw.on('data', (c: Buffer) => {
      size += c.length;
      if (headBytes < MAX_REPORT_BYTES) {
        head.push(c);
        headBytes += c.length;
      }
    });
    raw.pipe(parser);
  });
  const contentType = rootContentType(headers);
  const reportPart = (type: string) => {
    const parts = report[type];
    return parts ? Buffer.concat(parts).subarray(0, MAX_REPORT_BYTES).toString('utf8') : null;
  };
  const h = headers ?? (new Map() as Headers);
  const firstLines = new Map<string, string>();
  for (const l of lines)
    if (!firstLines.has(l.key)) firstLines.set(l.key, l.line.slice(l.line.indexOf(':') + 1).trim());
  const autoSubmitted = h.get('auto-submitted');
  const messageId = h.get('message-id');
  const inReplyTo = h.get('in-reply-to');
  const references = h.get('references');
  const subject = h.get('subject');
  const replyTo = addresses(h.get('reply-to') as AddressObject | undefined)[0];
  return {
    from: addresses(h.get('from') as AddressObject | undefined).filter((a) => a !== ''),
    to: addresses(h.get('to') as AddressObject | undefined).filter((a) => a !== ''),
    cc: addresses(h.get('cc') as AddressObject | undefined).filter((a) => a !== ''),
    messageId: typeof messageId === 'string' ? messageId : null,
    inReplyTo: typeof inReplyTo === 'string' ? inReplyTo : null,
    references: Array.isArray(references) ? references.map(String) : typeof references === 'string' ? references : null,
    subject: typeof subject === 'string' ? subject : '',
    text,
    html,
    replyTo: replyTo || null,
    autoSubmitted: autoSubmitted === undefined ? null : String(autoSubmitted),
    headers: firstLines,
    contentType: contentType?.value,
    attachments,
    size,
    report:
      contentType?.value === 'multipart/report'
        ? {
            reportType: contentType.params?.['report-type']?.toLowerCase() ?? null,
            deliveryStatus: reportPart('message/delivery-status') ?? reportPart('message/global-delivery-status'),
            returnedHeaders: reportPart('text/rfc822-headers'),
            head: Buffer.concat(head).subarray(0, MAX_REPORT_BYTES).toString('latin1'),
          }
        : null,
  };
}

function rootContentType(h: Headers | undefined): { value?: string; params?: Record<string, string> } | undefined {
  return h?.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
}

/**
 * The decoded bytes of the `position`-th attachment (the order {@link readMime} numbers them) of a raw message as
 * a stream with backpressure; the other attachments are skipped. @returns null when the message has no such
 * attachment.
 */
export async function readMimeAttachment(
  raw: NodeJS.ReadableStream,
  position: number,
): Promise<NodeJS.ReadableStream | null> {
  const parser = MailParserClass ? parserOf(MailParserClass) : await loadParser();
  let index = 0;
  return new Promise((resolve, reject) => {
    let out: PassThrough | undefined;
    const fail = (err: unknown) => {
      if (out) out.destroy(mimeError(err));
      else reject(mimeError(err));
    };
    parser.on('error', fail);
    raw.on('error', fail);
    parser.on('data', (data: AttachmentStream | MessageText) => {
      if (data.type !== 'attachment') return;
      if (index++ !== position || out) {
        (data.content as unknown as NodeJS.ReadableStream).resume();
        data.content.on('end', () => data.release());
        return;
      }
      out = new PassThrough();
      const target = out;
      data.content.on('end', () => {
        data.release();
        // Nothing after this attachment is needed: stop reading the raw message.
        (raw as unknown as { destroy?: () => void }).destroy?.();
      });
      data.content.pipe(target);
      target.on('close', () => {
        if (!target.writableFinished) (raw as unknown as { destroy?: () => void }).destroy?.();
      });
      resolve(target);
    });
    parser.on('end', () => {
      if (!out) resolve(null);
    });
    raw.pipe(parser);
  });
}
