import { randomFillSync } from 'node:crypto';

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

/** The ASCII hex digits of every byte value: `HEX[2b]`, `HEX[2b + 1]`. */
const HEX = new Uint8Array(512);
for (let b = 0; b < 256; b++) {
  const h = b.toString(16).padStart(2, '0');
  HEX[2 * b] = h.charCodeAt(0);
  HEX[2 * b + 1] = h.charCodeAt(1);
}
/** The 36 ASCII bytes of the id being formatted; the hyphens stay in place. */
const text = Buffer.alloc(36, '-');
/** Where byte i of the id's 16 goes in {@link text}. */
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/** Writes byte `i` (0–15) of the id as two hex digits. */
function put(i: number, byte: number): void {
  const at = AT[i]!;
  text[at] = HEX[2 * byte]!;
  text[at + 1] = HEX[2 * byte + 1]!;
}

/**
 * A new UUIDv7 string (lower-case, 36 characters), later than every id this process made before (same rule as
 * `uuid`'s `v7()`: a new ms starts a random 31-bit counter, the same ms increments it, an overflow borrows the next ms).
 * The bytes are `uuid`'s `v7Bytes` layout (48-bit ms, version 7 and the counter's top 4 bits, variant 10 and 6 more
 * bits, then the counter's last 22 bits and 42 random bits), written as hex straight into one 36-byte buffer and read
 * as one string (issue 24, round 10: `uuid` built a byte array and a string of 20 concatenations, 1,040 bytes of heap
 * and 1 µs per id against 220 bytes and 0.35 µs; the webhook path makes two ids per event+delivery).
 */
export function uuidv7(): string {
  if (taken + 16 > POOL_BYTES) {
    randomFillSync(pool);
    taken = 0;
  }
  const r = taken;
  taken += 16;
  const now = Date.now();
  if (now > state.msecs) {
    state.seq = ((pool[r + 6]! & 0x7f) << 24) | (pool[r + 7]! << 16) | (pool[r + 8]! << 8) | pool[r + 9]!;
    state.msecs = now;
  } else {
    state.seq = (state.seq + 1) | 0;
    if (state.seq === 0) state.msecs++;
  }
  const ms = state.msecs;
  const seq = state.seq;
  put(0, (ms / 0x10000000000) & 0xff);
  put(1, (ms / 0x100000000) & 0xff);
  put(2, (ms / 0x1000000) & 0xff);
  put(3, (ms / 0x10000) & 0xff);
  put(4, (ms / 0x100) & 0xff);
  put(5, ms & 0xff);
  put(6, 0x70 | ((seq >>> 28) & 0x0f));
  put(7, (seq >>> 20) & 0xff);
  put(8, 0x80 | ((seq >>> 14) & 0x3f));
  put(9, (seq >>> 6) & 0xff);
  put(10, ((seq << 2) & 0xff) | (pool[r + 10]! & 0x03));
  for (let i = 11; i < 16; i++) put(i, pool[r + i]!);
  return text.toString('latin1', 0, 36);
}
