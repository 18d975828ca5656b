/**
 * The bare baselines' HTTP helpers (test/bench/bare-server.ts, test/bench/bare-e2e.ts): node:http only, no framework.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** Answers `status` with `body` as JSON (UTF-8, with its content-length). */
export function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** The request's body parsed as JSON (`{}` when empty). @throws (rejects) what JSON.parse throws. */
export function readBody(req: IncomingMessage): Promise<any> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      try {
        resolve(parts.length ? JSON.parse(Buffer.concat(parts).toString('utf8')) : {});
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });
}

/**
 * Serves `handle` on 127.0.0.1:PORT (0: any free port) with keep-alive, answering 500 when it rejects before the
 * headers went out (else dropping the connection); prints `listening <port>` when ready; exits on SIGTERM.
 */
export function serve(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): void {
  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) send(res, 500, { error: { code: 'INTERNAL', message: String(err) } });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 72_000;
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
  });
  process.on('SIGTERM', () => process.exit(0));
}
