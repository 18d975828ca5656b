/**
 * A MIME body of about `bytes` bytes: a short text part and a base64 attachment in CRLF lines of 76 characters.
 * `headers` come first, then (when `withContentType`, the default, and headers were given) `MIME-Version` and the
 * multipart `Content-Type` naming `boundary`. See large-mime.mjs.
 */
export function largeMime(options: {
  bytes: number;
  boundary?: string;
  headers?: string[];
  withContentType?: boolean;
}): Buffer;
