// The HTTP port over TLS (HTTP_TLS_CERT/HTTP_TLS_KEY): HTTP/2 by ALPN for REST, GraphQL, graphql-sse and the SSE
// stream, and HTTP/1.1 over TLS on the same port, through real node:http2 and node:https clients.
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { type ClientHttp2Session, type ClientHttp2Stream, connect, constants } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import path from 'node:path';
import selfsigned from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestAccount, type TestApp, tempDir } from '../helpers/app.js';

const METRICS_TOKEN = 'metrics-token-of-the-http2-test-0123456789';

/** One whole HTTP/2 answer. */
async function h2(
  session: ClientHttp2Session,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const stream = session.request(headers, { endStream: body === undefined });
  if (body !== undefined) stream.end(body);
  const [answer] = (await once(stream, 'response')) as [Record<string, unknown>];
  stream.setEncoding('utf8');
  let text = '';
  for await (const chunk of stream) text += chunk;
  return { status: Number(answer[':status']), headers: answer, text };
}

/** An open HTTP/2 response stream whose text accumulates; `waitFor` resolves once it matches. */
async function h2Stream(session: ClientHttp2Session, headers: Record<string, string>) {
  const stream: ClientHttp2Stream = session.request(headers);
  const [answer] = (await once(stream, 'response')) as [Record<string, unknown>];
  stream.setEncoding('utf8');
  let text = '';
  const waiters: (() => void)[] = [];
  stream.on('data', (chunk: string) => {
    text += chunk;
    for (const w of waiters.splice(0)) w();
  });
  return {
    status: Number(answer[':status']),
    headers: answer,
    stream,
    text: () => text,
    async waitFor(re: RegExp): Promise<RegExpExecArray> {
      const deadline = Date.now() + 5000;
      for (;;) {
        const m = re.exec(text);
        if (m) return m;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${re} in ${JSON.stringify(text)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
  };
}

describe('HTTP port with HTTP_TLS_CERT/HTTP_TLS_KEY: HTTP/2 and HTTP/1.1 over TLS', () => {
  let t: TestApp;
  let a: TestAccount;
  let cleanup: () => Promise<void>;
  let session: ClientHttp2Session;
  let auth: Record<string, string>;
  let certFile: string;
  // Node's HTTP/2 compatibility layer drops a connection-specific header (`Connection: keep-alive`…) with this warning.
  const connectionHeaderWarnings: string[] = [];
  const onWarning = (w: Error) => {
    if (/connection header/i.test(w.message)) connectionHeaderWarnings.push(w.stack ?? w.message);
  };

  beforeAll(async () => {
    process.on('warning', onWarning);
    const dir = await tempDir();
    cleanup = dir.cleanup;
    const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256',
    });
    writeFileSync(path.join(dir.dir, 'cert.pem'), pems.cert);
    writeFileSync(path.join(dir.dir, 'key.pem'), pems.private);
    certFile = path.join(dir.dir, 'cert.pem');
    t = await startApp({
      env: {
        HTTP_TLS_CERT: path.join(dir.dir, 'cert.pem'),
        HTTP_TLS_KEY: path.join(dir.dir, 'key.pem'),
        METRICS_TOKEN,
        EVENT_STREAM_HEARTBEAT_MS: '100',
      },
    });
    // The test helpers' fetch does not trust the self-signed certificate: the key is made directly.
    const { createAccount } = await import('../../src/domain/accounts/account.service.js');
    const made = await createAccount(t.app.ctx.db, { name: 'h2' });
    a = { accountId: made.accountId, apiKey: made.apiKey } as TestAccount;
    auth = { authorization: `Bearer ${made.apiKey}` };
    session = connect(t.url, { rejectUnauthorized: false });
    await once(session, 'connect');
  });
  afterAll(async () => {
    process.off('warning', onWarning);
    session?.close();
    await t?.close();
    await cleanup?.();
  });

  const publish = async (eventType = 'sms.sent') => {
    const res = await h2(
      session,
      { ':method': 'POST', ':path': '/api/events', 'content-type': 'application/json', ...auth },
      JSON.stringify({ eventType, payload: { n: 1 } }),
    );
    expect(res.status).toBe(202);
    return (JSON.parse(res.text) as { id: string }).id;
  };

  it('refuses to start with only one of HTTP_TLS_CERT/HTTP_TLS_KEY, a key file that is not there, or no key in it', async () => {
    await expect(startApp({ env: { HTTP_TLS_CERT: certFile } })).rejects.toThrow(
      /HTTP_TLS_CERT, HTTP_TLS_KEY: set both or neither/,
    );
    await expect(startApp({ env: { HTTP_TLS_CERT: certFile, HTTP_TLS_KEY: `${certFile}.missing` } })).rejects.toThrow(
      /ENOENT/,
    );
    // The certificate given as its own key: no private key in it.
    await expect(startApp({ env: { HTTP_TLS_CERT: certFile, HTTP_TLS_KEY: certFile } })).rejects.toThrow();
  });

  it('serves https and negotiates h2 by ALPN', () => {
    expect(t.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(session.alpnProtocol).toBe('h2');
  });

  it('answers REST over HTTP/2', async () => {
    const res = await h2(session, { ':method': 'GET', ':path': '/api/events/catalog', ...auth });
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
    expect(JSON.parse(res.text).channels.map((c: { name: string }) => c.name)).toContain('sms');
    const refused = await h2(session, { ':method': 'GET', ':path': '/api/events/catalog' });
    expect(refused.status).toBe(401);
  });

  it('answers GraphQL over HTTP/2, POST (fast path) and GET (through Yoga)', async () => {
    const post = await h2(
      session,
      { ':method': 'POST', ':path': '/graphql', 'content-type': 'application/json', ...auth },
      JSON.stringify({ query: '{ viewer { accountId } }' }),
    );
    expect(post.status).toBe(200);
    expect(JSON.parse(post.text)).toEqual({ data: { viewer: { accountId: a.accountId } } });
    const get = await h2(session, {
      ':method': 'GET',
      ':path': `/graphql?query=${encodeURIComponent('{ viewer { accountId } }')}`,
      accept: 'application/graphql-response+json',
      ...auth,
    });
    expect(get.status).toBe(200);
    expect(JSON.parse(get.text)).toEqual({ data: { viewer: { accountId: a.accountId } } });
  });

  it('streams /api/events over HTTP/2: a live event, heartbeats, replay after Last-Event-ID, close on reset', async () => {
    const sse = await h2Stream(session, {
      ':method': 'GET',
      ':path': '/api/events?channels=sms',
      accept: 'text/event-stream',
      ...auth,
    });
    expect(sse.status).toBe(200);
    expect(sse.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(sse.headers.connection).toBeUndefined();
    await sse.waitFor(/: connected\n\n/);
    const first = await publish();
    await sse.waitFor(new RegExp(`event: sms\\.sent\\nid: ${first}\\ndata: \\{`));
    await sse.waitFor(/: heartbeat\n\n/);
    const second = await publish('sms.delivered');
    await sse.waitFor(new RegExp(`id: ${second}\\n`));

    // Resume after the first: the second is replayed, then live events follow.
    const resumed = await h2Stream(session, {
      ':method': 'GET',
      ':path': '/api/events?channels=sms',
      'last-event-id': first,
      ...auth,
    });
    expect(resumed.status).toBe(200);
    await resumed.waitFor(new RegExp(`id: ${second}\\n`));
    expect(resumed.text()).not.toContain(`id: ${first}\n`);
    const third = await publish();
    await resumed.waitFor(new RegExp(`id: ${third}\\n`));

    // A client reset (RST_STREAM) ends the server's stream; the connection stays usable.
    const openStreams = async () => {
      const res = await h2(session, {
        ':method': 'GET',
        ':path': '/metrics',
        authorization: `Bearer ${METRICS_TOKEN}`,
      });
      expect(res.status).toBe(200);
      return Number(/^switchboard_open_streams\{transport="sse"\} (\d+)$/m.exec(res.text)?.[1]);
    };
    expect(await openStreams()).toBe(2);
    sse.stream.close(constants.NGHTTP2_CANCEL);
    resumed.stream.close(constants.NGHTTP2_CANCEL);
    const deadline = Date.now() + 5000;
    while ((await openStreams()) !== 0) {
      if (Date.now() > deadline) throw new Error('the server kept the reset streams open');
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  it('streams a GraphQL subscription over HTTP/2 (graphql-sse at /graphql/stream)', async () => {
    const query = encodeURIComponent('subscription { events { ... on Event { id eventType } } }');
    const sub = await h2Stream(session, {
      ':method': 'GET',
      ':path': `/graphql/stream?query=${query}`,
      accept: 'text/event-stream',
      ...auth,
    });
    expect(sub.status).toBe(200);
    expect(sub.headers.connection).toBeUndefined();
    // The subscription is live once the server has it: publish until one arrives (none is lost after that).
    const id = await publish();
    const deadline = Date.now() + 5000;
    let seen = false;
    while (!seen) {
      try {
        await sub.waitFor(/"id":"\d+"/);
        seen = true;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await publish();
      }
    }
    expect(BigInt(/"id":"(\d+)"/.exec(sub.text())![1]!)).toBeGreaterThanOrEqual(BigInt(id));
    sub.stream.close(constants.NGHTTP2_CANCEL);
  });

  it('never sets a header HTTP/2 forbids', () => {
    expect(connectionHeaderWarnings).toEqual([]);
  });

  it('still answers HTTP/1.1 over TLS on the same port, SSE included', async () => {
    const get = (urlPath: string) =>
      new Promise<{ status: number; headers: Record<string, unknown>; alpn: unknown; first: string; end: () => void }>(
        (resolve, reject) => {
          const req = httpsRequest(`${t.url}${urlPath}`, {
            headers: auth,
            rejectUnauthorized: false,
            // A TLS option node:https passes through, though its RequestOptions type does not list it.
            ...({ ALPNProtocols: ['http/1.1'] } as object),
          });
          req.on('response', (res) => {
            res.setEncoding('utf8');
            res.once('data', (first: string) =>
              resolve({
                status: res.statusCode!,
                headers: res.headers,
                alpn: (res.socket as { alpnProtocol?: unknown }).alpnProtocol,
                first,
                end: () => req.destroy(),
              }),
            );
          });
          req.on('error', reject);
          req.end();
        },
      );
    const catalog = await get('/api/events/catalog');
    expect(catalog.alpn).toBe('http/1.1');
    expect(catalog.status).toBe(200);
    expect(catalog.first).toContain('"channels"');
    catalog.end();
    const sse = await get('/api/events');
    expect(sse.status).toBe(200);
    expect(sse.headers.connection).toBe('keep-alive');
    expect(sse.first).toContain(': connected');
    sse.end();
  });
});
