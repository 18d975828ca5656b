/**
 * The request handler of both bare SSE broadcasters of `npm run bench` (bare-sse.ts on node:http, bare-h2-sse.ts on
 * node:http2): `GET /api/events…` holds a `text/event-stream` response; `POST /publish` formats one frame once and
 * writes it to every open stream; anything else is 404. One `: heartbeat` timer for all streams (15 s, as the
 * service's default). No database.
 */
/** What the handler uses of node:http's and node:http2's (compatibility API) request. */
interface Req {
  method?: string;
  url?: string;
  on(event: 'data', fn: (chunk: Buffer) => void): unknown;
  on(event: 'end', fn: () => void): unknown;
}
/** What the handler uses of node:http's and node:http2's (compatibility API) response. */
interface Res {
  writeHead(status: number, headers?: Record<string, string | number>): { end(): unknown };
  write(chunk: string): boolean;
  end(chunk: string): unknown;
  on(event: 'close', fn: () => void): unknown;
}

/** @param streamHeaders headers of a stream response besides content-type and cache-control. */
export function sseFanout(streamHeaders: Record<string, string> = {}): (req: Req, res: Res) => void {
  const streams = new Set<Res>();
  let nextId = 1;
  setInterval(() => {
    for (const s of streams) s.write(': heartbeat\n\n');
  }, 15_000).unref();
  return (req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/api/events')) {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        ...streamHeaders,
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
  };
}
