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
});
