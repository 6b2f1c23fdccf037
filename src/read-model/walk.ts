import type { CompiledFilter } from './compiled-filter.js';
import type { SortedRows } from './sort-orders.js';

// Walking a sorted order for the first matches of a filter (the page of a filter that matches
// many rows). At 1,000,000 rows each row visited was several cache misses: its attributes read
// by row number, and, going down, its key to find the runs of equal keys. So a walk now reads
// first, in the order's own sequence, each row's commune and type (`PlaceAlong`), which most
// filters name and which reject most rows; only the others are tested in full. Keys are read
// only for the rows kept.

// Commune code × 8 + type code of each position of a sorted order, in that order; null when
// the codes do not fit 16 bits that way (more than 8,191 communes or 8 types).
export type PlaceAlong = Uint16Array | null;

export function placeAlong(order: Uint32Array, commune: Uint16Array, type: Uint8Array, communes: number, types: number): PlaceAlong {
  if (communes > 8192 || types > 8) return null;
  const out = new Uint16Array(order.length);
  for (let k = 0; k < order.length; k++) out[k] = (commune[order[k]] << 3) | type[order[k]];
  return out;
}

// The first `want` matches along `s`. Descending: keys from the top, but within one key still by
// ascending row (the SQL's tie-break by id); rows without the key stay last. `matches` tests a
// row in full; `place` (of this order, or null) rejects rows of other communes or types first.
export function walk(s: SortedRows, desc: boolean, q: CompiledFilter, want: number, matches: (row: number) => boolean, place: PlaceAlong, budget = Infinity): number[] | null {
  const { order, withKey, rank: key } = s;
  const { mask, typ } = q;
  const pre = place !== null && (mask !== null || typ >= 0) ? place : null;
  // The commune and type of position k allow a match.
  const may = (k: number) => {
    if (pre === null) return true;
    const v = pre[k];
    return (mask === null || mask[v >>> 3] === 1) && (typ < 0 || (v & 7) === typ);
  };
  // Rows tested in full so far: past `budget`, the walk gives up (null).
  let tested = 0;
  const test = (k: number) => may(k) && ++tested <= budget && matches(order[k]);
  const out: number[] = [];
  if (!desc) {
    for (let k = 0; k < order.length && out.length < want && tested <= budget; k++) if (test(k)) out.push(order[k]);
    return tested > budget ? null : out;
  }
  // Down from the top key: matches in descending position, which within a run of equal keys is
  // descending row. The run of the want-th match is finished (its lower rows come first), then
  // each run's rows are put back in ascending order.
  let k = withKey - 1;
  for (; k >= 0 && out.length < want && tested <= budget; k--) if (test(k)) out.push(order[k]);
  if (out.length === want && want > 0) {
    const last = key[out[want - 1]];
    for (; k >= 0 && key[order[k]] === last && tested <= budget; k--) if (test(k)) out.push(order[k]);
  }
  if (tested > budget) return null;
  for (let a = 0; a < out.length; ) {
    let b = a + 1;
    while (b < out.length && key[out[b]] === key[out[a]]) b++;
    if (b - a > 1) out.splice(a, b - a, ...out.slice(a, b).reverse());
    a = b;
  }
  out.length = Math.min(out.length, want);
  for (let j = withKey; j < order.length && out.length < want && tested <= budget; j++) if (test(j)) out.push(order[j]);
  return tested > budget ? null : out;
}
