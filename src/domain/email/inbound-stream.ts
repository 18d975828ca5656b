import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { AppContext } from '../../app-context.js';
import { BlobWriter } from './blobs.js';
import { deliverInbound, type Envelope, type StoredInbound } from './inbound.service.js';
import { type InboundMessage, MimeError } from './mail-transport.port.js';

/** How a streamed inbound message ended (see {@link receiveInboundStream}). */
export type InboundOutcome =
  | { kind: 'stored'; stored: StoredInbound[] }
  /** Larger than the limit: nothing kept (SMTP 552 5.3.4). */
  | { kind: 'too-large' }
  /** Cannot be parsed, permanently (SMTP 554 5.6.0): nothing kept. */
  | { kind: 'unparseable'; reason: string };

/**
 * Receives one inbound message from a stream (the SMTP DATA stream) with bounded memory (issue 26 item 3): every
 * chunk goes at once to the blob store (one row per 256 KiB, {@link BlobWriter}) and to the streaming MIME reader
 * (attachment bytes counted and dropped), waiting for both, so memory stays at a few chunks plus the text and
 * HTML bodies whatever the message size. The raw message is stored once and shared by every recipient's copy
 * (the hook where issue 20 prepends `Authentication-Results` is {@link deliverInbound}'s caller: verdicts are
 * computed on the same stream and stored on the rows, not written into the raw bytes). Nothing is kept for a
 * message over `maxBytes`, an unparseable one, a re-delivery already stored, or a storage failure.
 * @throws the storage error (the SMTP listener answers 451 so the sender retries).
 */
export async function receiveInboundStream(
  ctx: AppContext,
  source: AsyncIterable<Buffer>,
  envelope: Envelope,
  maxBytes: number,
): Promise<InboundOutcome> {
  const writer = new BlobWriter(ctx.db, ctx.clock.now());
  const toParser = new PassThrough();
  let parseError: unknown;
  const parsing: Promise<InboundMessage | null> = ctx.mail.parseStream(toParser).catch((err: unknown) => {
    parseError = err;
    toParser.resume();
    return null;
  });
  let size = 0;
  let storeError: unknown;
  try {
    for await (const chunk of source) {
      size += chunk.length;
      // Keep reading to the end of DATA (the SMTP dialogue needs it), but stop keeping anything.
      if (size > maxBytes || parseError || storeError) continue;
      if (!toParser.write(chunk)) await Promise.race([once(toParser, 'drain'), parsing]);
      try {
        await writer.write(chunk);
      } catch (err) {
        storeError = err;
      }
    }
  } finally {
    toParser.end();
  }
  const parsed = await parsing;
  if (storeError) {
    await writer.abort();
    throw storeError;
  }
  if (size > maxBytes) {
    await writer.abort();
    return { kind: 'too-large' };
  }
  if (!parsed) {
    await writer.abort();
    if (parseError instanceof MimeError) return { kind: 'unparseable', reason: parseError.message };
    throw parseError;
  }
  let blob: { id: string };
  try {
    blob = await writer.finish();
  } catch (err) {
    await writer.abort();
    throw err;
  }
  try {
    const stored = await deliverInbound(ctx, parsed, envelope, { rawBlobId: blob.id });
    if (!stored.some((s) => s.created)) await writer.abort();
    return { kind: 'stored', stored };
  } catch (err) {
    await writer.abort();
    throw err;
  }
}
