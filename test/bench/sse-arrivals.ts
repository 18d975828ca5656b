/**
 * What both SSE client processes of `npm run bench` (sse-clients.ts over HTTP/1.1, sse-h2-clients.ts over HTTP/2)
 * record and answer: per stream, the wall-clock time a frame with `"round":N` first arrives, and the IPC protocol
 * (`{ ready, failed }` once every stream answered; `{ collect: N }` → `{ arrivals: number[] }`; `{ close: true }`
 * closes everything and exits).
 */
const arrivals = new Map<number, number[]>();
const ROUND = /"round":(\d+)/g;

/** Records the rounds `chunk` carries for the stream whose rounds seen so far are `seen` (each round once). */
export function recordRounds(seen: Set<number>, chunk: Buffer): void {
  const now = performance.timeOrigin + performance.now();
  for (const m of chunk.toString('latin1').matchAll(ROUND)) {
    const n = Number(m[1]);
    if (seen.has(n)) continue;
    seen.add(n);
    const list = arrivals.get(n) ?? [];
    arrivals.set(n, list);
    list.push(now);
  }
}

/** Tells the orchestrator the streams are open, then answers its `collect` and `close` messages. */
export function serve(ready: number, failed: number, closeAll: () => void): void {
  process.send!({ ready, failed });
  process.on('message', (m: { collect?: number; close?: boolean }) => {
    if (m.collect !== undefined) process.send!({ arrivals: arrivals.get(m.collect) ?? [] });
    if (m.close) {
      closeAll();
      process.exit(0);
    }
  });
}
