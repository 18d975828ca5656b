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

/** A seeded stream of [0, 1) (LCG), so a failing text can be made again. */
function seeded(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

/** Lines the parser treats apart: signatures, quote headers (one and two lines), quotes, blanks, odd whitespace. */
const pieces = [
  'Hello,',
  'Thanks for the quick answer, see you on Friday.',
  'plain text with trailing spaces   ',
  '\tindented with a tab',
  '   ',
  '',
  '',
  '> quoted line',
  '>> nested quote',
  '>',
  ' > not a quote (indented)',
  'On Tue, 24 Nov 2026 at 10:02, Support <support@example.com> wrote:',
  'On Tue, 24 Nov 2026 at 10:02, Support',
  '<support@example.com> wrote:',
  'Le mar. 24 nov. 2026 à 10:02, Support <support@example.com> a écrit :',
  'Am 24.11.2026 um 10:02 schrieb Support <support@example.com>:',
  'From: Support <support@example.com>',
  '-----Original Message-----',
  '--',
  '-- ',
  '__',
  'Sent from my iPhone',
  'Get Outlook for iOS',
  'Regards,',
  'Best regards',
  'Cheers!',
  'Cordialement,',
  'Envoyé de mon iPhone',
  '~~~',
  'tilde at the end ~~',
  'emoji 😀 and a lone surrogate \ud83d here',
  "dollar $& and $1 and $' in text",
  'windows line\r',
  'Support on Tue 24 at 10:02 wrote:',
  'El lun, 24 nov 2026, Support <support@example.com> escribió:',
  'Den 24. nov. 2026 skrev Support <support@example.com>:',
  'Bien à vous',
  'BONNE JOURNÉE!',
  'REGARDS',
  'Kind regards,',
  'CORDIALEMENT',
  'Von: Support <support@example.com>',
]; // 'Den', 'skrev', 'Von' and the upper-case ones reach regexes that ignore case or need a literal

describe('the quick parser against the stock one on generated texts', () => {
  it('gives the stock parser’s visible text for each of 3,000 texts', () => {
    const random = seeded(24);
    let differentFromWhole = 0;
    for (let n = 0; n < 3_000; n++) {
      const count = 1 + Math.floor(random() * 25);
      const lines = Array.from({ length: count }, () => pieces[Math.floor(random() * pieces.length)] as string);
      const text = lines.join(random() < 0.2 ? '\r\n' : '\n') + (random() < 0.5 ? '\n' : '');
      const lf = text.replace(/\r\n/g, '\n');
      // extractReplyText's own contract around the parser: the cut, then the whole text when nothing is visible.
      const visible = new EmailReplyParser().read(withoutTrailingQuote(lf)).getVisibleText().trim();
      const expected = visible === '' ? text.trim() : visible;
      if (expected !== text.trim()) differentFromWhole++;
      expect(extractReplyText(text), JSON.stringify(text)).toBe(expected);
    }
    // The texts exercise the parser: most hide something (a quote, a signature).
    expect(differentFromWhole).toBeGreaterThan(1_500);
  });
});
