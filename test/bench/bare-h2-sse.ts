/**
 * The bare HTTP/2 SSE broadcaster of `npm run bench -- --sse-transport h2`: a node:http2 secure server (the
 * certificate files `TLS_CERT`/`TLS_KEY` of the environment, the service's; ALPN h2 and http/1.1, at most 256
 * streams per connection as the service) with the same fan-out as bare-sse.ts (test/bench/bare-sse-fanout.ts),
 * through Node's HTTP/2 compatibility API. No database. Prints `listening <port>` when ready. Loopback only.
 */
import { readFileSync } from 'node:fs';
import { createSecureServer } from 'node:http2';
import { sseFanout } from './bare-sse-fanout.js';

const server = createSecureServer(
  {
    allowHTTP1: true,
    cert: readFileSync(process.env.TLS_CERT!),
    key: readFileSync(process.env.TLS_KEY!),
    settings: { maxConcurrentStreams: 256 },
  },
  sseFanout(),
);
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
