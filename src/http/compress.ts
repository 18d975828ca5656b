// Response compression through @fastify/compress: brotli or gzip as the client's Accept-Encoding asks, for bodies
// of 1 KiB and more of compressible types (JSON, HTML, JS, CSS…). `text/event-stream` is never compressed (the
// plugin's default type filter): SSE frames must reach the client as they are written, and the hijacked
// GET /api/events stream never passes through Fastify's send hooks anyway. GraphiQL's 9 MB page goes out as about
// 2 MB of brotli.
import { constants } from 'node:zlib';
import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';

/**
 * Registers compression on `http`. Must come after installIdempotency and before the routes: the plugin appends its
 * `onSend` to each route registered later, after the idempotency hook, so stored idempotent responses stay the
 * uncompressed bodies they replay as.
 */
export async function registerCompression(http: FastifyInstance): Promise<void> {
  await http.register(compress, {
    global: true,
    threshold: 1024,
    encodings: ['br', 'gzip', 'deflate'],
    // Brotli's default quality (11) takes seconds on GraphiQL's page; 4 compresses about as well as gzip -9, fast.
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } },
    // Requests are not decompressed: clients send JSON bodies as they are (and body limits count real bytes).
    globalDecompression: false,
  });
}
