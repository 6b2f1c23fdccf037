import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/demo/random.js';
import type { CompiledFilter } from '../../src/read-model/compiled-filter.js';
import { sortRows } from '../../src/read-model/sort-orders.js';
import { placeAlong, walk } from '../../src/read-model/walk.js';
import { sqlOrder } from '../helpers/sql-order.js';

// A page of a filter along a sort order (src/read-model/walk.ts): the first matches in the
// SQL's order (by key, ties by row, rows without the key last), checked against the whole
// order written out and filtered, on keys with long runs of ties and missing keys, with and
// without the commune-and-type codes read first.

const anyFilter = { flag: -1, mask: null, minP: -Infinity, maxP: Infinity, minR: -Infinity, typ: -1, src: -1, loc: null, students: false, trivial: false, flagOnly: false, geo: null };

// n rows of 6 communes and 4 types: keys drawn from `ties` (runs of equal keys) or 0-30, 15 %
// missing; `other` stands for the rest of a filter, true for a share `otherShare` of the rows.
function randomRows(rng: Rng, n: number, ties: number[], otherShare: number) {
  const keys = Array.from({ length: n }, () => (rng.chance(0.15) ? NaN : rng.pick([...ties, rng.int(0, 30)])));
  const commune = Uint16Array.from({ length: n }, () => rng.int(0, 5));
  const type = Uint8Array.from({ length: n }, () => rng.int(0, 3));
  const other = Array.from({ length: n }, () => rng.chance(otherShare));
  const sorted = sortRows(n, Float64Array.from(keys));
  return { keys, commune, type, other, sorted, place: placeAlong(sorted.order, commune, type, 6, 4) };
}

describe('walking a sort order for a page', () => {
  it('gives the first matches in the order SQL gives, for any filter, either direction, ties and missing keys', () => {
    const rng = new Rng(15);
    for (const n of [1, 2, 9, 400]) {
      const { keys, commune, type, other, sorted, place } = randomRows(rng, n, [5, 5, 5, 7, 7], 0.7);
      for (let t = 0; t < 60; t++) {
        const mask = rng.chance(0.7) ? Uint8Array.from({ length: 6 }, () => (rng.chance(0.4) ? 1 : 0)) : null;
        const typ = rng.chance(0.6) ? rng.int(0, 3) : -1;
        const q: CompiledFilter = { ...anyFilter, mask, typ };
        const matches = (i: number) => (mask === null || mask[commune[i]] === 1) && (typ < 0 || type[i] === typ) && other[i];
        const want = rng.int(0, n + 3);
        for (const desc of [false, true]) {
          const expected = sqlOrder(keys, desc).filter(matches).slice(0, want);
          const label = `n ${n} want ${want} desc ${desc} mask ${mask?.join('')} type ${typ}`;
          expect(walk(sorted, desc, q, want, matches, place), label).toEqual(expected);
          expect(walk(sorted, desc, q, want, matches, null), label).toEqual(expected);
        }
      }
    }
  });

  it('gives up (null) once it would test more rows than its budget, and only then', () => {
    const rng = new Rng(26);
    let gaveUp = 0;
    let finished = 0;
    for (const n of [1, 9, 400]) {
      const { keys, commune, other, sorted, place } = randomRows(rng, n, [5, 5, 7], 0.3);
      for (let t = 0; t < 60; t++) {
        const mask = rng.chance(0.5) ? Uint8Array.from({ length: 6 }, () => (rng.chance(0.4) ? 1 : 0)) : null;
        const q: CompiledFilter = { ...anyFilter, mask };
        const matches = (i: number) => (mask === null || mask[commune[i]] === 1) && other[i];
        const want = rng.int(1, 12);
        for (const desc of [false, true]) {
          const expected = sqlOrder(keys, desc).filter(matches).slice(0, want);
          // The rows the whole walk tests in full.
          let tested = 0;
          walk(sorted, desc, q, want, (i) => (tested++, matches(i)), place);
          const budget = rng.int(0, tested + 2);
          let testedNow = 0;
          const got = walk(sorted, desc, q, want, (i) => (testedNow++, matches(i)), place, budget);
          const label = `n ${n} want ${want} desc ${desc} tested ${tested} budget ${budget}`;
          expect(testedNow, label).toBeLessThanOrEqual(budget);
          if (budget >= tested) {
            expect(got, label).toEqual(expected);
            finished++;
          } else {
            expect(got, label).toBeNull();
            gaveUp++;
          }
        }
      }
    }
    expect(gaveUp).toBeGreaterThan(20);
    expect(finished).toBeGreaterThan(20);
  });

  it('reads no commune-and-type codes that do not fit 16 bits', () => {
    const order = Uint32Array.from([0, 1]);
    expect(placeAlong(order, Uint16Array.from([0, 1]), Uint8Array.from([0, 0]), 8193, 4)).toBeNull();
    expect(placeAlong(order, Uint16Array.from([0, 1]), Uint8Array.from([0, 0]), 100, 9)).toBeNull();
    expect(Array.from(placeAlong(order, Uint16Array.from([3, 8191]), Uint8Array.from([7, 2]), 8192, 8)!)).toEqual([3 * 8 + 7, 8191 * 8 + 2]);
  });
});
