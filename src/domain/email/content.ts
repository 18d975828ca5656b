import EmailReplyParser from 'email-reply-parser'; // 2.x: ESM with its own types (Node 22 and later)
import sanitize from 'sanitize-html';

/** Longest text the reply parser reads, in characters: longer text is cut first (its regexes are linear per line). */
export const MAX_REPLY_PARSE_CHARS = 200_000;

/**
 * HTML as the API serves it (issue 21 item 2), sanitised with `sanitize-html`: its default allow-list of
 * formatting tags plus `img` (http, https, cid and data URLs), inline `style` dropped; no scripts, no event
 * handlers (`on*` attributes), no `javascript:` or other unlisted URL schemes, no forms, frames or objects.
 * @returns the sanitised HTML, or null for null/empty input.
 */
export function sanitizeEmailHtml(html: string | null | undefined): string | null {
  if (!html) return null;
  return sanitize(html, {
    allowedTags: [...sanitize.defaults.allowedTags, 'img', 'center', 'font'],
    allowedAttributes: {
      ...sanitize.defaults.allowedAttributes,
      img: ['src', 'alt', 'title', 'width', 'height'],
      '*': ['align', 'valign', 'width', 'height', 'bgcolor', 'color', 'colspan', 'rowspan'],
    },
    allowedSchemes: ['http', 'https', 'mailto', 'tel'],
    allowedSchemesByTag: { img: ['http', 'https', 'cid', 'data'] },
    allowProtocolRelative: false,
  });
}

/**
 * The new text of a message without quoted history and signature (`email-reply-parser`, GitHub's algorithm):
 * what an agent's prompt shows of the mail. Input longer than {@link MAX_REPLY_PARSE_CHARS} is cut first.
 * @returns trimmed text; the whole (trimmed) body when the parser finds nothing visible.
 */
export function extractReplyText(text: string): string {
  const input = text.length > MAX_REPLY_PARSE_CHARS ? text.slice(0, MAX_REPLY_PARSE_CHARS) : text;
  if (input.trim() === '') return '';
  try {
    const visible = new EmailReplyParser().read(input.replace(/\r\n/g, '\n')).getVisibleText().trim();
    return visible === '' ? input.trim() : visible;
  } catch {
    return input.trim();
  }
}
