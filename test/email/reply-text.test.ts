import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import EmailReplyParser from 'email-reply-parser';
import { describe, expect, it } from 'vitest';
import { extractReplyText, withoutTrailingQuote } from '../../src/domain/email/content.js';

/**
 * Issue 24 (inbound CPU per message): `extractReplyText` cuts a reply's trailing quoted history before
 * email-reply-parser reads it. Differential test: the visible text must be the parser's own for the whole text, on
 * the parser's own test mails (test/email/fixtures/reply-parser, MIT, crisp-oss/email-reply-parser v2.3.5), alone
 * and with an earlier message quoted after them in the shapes mail clients write.
 */
const dir = fileURLToPath(new URL('./fixtures/reply-parser/', import.meta.url));
const mails = readdirSync(dir)
  .filter((f) => f.endsWith('.txt'))
  .sort()
  .map((f) => ({ name: f, text: readFileSync(dir + f, 'utf8').replace(/\r\n/g, '\n') }));

/** The parser's visible text for the whole text, as extractReplyText computed it before the cut. */
function parserOwn(text: string): string {
  const visible = new EmailReplyParser().read(text).getVisibleText().trim();
  return visible === '' ? text.trim() : visible;
}

const quoted = (text: string) =>
  text
    .split('\n')
    .map((l) => (l === '' ? '>' : `> ${l}`))
    .join('\n');
const header = 'On Tue, 24 Nov 2026 at 10:02, Support <support@example.com> wrote:';

/** Ways a reply ends with quoted history: (reply, earlier) => whole text. */
const shapes: Record<string, (reply: string, earlier: string) => string> = {
  'header after a blank line': (r, e) => `${r}\n\n${header}\n${quoted(e)}\n`,
  'header right under the text': (r, e) => `${r}\n${header}\n${quoted(e)}`,
  'header split over two lines': (r, e) =>
    `${r}\n\nOn Tue, 24 Nov 2026 at 10:02, Support\n<support@example.com> wrote:\n\n${quoted(e)}\n\n\n`,
  'no header': (r, e) => `${r}\n${quoted(e)}`,
  'nested quotes and blank lines': (r, e) => `${r}\n\n${header}\n${quoted(`${e}\n\n${quoted(e)}`)}\n  \n\n`,
};

describe('reply text without the trailing quoted history', () => {
  it('is the parser’s own visible text for each of its test mails', () => {
    expect(mails.length).toBeGreaterThan(80);
    for (const m of mails) expect(extractReplyText(m.text), m.name).toBe(parserOwn(m.text));
  });

  it.each(Object.keys(shapes))('is the parser’s own when the mail quotes an earlier one: %s', (shape) => {
    const make = shapes[shape] as (r: string, e: string) => string;
    let cut = 0;
    mails.forEach((m, i) => {
      const earlier = (mails[(i + 7) % mails.length] as { text: string }).text;
      const whole = make(m.text.replace(/\n+$/, ''), earlier);
      if (withoutTrailingQuote(whole).length < whole.length) cut++;
      expect(extractReplyText(whole), m.name).toBe(parserOwn(whole));
    });
    // The cut is exercised, not skipped: every whole text ends with quoted lines after the first one.
    expect(cut).toBe(mails.length);
  });

  it('keeps the first quoted line and stops at the last line that is neither quoted nor blank', () => {
    expect(withoutTrailingQuote('Hi\n\nOn Mon, A wrote:\n> one\n>\n> two\n\n')).toBe('Hi\n\nOn Mon, A wrote:\n> one');
    expect(withoutTrailingQuote('> one\nreply\n> two\n> three')).toBe('> one\nreply\n> two');
    expect(withoutTrailingQuote('no quote\n\n')).toBe('no quote\n\n');
    expect(withoutTrailingQuote('> only\n> quoted')).toBe('> only');
    expect(withoutTrailingQuote('  > indented is not a quote')).toBe('  > indented is not a quote');
  });
});
