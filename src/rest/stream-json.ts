import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/**
 * Answers `{"<key>": [...items], "nextCursor": null}` from `chunks` as it reads them (a list answered whole, spec
 * 4.1/4.2), so the response never holds the whole list: the JSON is written chunk by chunk through a Readable.
 * `first` is the first chunk, already read by the caller, so errors before anything is sent (bad cursor, missing
 * scope, database down) still answer with the one error body and status; an error after the first byte ends the
 * connection (a client sees a truncated, invalid JSON body, never a valid partial list).
 */
export function sendJsonList<T>(
  reply: FastifyReply,
  key: string,
  first: IteratorResult<T[]>,
  chunks: AsyncGenerator<T[]>,
): FastifyReply {
  async function* body(): AsyncGenerator<string> {
    yield `{${JSON.stringify(key)}:[`;
    let comma = false;
    let next = first;
    while (!next.done) {
      for (const item of next.value) {
        yield (comma ? ',' : '') + JSON.stringify(item);
        comma = true;
      }
      next = await chunks.next();
    }
    yield '],"nextCursor":null}';
  }
  return reply.type('application/json; charset=utf-8').send(Readable.from(body()));
}
