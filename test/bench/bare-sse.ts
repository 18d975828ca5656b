/**
 * The bare SSE broadcaster of `npm run bench`: node:http holding `text/event-stream` responses and `POST /publish`
 * writing one frame to all of them (test/bench/bare-sse-fanout.ts). No database. Prints `listening <port>` when
 * ready. Loopback only.
 */
import { createServer } from 'node:http';
import { sseFanout } from './bare-sse-fanout.js';

const server = createServer(sseFanout({ connection: 'keep-alive' }));
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
