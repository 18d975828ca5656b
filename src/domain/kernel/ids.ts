import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/*
 * Row ids: UUIDv7 (RFC 9562 5.7), as the `uuid` package makes them without options (48-bit Unix ms, then a 31-bit
 * counter seeded at random each new ms and incremented within one, so ids of one process increase in the order they
 * are made; keyset pages rely on it), with the random bits drawn from a pool refilled 256 ids at a time. `uuid`
 * draws 16 bytes per id with crypto.getRandomValues, a system call each; on the inbound path (3 ids per message)
 * that was 3 % of the CPU profile in the sandbox the service is measured in (issue 24).
 */

/** Bytes of randomness drawn per refill (16 per id). */
const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let taken = POOL_BYTES;
/** The last id's time (ms) and counter, as `uuid`'s own v7 state. */
const state = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };

function random16(): Uint8Array {
  if (taken + 16 > POOL_BYTES) {
    randomFillSync(pool);
    taken = 0;
  }
  const bytes = pool.subarray(taken, taken + 16);
  taken += 16;
  return bytes;
}

/**
 * A new UUIDv7 string (lower-case, 36 characters), later than every id this process made before (same rule as
 * `uuid`'s `v7()`: a new ms starts a random 31-bit counter, the same ms increments it, an overflow borrows the next ms).
 */
export function uuidv7(): string {
  const rnds = random16();
  const now = Date.now();
  if (now > state.msecs) {
    state.seq = ((rnds[6]! & 0x7f) << 24) | (rnds[7]! << 16) | (rnds[8]! << 8) | rnds[9]!;
    state.msecs = now;
  } else {
    state.seq = (state.seq + 1) | 0;
    if (state.seq === 0) state.msecs++;
  }
  return v7({ random: rnds, msecs: state.msecs, seq: state.seq });
}
