import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { DomainContext } from '../kernel/context.js';
import type { EmailIdentity } from './identity.store.js';
import { deliverInbound } from './inbound.service.js';
import type { Envelope, StoredInbound } from './local-delivery.port.js';
import { BlobWriter } from './mail-blob.store.js';
import { type InboundMessage, MimeError } from './mail-transport.port.js';
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
   * Sender authentication (issue 20) over the same bytes, fed to `message` as they arrive (no second copy of the
   * message is held); `dataEnd` resolves at the end of DATA (the check's deadline counts from there). Throwing
   * refuses the message (e.g. DMARC `p=reject`): nothing is kept and the error reaches the caller.
   */
  authenticate?: (message: NodeJS.ReadableStream, dataEnd: Promise<void>) => Promise<SenderAuthOutcome>;
  /** Also handed the parsed message once authenticated (e.g. the operator mailbox of postmaster@/abuse@). */
  alsoDeliver?: (parsed: InboundMessage) => Promise<unknown>;
  /**
   * The identities the RCPT commands found, when every recipient was one (not looked up again: see
   * {@link deliverInbound}'s `stored.rcptIdentities`).
   */
  rcptIdentities?: EmailIdentity[];
}

/** The reply text of a message that cannot be parsed, when the parser gave no RFC 3463 reason of its own. */
const UNPARSEABLE = '5.6.0 Message is not valid MIME (too deeply nested or malformed); not accepted';

/**
 * Receives one inbound message from a stream (the SMTP DATA stream) with bounded memory (issue 26 item 3): every
 * chunk goes at once to the blob store (one row per 256 KiB, {@link BlobWriter}) and to the streaming MIME reader
 * (attachment bytes counted and dropped), waiting for both, so memory stays at a few chunks plus the text and
 * HTML bodies whatever the message size. The raw message is stored once and shared by every recipient's copy.
 * When `hooks.authenticate` is given, the same chunks feed the sender authentication (mailauth reads a stream), and
 * its verdicts are stored on the rows ({@link deliverInbound}'s `auth`), not written into the raw bytes (the raw
 * download prepends the stored Authentication-Results, attachments.ts). Nothing is kept for a message over
 * `maxBytes`, an unparseable one (any parser failure is permanent: the same bytes fail again), one the
 * authentication refuses, a re-delivery already stored, or a storage failure.
 * @throws the storage error (the SMTP listener answers 451 so the sender retries) or the authentication's refusal.
 */
export async function receiveInboundStream(
  ctx: DomainContext,
  source: AsyncIterable<Buffer>,
  envelope: Envelope,
  maxBytes: number,
  hooks: InboundStreamHooks = {},
): Promise<InboundOutcome> {
  // Chunk rows below Prisma (no base64 copies of the bytes; mail-blob.store.ts), outside any transaction.
  const writer = new BlobWriter(ctx.db, ctx.clock.now(), ctx.database);
  const toParser = new PassThrough();
  let parseError: unknown;
  const parsing: Promise<InboundMessage | null> = ctx.mail.parseStream(toParser).catch((err: unknown) => {
    parseError = err;
    toParser.resume();
    return null;
  });
  // The authentication's copy of the stream; once the check has settled it is drained, never written again.
  let markDataEnd: () => void = () => undefined;
  const dataEnd = new Promise<void>((resolve) => {
    markDataEnd = resolve;
  });
  const toAuth = hooks.authenticate ? new PassThrough() : undefined;
  let authSettled = false;
  const authenticating: Promise<{ auth?: SenderAuthOutcome; refusal?: unknown }> | undefined =
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
  let size = 0;
  let storeError: unknown;
  try {
    for await (const chunk of source) {
      size += chunk.length;
      // Keep reading to the end of DATA (the SMTP dialogue needs it), but stop keeping anything.
      if (size > maxBytes || parseError || storeError) continue;
      if (!toParser.write(chunk)) await Promise.race([once(toParser, 'drain'), parsing]);
      if (toAuth && authenticating && !authSettled && !toAuth.write(chunk)) {
        await Promise.race([once(toAuth, 'drain'), authenticating]);
      }
      try {
        await writer.write(chunk);
      } catch (err) {
        storeError = err;
      }
    }
  } finally {
    toParser.end();
    toAuth?.end();
    markDataEnd();
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
  } catch (err) {
    await writer.abort();
    throw err;
  }
  // After the rows that share the raw message are committed: a failure here (the sender retries) keeps them.
  await hooks.alsoDeliver?.(parsed);
  return { kind: 'stored', stored };
}
