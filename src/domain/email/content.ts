import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import EmailReplyParser from 'email-reply-parser'; // 2.x: ESM with its own types (Node 22 and later)
import sanitize from 'sanitize-html';

/** The part of email-reply-parser 2.x's internal `EmailParser` that {@link QuickReplyParser} overrides. */
interface ParserInternals {
  parse(text: string): { getVisibleText(): string };
}
type ParserClass = new () => ParserInternals;

/** A fragment being built, as the library's `FragmentDTO`, its lines kept as written (last line first). */
interface Draft {
  lines: string[];
  isQuoted: boolean;
  isSignature: boolean;
}

/**
 * A text every match of the library's regex contains (its source, as `String(regex)`), outside any optional part,
 * repetition or alternative (for `pis`, in both alternatives `pisze` and `napisał`): a text without it cannot match,
 * so the regex is not run on it. `i`: the regex ignores case (no `u` flag, so only ASCII letters fold onto the ASCII
 * literal) and the literal is looked for in the lower-cased text. Regexes of another library version have no entry
 * and always run. Issue 24: the quote-header regexes with `m` run over the whole text (`fixBrokenSignatures`) and
 * try every line start, e.g. `^(.+\son.*at.*wrote:)$` backtracks over each line.
 */
const REQUIRED_LITERALS = new Map<string, { literal: string; i?: true }>([
  ['/^-*\\s*(On\\s.+\\s.+\\n?wrote:{0,1})\\s{0,1}-*$/m', { literal: 'wrote' }],
  ['/^-*\\s*(Le\\s.+\\s.+\\n?écrit\\s?:{0,1})\\s{0,1}-*$/m', { literal: 'écrit' }],
  ['/^-*\\s*(El\\s.+\\s.+\\n?escribió:{0,1})\\s{0,1}-*$/m', { literal: 'escribió' }],
  ['/^-*\\s*(Il\\s.+\\s.+\\n?scritto:{0,1})\\s{0,1}-*$/m', { literal: 'scritto' }],
  ['/^-*\\s*(Em\\s.+\\s.+\\n?escreveu:{0,1})\\s{0,1}-*$/m', { literal: 'escreveu' }],
  ['/^\\s*(Am\\s.+\\s)\\n?\\n?schrieb.+\\s?(\\[|<).+(\\]|>):$/m', { literal: 'schrieb' }],
  ['/^\\s*(Op\\s[\\s\\S]+?\\n?schreef[\\s\\S]+:)$/m', { literal: 'schreef' }],
  ['/^\\s*((W\\sdniu|Dnia)\\s[\\s\\S]+?(pisze|napisał(\\(a\\))?):)$/mu', { literal: 'pis' }],
  ['/^\\s*(Den\\s.+\\s\\n?skrev\\s.+:)$/m', { literal: 'skrev' }],
  ['/^\\s*(pe\\s.+\\s.+\\n?kirjoitti:)$/m', { literal: 'kirjoitti:' }],
  ['/^\\s*(Am\\s.+\\sum\\s.+\\s\\n?schrieb\\s.+:)$/m', { literal: 'schrieb' }],
  ['/^\\s*(ср\\,\\s.+\\n?\u202Fг\\. в\\s.+,\\s.+[\\[|<].+[\\]|>]:)$/m', { literal: 'ср' }],
  ['/^(在[\\s\\S]+写道：)$/m', { literal: '写道：' }],
  ['/^(20[0-9]{2}\\..+\\s작성:)$/m', { literal: '작성:' }],
  ['/^(20[0-9]{2}\\/.+のメッセージ:)$/m', { literal: 'のメッセージ:' }],
  ['/^(.+\\s<.+>\\sschrieb:)$/m', { literal: 'schrieb:' }],
  ['/^(.+\\son.*at.*wrote:)$/m', { literal: 'wrote:' }],
  ['/^\\s*(From\\s?:.+\\s?\\n?\\s*[\\[|<].+[\\]|>])/m', { literal: 'From' }],
  ['/^\\s*(Von\\s?:.+\\s?\\n?\\s*[\\[|<].+[\\]|>])/m', { literal: 'Von' }],
  ['/^\\s*(De\\s?:.+\\s?\\n?\\s*(\\[|<).+(\\]|>))/m', { literal: 'De' }],
  ['/^\\s*(Van\\s?:.+\\s?\\n?\\s*(\\[|<).+(\\]|>))/m', { literal: 'Van' }],
  ['/^\\s*(Da\\s?:.+\\s?\\n?\\s*(\\[|<).+(\\]|>))/m', { literal: 'Da' }],
  ['/^(20[0-9]{2})-([0-9]{2}).([0-9]{2}).([0-9]{2}):([0-9]{2})\\n?(.*)>:$/m', { literal: '>:' }],
  ['/^\\s*([a-z]{3,4}\\.\\s[\\s\\S]+\\sskrev\\s[\\s\\S]+:)$/m', { literal: 'skrev' }],
  ['/^([0-9]{2}).([0-9]{2}).(20[0-9]{2})(.*)(([0-9]{2}).([0-9]{2}))(.*)\\"( *)<(.*)>( *):$/m', { literal: '"' }],
  ['/^[0-9]{2}:[0-9]{2}(.*)[0-9]{4}(.*)\\"( *)<(.*)>( *):$/', { literal: '"' }],
  ['/^(.*)[0-9]{4}(.*)from(.*)<(.*)>:$/', { literal: 'from' }],
  ['/^Get Outlook for (?:\\s*.+).*/m', { literal: 'Get Outlook for ' }],
  ['/^Cheers,?!?$/im', { literal: 'cheers', i: true }],
  ['/^Best wishes,?!?$/im', { literal: 'best wishes', i: true }],
  ['/^\\w{0,20}\\s?(\\sand\\s)?Regards,?!?！?$/im', { literal: 'regards', i: true }],
  ['/^Télécharger Outlook pour (?:\\s*.+).*/m', { literal: 'Télécharger Outlook pour ' }],
  ['/^Bien . vous,?!?$/im', { literal: 'bien', i: true }],
  ['/^\\w{0,20}\\s?cordialement,?!?$/im', { literal: 'cordialement', i: true }],
  ['/^Bonne (journ.e|soir.e)!?$/im', { literal: 'bonne', i: true }],
  ['/^-*\\s*(In\\sdata\\s.+\\s.+\\n?scritto:{0,1})\\s{0,1}-*$/m', { literal: 'scritto' }],
]);

/** A regex with the text its matches need (REQUIRED_LITERALS), when known. */
interface Filtered {
  regex: RegExp;
  literal?: string;
  /** The literal is lower case and looked for in the lower-cased text. */
  i: boolean;
}

/**
 * `regex` with its REQUIRED_LITERALS entry, kept only when it is consistent with the regex: the literal stands in
 * the source as written (lower-cased for an `i` entry), an entry is `i` exactly when the regex ignores case, and
 * never with the `u` flag (Unicode case folding, e.g. `ſ` matching `s`, is not what `toLowerCase` does).
 */
function filtered(regex: RegExp): Filtered {
  const known = REQUIRED_LITERALS.get(String(regex));
  const i = known?.i === true;
  const consistent =
    known !== undefined &&
    i === regex.ignoreCase &&
    !(i && regex.unicode) &&
    (i
      ? regex.source.toLowerCase().includes(known.literal) && known.literal === known.literal.toLowerCase()
      : regex.source.includes(known.literal));
  return consistent ? { regex, literal: known.literal, i } : { regex, i: false };
}

/** Whether `f` matches `text` (`lower`: the text lower-cased, made on demand), not run when its literal is absent. */
function matches(f: Filtered, text: string, lower: () => string): boolean {
  if (f.literal !== undefined && !(f.i ? lower() : text).includes(f.literal)) return false;
  return f.regex.test(text);
}

/**
 * email-reply-parser's own line parser with the same regexes and the same algorithm, minus repeated work (issue 24).
 * The library reverses the text, reads its lines (so the last line first), and reverses each line back before every
 * regex test and each fragment back at the end: per 4 KB reply, one reversal of the text, one per line and regex
 * test (40 per `isQuoteHeader`) and one per fragment, each char by char. Here the lines are read last first from the
 * text as written, which is the same sequence with every reversal undone: the library's left trim of a reversed line
 * is `trimEnd` (both strip `\s`: WhiteSpace and LineTerminator), its `(>+)$` on a reversed line is a line starting
 * with `>`, a fragment's content is its lines in written order joined by `\n` (then one leading `\n` removed), and
 * the visible text is the visible fragments joined by `\n` without its trailing `~` (the library's `/~*$/`, which
 * V8 tries at every position). A regex is not run on a text that lacks a literal all its matches contain
 * ({@link REQUIRED_LITERALS}). Round 11 already stopped `some` at the first match (same truth value: every regex is
 * stateless, no `g` or `y` flag, checked at load) and kept a line's signature verdict for the one parse.
 * The package's exports map hides its internal files, so they are loaded by file next to the entry point; when that
 * fails or the regexes carry state, the stock parser is used. Proven equal by test/email/reply-text.test.ts (the
 * parser's 90 test mails, alone and with quoted history, and 3,000 generated texts against the stock parser).
 */
const QuickReplyParser: ParserClass | null = await (async () => {
  try {
    const entry = pathToFileURL(createRequire(import.meta.url).resolve('email-reply-parser'));
    const load = async <T>(file: string): Promise<T> =>
      ((await import(new URL(file, entry).href)) as { default: T }).default;
    const Base = await load<ParserClass>('./parser/emailparser.js');
    const lists = await load<{ quoteHeadersRegex: RegExp[]; signatureRegex: RegExp[] }>('./regex.js');
    const all = [...lists.quoteHeadersRegex, ...lists.signatureRegex];
    if (!all.every((r) => r instanceof RegExp && !r.global && !r.sticky)) return null;
    const headers = lists.quoteHeadersRegex.map(filtered);
    const signatures = lists.signatureRegex.map(filtered);
    const anyOf = (list: Filtered[], text: string): boolean => {
      let lower: string | undefined;
      const lowered = () => (lower ??= text.toLowerCase());
      return list.some((f) => matches(f, text, lowered));
    };
    /** The library's `fixBrokenSignatures`: a quote header's first group on one line (its newlines as spaces). */
    const fixBrokenSignatures = (text: string): string => {
      let fixed = text;
      for (const f of headers) {
        if (f.literal !== undefined && !fixed.includes(f.literal)) continue; // no `i` among the headers' entries
        const found = fixed.match(f.regex);
        if (found) {
          const [, group] = found as unknown as [string, string];
          fixed = fixed.replace(group, group.replace(/\n/g, ' '));
        }
      }
      return fixed;
    };
    return class extends Base {
      override parse(input: string): { getVisibleText(): string } {
        const text = fixBrokenSignatures(input.replace(/\r\n/g, '\n'));
        const verdicts = new Map<string, boolean>();
        const isSignature = (line: string): boolean => {
          let verdict = verdicts.get(line);
          if (verdict === undefined) {
            verdict = anyOf(signatures, line);
            verdicts.set(line, verdict);
          }
          return verdict;
        };
        const drafts: Draft[] = [];
        let draft: Draft | null = null;
        const lines = text.split('\n');
        for (let i = lines.length - 1; i >= 0; i--) {
          let line = lines[i] as string;
          if (!isSignature(line)) line = line.trimEnd();
          if (draft) {
            const last = draft.lines[draft.lines.length - 1] as string;
            if (isSignature(last)) {
              draft.isSignature = true;
              drafts.push(draft);
              draft = null;
            } else if (line === '' && anyOf(headers, last)) {
              draft.isQuoted = true;
              drafts.push(draft);
              draft = null;
            }
          }
          const isQuoted = line.startsWith('>');
          if (
            draft === null ||
            !(draft.isQuoted === isQuoted || (draft.isQuoted && (anyOf(headers, line) || line === '')))
          ) {
            if (draft) drafts.push(draft);
            draft = { lines: [], isQuoted, isSignature: false };
          }
          draft.lines.push(line);
        }
        if (draft) drafts.push(draft);
        const visible: string[] = [];
        for (let i = drafts.length - 1; i >= 0; i--) {
          const d = drafts[i] as Draft;
          if (d.isQuoted || d.isSignature || d.lines.join('') === '') continue; // hidden, as the library's addFragment
          const content = d.lines.reverse().join('\n');
          visible.push(content.startsWith('\n') ? content.slice(1) : content);
        }
        let joined = visible.join('\n');
        let end = joined.length;
        while (end > 0 && joined.charCodeAt(end - 1) === 0x7e) end--; // `~`
        joined = joined.slice(0, end);
        return { getVisibleText: () => joined };
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
