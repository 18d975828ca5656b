import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import EmailReplyParser from 'email-reply-parser'; // 2.x: ESM with its own types (Node 22 and later)
import sanitize from 'sanitize-html';

/** The parts of email-reply-parser 2.x's internal `EmailParser` that {@link QuickReplyParser} overrides. */
interface ParserInternals {
  parse(text: string): { getVisibleText(): string };
}
type ParserClass = new () => ParserInternals;

/**
 * email-reply-parser's own line parser with the same regexes and the same algorithm, minus repeated work (issue 24,
 * round 11: 463–581 → 138–226 µs per call on the bench's 4 KB reply, 4 runs of 3,000 calls): the library reverses a
 * line once per regex (40 char-by-char reversals per `isQuoteHeader`), tests every header regex after one matched, and
 * tests each line's signature twice. Here a line is reversed once, `some` stops at the first match (same truth value:
 * every regex is stateless, no `g` or `y` flag, checked at load), and a line's signature verdict is kept for the one
 * parse.
 * The package's exports map hides `dist/parser/emailparser.js`, so it is loaded by file next to the entry point;
 * when that fails or the regexes carry state, the stock parser is used. Proven equal by
 * test/email/reply-text.test.ts (the parser's 90 test mails, alone and with quoted history).
 */
const QuickReplyParser: ParserClass | null = await (async () => {
  try {
    const entry = pathToFileURL(createRequire(import.meta.url).resolve('email-reply-parser'));
    const { default: Base } = (await import(new URL('./parser/emailparser.js', entry).href)) as {
      default: ParserClass;
    };
    const { default: lists } = (await import(new URL('./regex.js', entry).href)) as {
      default: { quoteHeadersRegex: RegExp[]; signatureRegex: RegExp[] };
    };
    const all = [...lists.quoteHeadersRegex, ...lists.signatureRegex];
    if (!all.every((r) => r instanceof RegExp && !r.global && !r.sticky)) return null;
    const reverse = (text: string): string => {
      let out = '';
      for (let i = text.length - 1; i >= 0; i--) out += text[i];
      return out;
    };
    return class extends Base {
      private readonly signatures = new Map<string, boolean>();
      stringReverse(text: string): string {
        return reverse(text);
      }
      isQuoteHeader(line: string): boolean {
        const text = reverse(line);
        return lists.quoteHeadersRegex.some((r) => r.test(text));
      }
      isSignature(line: string): boolean {
        let verdict = this.signatures.get(line);
        if (verdict === undefined) {
          const text = reverse(line);
          verdict = lists.signatureRegex.some((r) => r.test(text));
          this.signatures.set(line, verdict);
        }
        return verdict;
      }
    };
  } catch {
    return null;
  }
})();

/** The visible text email-reply-parser gives for `text` (LF line ends), by {@link QuickReplyParser} when loaded. */
function parserVisibleText(text: string): string {
  return QuickReplyParser
    ? new QuickReplyParser().parse(text).getVisibleText()
    : new EmailReplyParser().read(text).getVisibleText();
}

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
 * what an agent's prompt shows of the mail. Input longer than {@link MAX_REPLY_PARSE_CHARS} is cut first, and the
 * trailing quoted history is cut before the parser reads it ({@link withoutTrailingQuote}).
 * @returns trimmed text; the whole (trimmed) body when the parser finds nothing visible.
 */
export function extractReplyText(text: string): string {
  const input = text.length > MAX_REPLY_PARSE_CHARS ? text.slice(0, MAX_REPLY_PARSE_CHARS) : text;
  if (input.trim() === '') return '';
  try {
    const lf = input.replace(/\r\n/g, '\n');
    const visible = parserVisibleText(withoutTrailingQuote(lf)).trim();
    return visible === '' ? input.trim() : visible;
  } catch {
    return input.trim();
  }
}

/**
 * `text` (LF line ends) without the quoted history that ends it, keeping that history's first line. The parser
 * tests every line against some 60 header and signature regexes (issue 24: 1.2 ms of the 4 KB bench reply, whose
 * last 3 KB are `> ` lines), yet every line that starts with `>` is a quote it hides, wherever it stands, and a
 * blank line beside one joins its hidden fragment. So the run of `>` and blank lines at the end of a reply is
 * hidden whatever it holds; the first `>` line of that run is kept so that the line above it (a "On … wrote:"
 * header, or text) is read exactly as with the whole run there. The visible text is the parser's own for the
 * whole text (test/email/reply-text.test.ts: the parser's 90 test mails, alone and with a quoted history after
 * them). It can differ only where one of the parser's multi-line header patterns (`Op … schreef:`,
 * `W dniu … napisał:`, `在 … 写道：`) would start in the new text and end inside the cut quote, which the parser
 * would then have merged into one line.
 * @returns the text up to and including the trailing run's first `>` line; `text` itself when it has no such run.
 */
export function withoutTrailingQuote(text: string): string {
  let end = text.length;
  let firstQuoteLineStart = -1;
  while (end > 0) {
    const start = text.lastIndexOf('\n', end - 1) + 1;
    const line = text.slice(start, end);
    if (line.startsWith('>')) firstQuoteLineStart = start;
    else if (line.trim() !== '') break;
    if (start === 0) break;
    end = start - 1;
  }
  if (firstQuoteLineStart < 0) return text;
  const firstQuoteLineEnd = text.indexOf('\n', firstQuoteLineStart);
  return firstQuoteLineEnd < 0 ? text : text.slice(0, firstQuoteLineEnd);
}
