import { LRUCache } from 'lru-cache';
import type { EmailIdentity } from './identity.store.js';
import type { DkimSigner } from './mail-transport.port.js';
import { SendWriteQueue } from './outbound.store.js';

/**
 * How long a send reuses an identity it read (ms). Safe to serve stale for this long because the send's write
 * stores nothing unless the identity is still active at its commit (`insertNewThreadMessages`); a display name
 * changed on another instance shows in mail sent from here at most this much later (a change made here is seen at
 * once).
 */
export const SEND_IDENTITY_TTL_MS = 10_000;

/**
 * How long this instance reuses the answer "is this domain a verified custom domain?" (ms), yes or no. A domain
 * verified or deleted here is evicted at once; one verified on another instance is still relayed from here for at
 * most this long (it reaches the service anyway, through its MX), one deleted there (it had no active identity
 * left) is still tried locally and refused `550 5.1.1` as an unknown mailbox.
 */
export const CUSTOM_DOMAIN_TTL_MS = 30_000;

/**
 * How long a domain's decrypted DKIM signer is reused before its key row is read again (ms). A key changes only when
 * its custom domain is deleted (evicted at once here) and added again, which needs its new DNS record published and
 * verified first; another instance that still holds the old signer drops it within this time.
 */
export const DKIM_SIGNER_TTL_MS = 60_000;

/**
 * How long this instance reuses a positive RCPT TO answer (ms): "this address is an active identity and the block
 * list does not hold this sender" (inbound.service.ts `recipientAtRcpt`, issue 24: the one read per RCPT the bare
 * server does not have). Only positive answers are kept: an unknown address or a blocked sender is asked again at
 * every RCPT, so a mailbox just created takes mail at once and a block is answered `550 5.7.1` at RCPT as soon as it
 * exists. A block-list entry added or removed, or an identity changed or deprovisioned, on THIS instance empties the
 * cache at once; one made on another instance can meet a cached answer here for at most this long, and is then
 * enforced at the end of DATA instead: the delivery re-reads the identity and the block list (identity.store.ts
 * `identityStillPlainSql`, `deliverableIdentitiesAt`), stores nothing for a blocked sender or a removed mailbox and
 * answers `550 5.7.1` / `550 5.1.1`.
 */
export const RCPT_CACHE_TTL_MS = 5_000;

/**
 * Positive RCPT TO answers of this instance ({@link RCPT_CACHE_TTL_MS}, at most 10,000 recipient/sender pairs). A
 * read that started before the last {@link RcptAnswers.clear} is not kept, so an answer read before a block was
 * added here cannot outlive the block's eviction.
 */
export class RcptAnswers {
  // ttlResolution 0: each get reads the clock instead of arming a timer (see src/infra/dns/resolver.ts).
  readonly #answers = new LRUCache<string, EmailIdentity>({ max: 10_000, ttl: RCPT_CACHE_TTL_MS, ttlResolution: 0 });
  #generation = 0;

  /** The key of a recipient (hosted, lower-cased) and an envelope sender (any case; `''` the null sender). */
  static key(recipient: string, sender: string): string {
    return `${recipient}\n${sender.toLowerCase()}`;
  }

  /** The cached identity for `key`, or undefined (never a negative answer: see {@link RCPT_CACHE_TTL_MS}). */
  get(key: string): EmailIdentity | undefined {
    return this.#answers.get(key);
  }

  /** A token to take before the read whose answer {@link set} will keep. */
  generation(): number {
    return this.#generation;
  }

  /** Keeps `identity` for `key` unless the cache was cleared since `generation` was taken. */
  set(key: string, identity: EmailIdentity, generation: number): void {
    if (generation === this.#generation) this.#answers.set(key, identity);
  }

  /** Forgets every answer (a block-list entry or an identity changed on this instance). */
  clear(): void {
    this.#generation++;
    this.#answers.clear();
  }
}

/**
 * The mail paths' per-app caches (issue 24: one read each less per send, per RCPT TO), a named field of the context
 * (`DomainContext.emailCaches`) since no module keeps per-app state. Decrypted private keys live here in memory
 * only, never logged or written anywhere.
 */
export interface EmailCaches {
  /** Identity id → the identity as a send last read it ({@link SEND_IDENTITY_TTL_MS}). */
  sendIdentities: LRUCache<string, EmailIdentity>;
  /** Domain → whether it is a verified custom domain ({@link CUSTOM_DOMAIN_TTL_MS}). */
  customDomains: LRUCache<string, boolean>;
  /** Domain → its decrypted DKIM signer ({@link DKIM_SIGNER_TTL_MS}). */
  dkimSigners: LRUCache<string, DkimSigner>;
  /**
   * `<recipient>\n<sender>` (both lower-cased) → the active identity RCPT TO found for it, not blocked
   * ({@link RCPT_CACHE_TTL_MS}; at most 10,000 pairs).
   */
  rcptAnswers: RcptAnswers;
  /** Not a cache: the group-commit queue of the send path's writes (one per app; see {@link SendWriteQueue}). */
  sendWrites: SendWriteQueue;
}

/** Empty caches for a new app (src/app.ts). */
export function newEmailCaches(): EmailCaches {
  return {
    sendIdentities: new LRUCache<string, EmailIdentity>({ max: 10_000, ttl: SEND_IDENTITY_TTL_MS }),
    customDomains: new LRUCache<string, boolean>({ max: 10_000, ttl: CUSTOM_DOMAIN_TTL_MS }),
    dkimSigners: new LRUCache<string, DkimSigner>({ max: 1_000, ttl: DKIM_SIGNER_TTL_MS }),
    rcptAnswers: new RcptAnswers(),
    sendWrites: new SendWriteQueue(),
  };
}
