import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import type { DomainContext } from '../kernel/context.js';
import type { EmailIdentity } from './identity.store.js';
import { deliverInbound } from './inbound.service.js';
import type { Envelope, StoredInbound } from './local-delivery.port.js';
import { BLOB_CHUNK_BYTES, BlobWriter } from './mail-blob.store.js';
import { type InboundMessage, MimeError } from './mail-transport.port.js';
import { noteMessagesStored } from './search-index.js';
import type { SenderAuthOutcome } from './sender-auth.js';

/** How a streamed inbound message ended (see {@link receiveInboundStream}). */
export type InboundOutcome =
  | { kind: 'stored'; stored: StoredInbound[] }
  /** Larger than the limit: nothing kept (SMTP 552 5.3.4). */
  | { kind: 'too-large' }
  /** Cannot be parsed, permanently (SMTP 554 5.6.0): nothing kept. */
  | { kind: 'unparseable'; reason: string };

/** What the caller adds to {@link receiveInboundStream}: the SMTP listener's sender authentication and operator mailbox. */
export interface InboundStreamHooks {
  /**
   * Sender authentication (issue 20) over the same bytes: `message` is the whole message once DATA ended when it
   * is held (below {@link HOLD_BYTES}: the same Buffer the parser reads), else a stream fed as the bytes arrive (no
   * second copy of the message is held); `dataEnd` resolves at the end of DATA (the check's deadline counts from
   * there). Throwing refuses the message (e.g. DMARC `p=reject`): nothing is kept and the error reaches the caller.
   */
  authenticate?: (message: Buffer | NodeJS.ReadableStream, dataEnd: Promise<void>) => Promise<SenderAuthOutcome>;
  /** Also handed the parsed message once authenticated (e.g. the operator mailbox of postmaster@/abuse@). */
  alsoDeliver?: (parsed: InboundMessage) => Promise<unknown>;
  /**
   * The identities the RCPT commands found, when every recipient was one (not looked up again: see
   * {@link deliverInbound}'s `stored.rcptIdentities`).
   */
  rcptIdentities?: EmailIdentity[];
}

/**
 * Largest message held whole until the end of DATA (bytes): below one blob chunk, which the blob writer holds in
 * memory anyway, so holding it adds no memory per message; larger mail streams (bounded memory, issue 26 item 3).
 */
const HOLD_BYTES = BLOB_CHUNK_BYTES - 1;

/** A message too large to hold, streamed to the parser, the authentication and the blob store as it arrives. */
interface Streamed {
  /** Hands one chunk to the three readers, waiting for their backpressure. */
  feed(chunk: Buffer): Promise<void>;
  /** Whether storing failed (nothing more is fed then). */
  failed(): boolean;
  storeError(): unknown;
  /** Ends the parser's and the authentication's streams (the end of DATA). */
  end(): void;
  parsing: Promise<InboundMessage | null>;
  authenticating?: Promise<{ auth?: SenderAuthOutcome; refusal?: unknown }>;
}

/**
 * Starts streaming a message larger than {@link HOLD_BYTES}: every chunk goes at once to the blob store (one row
 * per 256 KiB), to the streaming MIME reader and to the sender authentication, waiting for each.
 */
function startStreaming(
  ctx: DomainContext,
  writer: BlobWriter,
  dataEnd: Promise<void>,
  hooks: InboundStreamHooks,
  onParseError: (err: unknown) => void,
): Streamed {
  const toParser = new PassThrough();
  const parsing: Promise<InboundMessage | null> = ctx.mail.parseStream(toParser).catch((err: unknown) => {
    onParseError(err);
    toParser.resume();
    return null;
  });
  // The authentication's copy of the stream; once the check has settled it is drained, never written again.
  const toAuth = hooks.authenticate ? new PassThrough() : undefined;
  let authSettled = false;
  const authenticating =
    hooks.authenticate && toAuth
      ? hooks
          .authenticate(toAuth, dataEnd)
          .then(
            (auth) => ({ auth }),
            (refusal: unknown) => ({ refusal }),
          )
          .finally(() => {
            authSettled = true;
            toAuth.resume();
          })
      : undefined;
  let storeError: unknown;
  return {
    parsing,
    ...(authenticating ? { authenticating } : {}),
    failed: () => storeError !== undefined,
    storeError: () => storeError,
    end() {
      toParser.end();
      toAuth?.end();
    },
    async feed(chunk) {
      if (!toParser.write(chunk)) await Promise.race([once(toParser, 'drain'), parsing]);
      if (toAuth && authenticating && !authSettled && !toAuth.write(chunk)) {
        await Promise.race([once(toAuth, 'drain'), authenticating]);
      }
      try {
        await writer.write(chunk);
      } catch (err) {
        storeError = err;
      }
    },
  };
}

/** DATA's start as {@link readStart} read it. */
interface Start {
  /** The chunks kept, in order (none once the stream passed `maxBytes`). */
  held: Buffer[];
  /** Bytes read so far. */
  size: number;
  /** Whether the stream ended (else it is paused just past `hold` bytes, the last chunk read among `held`). */
  ended: boolean;
}

/**
 * Reads the start of `stream` by its `data` events, without an async iterator (one promise for a small message
 * instead of two or more per chunk; issue 24): keeps the chunks while the total is at most `hold` bytes, resolves at
 * the end of the stream (`ended`), or pauses the stream at the first chunk past `hold` and resolves with it kept, so
 * that a `for await` takes over the rest. Past `maxBytes` nothing is kept and the stream is read to its end. Its own
 * listeners are removed when it settles; the caller keeps an `error` listener of its own across the handover.
 * @throws the stream's error, or `ERR_STREAM_PREMATURE_CLOSE` when it closes before its end (the client went away
 * mid-DATA: smtp-server 3.21 destroys the stream, with an error only when it has an `error` listener).
 */
function readStart(stream: Readable, hold: number, maxBytes: number): Promise<Start> {
  return new Promise<Start>((resolve, reject) => {
    const start: Start = { held: [], size: 0, ended: false };
    const settle = (): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      start.size += chunk.length;
      if (start.size > maxBytes) {
        start.held = []; // read to the end, keep nothing
        return;
      }
      start.held.push(chunk);
      if (start.size > hold) {
        stream.pause();
        settle();
        resolve(start);
      }
    };
    const onEnd = (): void => {
      settle();
      start.ended = true;
      resolve(start);
    };
    const onError = (err: unknown): void => {
      settle();
      reject(err);
    };
    const onClose = (): void => {
      settle();
      reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/** The reply text of a message that cannot be parsed, when the parser gave no RFC 3463 reason of its own. */
const UNPARSEABLE = '5.6.0 Message is not valid MIME (too deeply nested or malformed); not accepted';

/**
 * Receives one inbound message from a stream (the SMTP DATA stream) with bounded memory (issue 26 item 3). A
 * message below one blob chunk ({@link HOLD_BYTES}, most mail) is held until the end of DATA and its one Buffer is
 * handed to the MIME reader and the sender authentication (no stream plumbing per message; issue 24). A larger one
 * is streamed from the moment it passes that size: every chunk goes at once to the blob store (one row per
 * 256 KiB, {@link BlobWriter}) and to the streaming MIME reader (attachment bytes counted and dropped), waiting for
 * both, so memory stays at a few chunks plus the text and HTML bodies whatever the message size. The raw message
 * is stored once and shared by every recipient's copy.
 * When `hooks.authenticate` is given, the same bytes feed the sender authentication (mailauth), and
 * its verdicts are stored on the rows ({@link deliverInbound}'s `auth`), not written into the raw bytes (the raw
 * download prepends the stored Authentication-Results, attachments.ts). Nothing is kept for a message over
 * `maxBytes`, an unparseable one (any parser failure is permanent: the same bytes fail again), one the
 * authentication refuses, a re-delivery already stored, or a storage failure.
 * @throws the storage error (the SMTP listener answers 451 so the sender retries) or the authentication's refusal.
 */
export async function receiveInboundStream(
  ctx: DomainContext,
  source: Readable,
  envelope: Envelope,
  maxBytes: number,
  hooks: InboundStreamHooks = {},
): Promise<InboundOutcome> {
  // Chunk rows below Prisma (no base64 copies of the bytes; mail-blob.store.ts), outside any transaction.
  const writer = new BlobWriter(ctx.db, ctx.clock.now(), ctx.database);
  let parseError: unknown;
  let markDataEnd: () => void = () => undefined;
  const dataEnd = new Promise<void>((resolve) => {
    markDataEnd = resolve;
  });
  // Mail up to one blob chunk (most mail) is held until the end of DATA and handed whole to the parser and the
  // authentication: the blob writer holds those bytes anyway, and no stream stands between them and the two readers.
  // A larger message switches to streaming (`streamed`) once it passes that size, with bounded memory as before.
  let held: Buffer[] = [];
  let streamed: Streamed | undefined;
  let size = 0;
  // An error of the DATA stream while nothing else listens (between readStart's pause and the `for await`, while the
  // held chunks are fed) is kept here and thrown, never left to be an uncaught exception.
  let sourceError: unknown;
  const onSourceError = (err: unknown): void => {
    sourceError ??= err;
  };
  source.on('error', onSourceError);
  try {
    // Most mail ends within the first chunk: read by events, no async iterator (readStart).
    const start = await readStart(source, HOLD_BYTES, maxBytes);
    ({ held, size } = start);
    if (!start.ended) {
      // Past one chunk and within maxBytes: streamed from here on, the rest read by a `for await`.
      streamed = startStreaming(ctx, writer, dataEnd, hooks, (err) => {
        parseError = err;
      });
      for (const early of held) {
        if (parseError || streamed.failed()) break;
        await streamed.feed(early);
      }
      held = [];
      if (sourceError !== undefined) throw sourceError;
      for await (const chunk of source) {
        size += chunk.length;
        // Keep reading to the end of DATA (the SMTP dialogue needs it), but stop keeping anything.
        if (size > maxBytes || parseError || streamed.failed()) continue;
        await streamed.feed(chunk);
      }
    }
  } catch (err) {
    // DATA cut short (the client went away, the edge closed the session): the chunks written so far go too.
    await writer.abort();
    throw err;
  } finally {
    source.off('error', onSourceError);
    streamed?.end();
    markDataEnd();
  }
  let parsing: Promise<InboundMessage | null>;
  let authenticating: Promise<{ auth?: SenderAuthOutcome; refusal?: unknown }> | undefined;
  let storeError: unknown;
  if (streamed) {
    parsing = streamed.parsing;
    authenticating = streamed.authenticating;
    storeError = streamed.storeError();
  } else if (size > maxBytes) {
    parsing = Promise.resolve(null);
  } else {
    const whole = held.length === 1 ? held[0]! : Buffer.concat(held, size);
    held = [];
    parsing = ctx.mail.parse(whole).catch((err: unknown) => {
      parseError = err;
      return null;
    });
    authenticating = hooks.authenticate?.(whole, dataEnd).then(
      (auth) => ({ auth }),
      (refusal: unknown) => ({ refusal }),
    );
    try {
      // Below one chunk: only held by the writer, no statement (the delivery's own statement writes it).
      await writer.write(whole);
    } catch (err) {
      storeError = err;
    }
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
    return { kind: 'unparseable', reason: parseError instanceof MimeError ? parseError.message : UNPARSEABLE };
  }
  const checked = authenticating ? await authenticating : {};
  if (checked.refusal !== undefined) {
    // Refused by the sender authentication (DMARC p=reject): the chunks written so far go too.
    await writer.abort();
    throw checked.refusal;
  }
  // A one-chunk message is written by the delivery's own statement (issue 24); a larger one is finished here.
  const changes = writer.singleStatementChanges();
  if (!changes) {
    try {
      await writer.finish();
    } catch (err) {
      await writer.abort();
      throw err;
    }
  }
  let stored: StoredInbound[];
  try {
    const pendingBlob = changes ? { changes, write: () => writer.finish() } : undefined;
    stored = await deliverInbound(ctx, parsed, envelope, checked.auth, {
      rawBlobId: writer.id,
      pendingBlob,
      ...(hooks.rcptIdentities ? { rcptIdentities: hooks.rcptIdentities } : {}),
    });
    if (!stored.some((s) => s.created)) await writer.abort();
    else noteMessagesStored(ctx);
  } catch (err) {
    await writer.abort();
    throw err;
  }
  // After the rows that share the raw message are committed: a failure here (the sender retries) keeps them.
  // Not `await hooks.alsoDeliver?.(…)`: without the hook (most mail) that awaits undefined, a promise for nothing.
  if (hooks.alsoDeliver) await hooks.alsoDeliver(parsed);
  return { kind: 'stored', stored };
}
