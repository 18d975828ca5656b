import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** What {@link rawGet} answers: the status, the response headers as node:http gives them, and the body bytes. */
export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A GET over node:http, which (unlike fetch) neither adds `Accept-Encoding` nor decompresses: the test sees exactly
 * the headers it sends and the bytes on the wire. Rejects on a connection error.
 * @param url absolute http:// URL
 * @param headers request headers, sent as given
 */
export function rawGet(url: string, headers: Record<string, string>): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}
