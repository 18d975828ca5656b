import { v7 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { uuidv7 } from '../../src/domain/kernel/ids.js';

describe('uuidv7 (src/domain/kernel/ids.ts)', () => {
  it('makes RFC 9562 version-7 ids, each later than the one before, and never the same twice', () => {
    const ids = Array.from({ length: 20_000 }, () => uuidv7());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // The time field is the clock's ms (within the run).
    const ms = Number.parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16);
    expect(Math.abs(ms - Date.now())).toBeLessThan(60_000);
  });

  it('lays the bytes out as the uuid package does: the same ms, counter and random bits give the same string', () => {
    for (let n = 0; n < 2_000; n++) {
      const id = uuidv7();
      const b = Buffer.from(id.replace(/-/g, ''), 'hex');
      const msecs = b.readUIntBE(0, 6);
      const seq =
        (((b[6]! & 0x0f) << 28) | (b[7]! << 20) | ((b[8]! & 0x3f) << 14) | (b[9]! << 6) | (b[10]! >>> 2)) >>> 0;
      const random = new Uint8Array(16);
      random.set(b.subarray(10), 10);
      expect(v7({ msecs, seq, random })).toBe(id);
    }
  });
});
