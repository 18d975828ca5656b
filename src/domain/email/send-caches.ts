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
 * The send path's per-app caches (issue 24: one read each less per send), a named field of the context
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
  /** Not a cache: the group-commit queue of the send path's writes (one per app; see {@link SendWriteQueue}). */
  sendWrites: SendWriteQueue;
}

/** Empty caches for a new app (src/app.ts). */
export function newEmailCaches(): EmailCaches {
  return {
    sendIdentities: new LRUCache<string, EmailIdentity>({ max: 10_000, ttl: SEND_IDENTITY_TTL_MS }),
    customDomains: new LRUCache<string, boolean>({ max: 10_000, ttl: CUSTOM_DOMAIN_TTL_MS }),
    dkimSigners: new LRUCache<string, DkimSigner>({ max: 1_000, ttl: DKIM_SIGNER_TTL_MS }),
    sendWrites: new SendWriteQueue(),
  };
}
