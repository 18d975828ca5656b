// A large multipart message for the inbound-memory checks: scripts/smtp-burst.mjs (the 50 x 10 MB burst run by
// hand) and test/abuse/inbound-memory.test.ts (12 x 10 MB in CI) send the same shape. Types: large-mime.d.mts.
import { randomBytes } from 'node:crypto';

/**
 * A MIME body of about `bytes` bytes (never less than one base64 line): a short text part and a base64 attachment
 * (`blob.bin`, random bytes) in CRLF lines of 76 characters (RFC 2045 6.8), closed by the final boundary.
 * `headers` (CRLF-free lines, e.g. `Subject: x`) come first; `Content-Type: multipart/mixed` with the boundary is
 * added after them when `withContentType` is true (the default), so a caller passing no headers gets the body alone.
 * @param {{ bytes: number, boundary?: string, headers?: string[], withContentType?: boolean }} options
 * @returns {Buffer}
 */
export function largeMime({ bytes, boundary = 'large-mime-boundary', headers = [], withContentType = true }) {
  const head = [
    ...headers,
    ...(withContentType && headers.length > 0
      ? ['MIME-Version: 1.0', `Content-Type: multipart/mixed; boundary="${boundary}"`]
      : []),
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'A large attachment follows.',
    `--${boundary}`,
    'Content-Type: application/octet-stream; name="blob.bin"',
    'Content-Transfer-Encoding: base64',
    'Content-Disposition: attachment; filename="blob.bin"',
    '',
    '',
  ].join('\r\n');
  const line = `${randomBytes(57).toString('base64')}\r\n`; // 76 characters + CRLF
  const tail = `--${boundary}--\r\n`;
  const lines = Math.max(1, Math.floor((bytes - head.length - tail.length) / line.length));
  return Buffer.concat([Buffer.from(head), Buffer.from(line.repeat(lines)), Buffer.from(tail)]);
}
