/**
 * HTTP/2 SSE client process of `npm run bench -- --sse-transport h2`: opens `count` streams `GET path` over TLS
 * connections of `perConnection` streams each (node:http2, ALPN h2; the certificate is the bench's self-signed one,
 * not checked), at most 20 connections opening at a time, and keeps them open, recording for each stream when a
 * frame with `"round":N` arrives. argv[2] JSON `{ port, path, count, perConnection, localAddress? }`. IPC: as
 * test/bench/sse-clients.ts (`{ ready, failed }`, `{ collect: N }` → `{ arrivals }`, `{ close: true }`). Loopback
 * only; bounded by count.
 */
import { type ClientHttp2Session, connect } from 'node:http2';
import { recordRounds, serve } from './sse-arrivals.js';

const { port, path, count, perConnection, localAddress } = JSON.parse(process.argv[2]!) as {
  port: number;
  path: string;
  count: number;
  /** Streams multiplexed on one connection (below the server's SETTINGS_MAX_CONCURRENT_STREAMS). */
  perConnection: number;
  /** Source address of every connection (a loopback address of its own per client process). */
  localAddress?: string;
};
const sessions: ClientHttp2Session[] = [];
let ok = 0;
let failed = 0;

/** One connection with `n` streams; resolves once every stream answered (or failed). */
function openConnection(n: number): Promise<void> {
  return new Promise((resolveConnection) => {
    const session = connect(`https://127.0.0.1:${port}`, {
      rejectUnauthorized: false,
      ...(localAddress ? { localAddress } : {}),
    });
    sessions.push(session);
    session.on('error', () => {});
    let answered = 0;
    const done = () => {
      if (++answered === n) resolveConnection();
    };
    for (let i = 0; i < n; i++) {
      const stream = session.request({ ':path': path, accept: 'text/event-stream' });
      let first = true;
      const seen = new Set<number>();
      stream.on('response', (headers) => {
        first = false;
        if (headers[':status'] === 200) ok++;
        else {
          failed++;
          stream.close();
        }
        done();
      });
      stream.on('data', (chunk: Buffer) => recordRounds(seen, chunk));
      stream.on('error', () => {
        if (first) {
          first = false;
          failed++;
          done();
        }
      });
    }
  });
}

const sizes: number[] = [];
for (let left = count; left > 0; left -= perConnection) sizes.push(Math.min(perConnection, left));
let next = 0;
async function opener(): Promise<void> {
  while (next < sizes.length) await openConnection(sizes[next++]!);
}
await Promise.all(Array.from({ length: Math.min(20, sizes.length) }, opener));
serve(ok, failed, () => {
  for (const s of sessions) s.destroy();
});
