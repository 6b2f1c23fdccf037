import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/demo/random.js';
import { isoTimestamp } from '../../src/lib/iso-time.js';

// A listing's created_at and updated_at are written by isoTimestamp (src/lib/iso-time.ts), not
// by Date.prototype.toISOString: it must give the same string for every instant.
describe('isoTimestamp', () => {
  it('is toISOString for any instant of years 0000-9999, and falls back to it outside', () => {
    const rng = new Rng(2026);
    const edges = [
      0, 1, -1, 999, 1000, -999, -1000, 86_399_999, 86_400_000, -86_400_000,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999), Date.UTC(1900, 1, 28, 12), Date.UTC(2100, 2, 1), Date.UTC(2024, 11, 31, 23, 59, 59, 999),
      Date.UTC(2026, 0, 1), -62167219200000, 253402300799999, -62167219200001, 253402300800000, 8.64e15, -8.64e15,
    ];
    const instants = [...edges, ...Array.from({ length: 20_000 }, () => rng.int(-62167219200000, 253402300799999)), ...Array.from({ length: 5_000 }, () => rng.int(1.6e12, 1.9e12))];
    for (const t of instants) {
      const d = new Date(t);
      expect(isoTimestamp(d), String(t)).toBe(d.toISOString());
    }
  });

  it('throws as toISOString does on an invalid date', () => {
    expect(() => isoTimestamp(new Date(NaN))).toThrow(RangeError);
  });
});
