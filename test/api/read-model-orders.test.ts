import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/demo/random.js';
import { FLAGGED, STUDENTS } from '../../src/read-model/columns.js';
import { RoomsCounts } from '../../src/read-model/rooms-counts.js';
import { groupByType, sliceSorted, sortRows } from '../../src/read-model/sort-orders.js';
import { sqlOrder } from '../helpers/sql-order.js';

// A page with no filter is a slice of a sort order (src/read-model/sort-orders.ts): checked
// against the whole order written out, on keys with long runs of ties and missing keys.

describe('a slice of a sort order', () => {
  it('is the same rows as the whole order cut, for any page, either direction, ties and missing keys', () => {
    const rng = new Rng(9);
    for (const n of [1, 2, 7, 300]) {
      const doubles = Array.from({ length: n }, () => (rng.chance(0.2) ? NaN : rng.pick([1, 2, 2, 3.5, 9, rng.between(0, 10)])));
      const ints = Array.from({ length: n }, () => rng.pick([5, 5, 5, 7, rng.int(0, 20)]));
      for (const keys of [doubles, ints]) {
        const sorted = sortRows(n, keys === ints ? Int32Array.from(keys) : Float64Array.from(keys));
        for (const desc of [false, true]) {
          const all = sqlOrder(keys, desc);
          for (let k = 0; k < 40; k++) {
            const from = rng.int(0, n + 2);
            const to = from + rng.int(0, n);
            expect(sliceSorted(sorted, desc, from, to), `n ${n} desc ${desc} ${from}..${to}`).toEqual(all.slice(from, to));
          }
        }
      }
    }
  });
});

describe('rooms counts over ranges of an order', () => {
  it('count what visiting the range counts, for every threshold and flag, at block edges too', () => {
    const rng = new Rng(64);
    for (const n of [0, 1, 63, 64, 128, 1000]) {
      const rooms = Int32Array.from({ length: n }, () => (rng.chance(0.15) ? -1 : rng.int(0, 9)));
      const bits = Uint8Array.from({ length: n }, () => (rng.chance(0.2) ? FLAGGED : 0) | (rng.chance(0.3) ? STUDENTS : 0));
      const order = Uint32Array.from({ length: n }, (_, k) => k).sort(() => rng.float() - 0.5);
      const counts = new RoomsCounts(order, rooms, bits);
      for (let k = 0; k < 200; k++) {
        const from = rng.chance(0.3) ? 64 * rng.int(0, Math.floor(n / 64)) : rng.int(0, n);
        const to = rng.chance(0.3) ? Math.min(n, 64 * rng.int(0, Math.ceil(n / 64))) : rng.int(from, n);
        const minRooms = rng.pick([-Infinity, -1, 0, 1, 2, 3.5, 7, 8]);
        const flag = rng.pick([-1, 0, FLAGGED]);
        let expected = 0;
        for (let p = from; p < to; p++) if (rooms[order[p]] >= minRooms && (flag < 0 || (bits[order[p]] & FLAGGED) === flag)) expected++;
        const got = counts.count(from, Math.max(from, to), minRooms, flag);
        expect(got === null ? 'visit' : got, JSON.stringify({ n, from, to, minRooms, flag })).toBe(minRooms > 7 ? 'visit' : from <= to ? expected : 0);
      }
    }
  });
});

describe('rows by type', () => {
  it('hold every row once, type by type, each type by price then row (the price order partitioned)', () => {
    const rng = new Rng(15);
    for (const n of [0, 1, 2, 300]) {
      const prices = Int32Array.from({ length: n }, () => rng.pick([500, 500, 900, rng.int(0, 3000)]));
      const types = Uint8Array.from({ length: n }, () => rng.int(0, 3));
      const { order, start } = groupByType(sortRows(n, prices).order, types, 4);
      expect(start[4]).toBe(n);
      for (let t = 0; t < 4; t++) {
        const expected = Array.from({ length: n }, (_, i) => i)
          .filter((i) => types[i] === t)
          .sort((a, b) => prices[a] - prices[b] || a - b);
        expect(Array.from(order.subarray(start[t], start[t + 1])), `n ${n} type ${t}`).toEqual(expected);
      }
    }
  });
});
