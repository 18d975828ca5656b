import type { Channel } from './event-catalog.js';

// The event as the log stores it and as every transport sends it (spec 2.11). Declared here, below the log and its
// ports (event-log.ts, event-bus.port.ts, change-notices.port.ts), so none of them imports another for its types.

/**
 * An event as stored in the log. `id` is the log id as a decimal string (SSE `id:`): globally unique, and
 * committed in increasing order within an account (not across accounts; docs/events.md). `seq` is the event's
 * position in its account's log (1, 2, 3, ... without holes), which the ordered bus uses to see a lost publish.
 */
export interface StoredEvent {
  id: string;
  seq: string;
  accountId: string;
  channel: Channel;
  eventType: string;
  payload: Record<string, unknown>;
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string;
}

/** The envelope of spec 2.11: the webhook body and the SSE `data:` line. */
export interface EventEnvelope {
  channel: string;
  eventType: string;
  payload: Record<string, unknown>;
  customerId: string;
  timestamp: string;
}

/** Spec 2.11 envelope of a stored event. */
export function toEnvelope(e: StoredEvent): EventEnvelope {
  return {
    channel: e.channel,
    eventType: e.eventType,
    payload: e.payload,
    customerId: e.accountId,
    timestamp: e.timestamp,
  };
}

/** Records one event inside the caller's transaction and returns it. */
export type Emit = (accountId: string, eventType: string, payload: Record<string, unknown>) => Promise<StoredEvent>;

/** Converts a Prisma `Event` row. */
export function storedEventFromRow(row: {
  id: bigint;
  seq: bigint;
  accountId: string;
  channel: string;
  eventType: string;
  payload: unknown;
  createdAt: Date;
}): StoredEvent {
  return {
    id: row.id.toString(),
    seq: row.seq.toString(),
    accountId: row.accountId,
    channel: row.channel as Channel,
    eventType: row.eventType,
    payload: (row.payload ?? {}) as Record<string, unknown>,
    timestamp: row.createdAt.toISOString(),
  };
}

/**
 * Why a stream ended: the consumer left (`closed`), its key was revoked or deleted or its stream token expired
 * (`revoked`), it fell too far behind (`overflow`), live delivery had a gap (`interrupted`), or shutdown.
 */
export type StreamEndReason = 'closed' | 'revoked' | 'overflow' | 'interrupted' | 'shutdown';

/**
 * An open event stream as the app tracks it for shutdown (`ctx.openStreams`; the `EventSubscription` of
 * event-stream.ts is one): it can be ended, and tells when it ends.
 */
export interface OpenStream {
  /** Ends the stream with `reason` (idempotent). */
  end(reason: StreamEndReason): void;
  /** Calls `listener` once the stream ends. @returns the remover. */
  onEnd(listener: (reason: StreamEndReason) => void): () => void;
}
