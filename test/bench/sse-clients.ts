/**
 * SSE client process of `npm run bench`: opens `count` raw HTTP/1.1 connections to `GET path` (at most 200
 * handshakes at a time) and keeps them open, recording for each connection when a frame with `"round":N` arrives.
 * argv[2] JSON `{ port, path, count, localAddress? }`. IPC: sends `{ ready, failed }` once every connection answered 200 (or
 * failed); on `{ collect: N }` answers `{ arrivals: number[] }` (wall-clock ms, one per connection that saw round N);
 * on `{ close: true }` ends every socket and exits. Loopback only; bounded by count.
 */
import { connect, type Socket } from 'node:net';

const { port, path, count, localAddress } = JSON.parse(process.argv[2]!) as {
  port: number;
  path: string;
  count: number;
  /** Source address of every connection (a loopback address of its own per client process). */
  localAddress?: string;
};
const sockets: Socket[] = [];
const arrivals = new Map<number, number[]>();
let ok = 0;
let failed = 0;
const request = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`;
const ROUND = /"round":(\d+)/g;

function open(): Promise<void> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
    let first = true;
    const seen = new Set<number>();
    s.setNoDelay(true);
    s.on('connect', () => s.write(request));
    s.on('data', (chunk: Buffer) => {
      const now = performance.timeOrigin + performance.now();
      const text = chunk.toString('latin1');
      if (first) {
        first = false;
        if (text.startsWith('HTTP/1.1 200')) ok++;
        else {
          failed++;
          s.destroy();
        }
        resolve();
      }
      for (const m of text.matchAll(ROUND)) {
        const n = Number(m[1]);
        if (seen.has(n)) continue;
        seen.add(n);
        const list = arrivals.get(n) ?? [];
        arrivals.set(n, list);
        list.push(now);
      }
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
process.send!({ ready: ok, failed });
process.on('message', (m: { collect?: number; close?: boolean }) => {
  if (m.collect !== undefined) process.send!({ arrivals: arrivals.get(m.collect) ?? [] });
  if (m.close) {
    for (const s of sockets) s.destroy();
    process.exit(0);
  }
});
