/**
 * SSE client process of `npm run bench`: opens `count` raw HTTP/1.1 connections to `GET path` (at most 200
 * handshakes at a time) and keeps them open, recording for each connection when a frame with `"round":N` arrives.
 * argv[2] JSON `{ port, path, count, localAddress? }`. IPC: sends `{ ready, failed }` once every connection answered 200 (or
 * failed); on `{ collect: N }` answers `{ arrivals: number[] }` (wall-clock ms, one per connection that saw round N);
 * on `{ close: true }` ends every socket and exits. Loopback only; bounded by count.
 */
import { connect, type Socket } from 'node:net';
import { recordRounds, serve } from './sse-arrivals.js';

const { port, path, count, localAddress } = JSON.parse(process.argv[2]!) as {
  port: number;
  path: string;
  count: number;
  /** Source address of every connection (a loopback address of its own per client process). */
  localAddress?: string;
};
const sockets: Socket[] = [];
let ok = 0;
let failed = 0;
const request = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`;

function open(): Promise<void> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
    let first = true;
    const seen = new Set<number>();
    s.setNoDelay(true);
    s.on('connect', () => s.write(request));
    s.on('data', (chunk: Buffer) => {
      if (first) {
        first = false;
        if (chunk.toString('latin1', 0, 12) === 'HTTP/1.1 200') ok++;
        else {
          failed++;
          s.destroy();
        }
        resolve();
      }
      recordRounds(seen, chunk);
    });
    s.on('error', () => {
      if (first) {
        first = false;
        failed++;
        resolve();
      }
    });
    sockets.push(s);
  });
}

let started = 0;
async function opener(): Promise<void> {
  while (started < count) {
    started++;
    await open();
  }
}
await Promise.all(Array.from({ length: Math.min(200, count) }, opener));
serve(ok, failed, () => {
  for (const s of sockets) s.destroy();
});
