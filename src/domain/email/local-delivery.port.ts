import type { DomainContext } from '../kernel/context.js';
import type { InboundMessage } from './mail-transport.port.js';
import type { SenderAuthOutcome } from './sender-auth.js';

/*
 * Local delivery as a port: outbound mail to identities hosted here is handed to the inbound path without the
 * outbound service importing it (the pipeline flows one way: inbound → agent → outbound). `setupEmail`
 * (email.module.ts) passes `deliverInbound` to the outbound job kind.
 */

/** The SMTP envelope of an inbound message. `mailFrom` is '' for the null reverse-path `<>`. */
export interface Envelope {
  mailFrom: string;
  rcptTo: string[];
}

/** What was stored for one recipient identity. */
export interface StoredInbound {
  identityId: string;
  threadId: string;
  messageId: string;
  /** False when the same Message-ID was already stored for this identity (re-delivery is idempotent). */
  created: boolean;
}

/**
 * Stores a parsed message for the active identities among `envelope.rcptTo` as inbound mail (`deliverInbound` of
 * inbound.service.ts), with the sender authentication `auth` and the raw message already in the blob store.
 * @returns one entry per recipient identity stored.
 */
export type LocalDelivery = (
  ctx: DomainContext,
  parsed: InboundMessage,
  envelope: Envelope,
  auth: SenderAuthOutcome,
  stored: { rawBlobId: string | null },
) => Promise<StoredInbound[]>;
