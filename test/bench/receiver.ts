/**
 * The webhook receiver of `npm run bench`: node:http answering `POST /fast/<tag>` with 204 at once and holding
 * `POST /hang/<tag>` without an answer (a receiver that hangs). Records the arrival time (ms, wall clock) of every
 * request with its `x-switchboard-event-id` (or `x-bench-id`) header. Over IPC: `{ stats: tag }` answers
 * `{ arrivals: [[id, ms], …] }` for that tag; `{ reset: true }` forgets everything. Loopback only.
 */
import { createServer } from 'node:http';

const arrivals = new Map<string, [string, number][]>();

const server = createServer((req, res) => {
  const now = performance.timeOrigin + performance.now();
  const [, kind, tag = ''] = (req.url ?? '').split('/');
  const id = String(req.headers['x-switchboard-event-id'] ?? req.headers['x-bench-id'] ?? '');
  const list = arrivals.get(tag) ?? [];
  arrivals.set(tag, list);
  list.push([id, now]);
  req.resume();
  if (kind === 'hang') return; // never answers; the sender's timeout ends it
  req.on('end', () => res.writeHead(204).end());
});
server.keepAliveTimeout = 72_000;
server.maxRequestsPerSocket = 0;
process.on('message', (m: { stats?: string; reset?: boolean }) => {
  if (m.reset) arrivals.clear();
  if (m.stats !== undefined) process.send!({ arrivals: arrivals.get(m.stats) ?? [] });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
