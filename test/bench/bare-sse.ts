/**
 * The bare SSE broadcaster of `npm run bench`: node:http holding `text/event-stream` responses, one `: heartbeat`
 * timer for all of them (15 s, as the service's default), and `POST /publish` that formats one frame once and writes
 * it to every open stream. No database. Prints `listening <port>` when ready. Loopback only.
 */
import { createServer, type ServerResponse } from 'node:http';

const streams = new Set<ServerResponse>();
let nextId = 1;

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url?.startsWith('/api/events')) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
    });
    res.write('retry: 1000\n: connected\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
    return;
  }
  if (req.method === 'POST' && req.url === '/publish') {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { eventType: string; payload: unknown };
      const id = nextId++;
      const data = JSON.stringify({
        channel: body.eventType.split('.')[0],
        eventType: body.eventType,
        payload: body.payload,
        customerId: 'bare',
        timestamp: new Date().toISOString(),
      });
      const frame = `event: ${body.eventType}\nid: ${id}\ndata: ${data}\n\n`;
      const text = JSON.stringify({ id: String(id) });
      res.writeHead(202, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      for (const s of streams) s.write(frame);
    });
    return;
  }
  res.writeHead(404).end();
});
setInterval(() => {
  for (const s of streams) s.write(': heartbeat\n\n');
}, 15_000).unref();
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
