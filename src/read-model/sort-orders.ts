// The orders the read model walks: rows by a sort key (price, area, creation date), and
// rows grouped by a small code (communes and listing types, grid cells).

// Rows sorted by a key, ties by row number; rows without the key (NaN) at the end. `rank`:
// per row, a number in the key's order (equal keys, equal numbers), NULL_RANK for no key.
export interface SortedRows {
  order: Uint32Array;
  withKey: number;
  rank: Uint32Array | Int32Array;
}

export const NULL_RANK = 0xffffffff;

export function sortRows(n: number, key: Float64Array | Int32Array): SortedRows {
  const order = new Uint32Array(n);
  let w = 0;
  for (let i = 0; i < n; i++) if (!Number.isNaN(key[i])) order[w++] = i;
  const withKey = w;
  for (let i = 0; i < n; i++) if (Number.isNaN(key[i])) order[w++] = i;
  order.subarray(0, withKey).sort((a, b) => key[a] - key[b] || a - b);
  // An integer key (price) is its own rank; a double key gets dense ranks from the order just
  // sorted (0 for the smallest key, +1 for each next distinct key), so the doubles can go.
  if (key instanceof Int32Array) return { order, withKey, rank: key };
  const rank = new Uint32Array(n).fill(NULL_RANK);
  let r = 0;
  for (let k = 0; k < withKey; k++) {
    if (k > 0 && key[order[k]] !== key[order[k - 1]]) r++;
    rank[order[k]] = r;
  }
  return { order, withKey, rank };
}

// Rows grouped by a small code (counting sort): rows of code c are order[start[c]..start[c+1]).
export function groupRows(n: number, codes: Uint16Array | Uint32Array, groups: number): { order: Uint32Array; start: Uint32Array } {
  const start = new Uint32Array(groups + 1);
  for (let i = 0; i < n; i++) start[codes[i] + 1]++;
  for (let c = 0; c < groups; c++) start[c + 1] += start[c];
  const next = start.slice(0, groups);
  const order = new Uint32Array(start[groups]);
  for (let i = 0; i < n; i++) order[next[codes[i]]++] = i;
  return { order, start };
}

// Rows by (place, listing type), each group by price then row: group g = place code × types
// + type code holds order[start[g]..start[g+1]) (a place: a commune and locality pair).
export interface RowsByGroup {
  order: Uint32Array;
  start: Uint32Array;
  types: number;
}

export function groupByPlaceAndType(n: number, place: Uint32Array, type: Uint8Array, price: Int32Array, places: number, types: number): RowsByGroup {
  const groupOf = new Uint32Array(n);
  for (let i = 0; i < n; i++) groupOf[i] = place[i] * types + type[i];
  const groups = groupRows(n, groupOf, places * types);
  for (let g = 0; g + 1 < groups.start.length; g++) {
    const from = groups.start[g];
    const to = groups.start[g + 1];
    if (to - from > 1) groups.order.subarray(from, to).sort((a, b) => price[a] - price[b] || a - b);
  }
  return { ...groups, types };
}

// Positions [from, to) of every row in sort order, when every row matches (a page with no
// filter): ascending, the order itself; descending, keys from the top but within one key still
// by ascending row (the SQL's id tie-break), rows without the key last. Without visiting the
// rows before the page: a key's run of rows is found by binary search.
export function sliceSorted(s: SortedRows, desc: boolean, from: number, to: number): number[] {
  const { order, withKey, rank } = s;
  const n = order.length;
  to = Math.min(to, n);
  if (from >= to) return [];
  if (!desc) return Array.from(order.subarray(from, to));
  const out: number[] = [];
  // Run bounds of the key at order[x] (sorted ascending over [0, withKey)).
  const runStart = (x: number) => {
    const v = rank[order[x]];
    let lo = 0;
    let hi = x;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (rank[order[mid]] < v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  let p = from;
  // The runs from the top: run [s, e) of the order occupies positions [withKey - e, withKey - s).
  let e = withKey;
  if (p < withKey) {
    let x = withKey - 1 - p;
    let sRun = runStart(x);
    // The run holding x ends where the next key starts.
    let hi = withKey;
    let lo = x + 1;
    const v = rank[order[x]];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (rank[order[mid]] <= v) lo = mid + 1;
      else hi = mid;
    }
    e = lo;
    while (p < to && p < withKey) {
      out.push(order[sRun + (p - (withKey - e))]);
      p++;
      if (p === withKey - sRun && p < withKey) {
        e = sRun;
        x = e - 1;
        sRun = runStart(x);
      }
    }
  }
  for (; p < to; p++) out.push(order[p]);
  return out;
}

// Rows by listing type, each type by price then row: a stable partition of the price order
// (which is by price then row already), so no sort. Type t holds order[start[t]..start[t+1]).
// A filter that names no place (commune or locality) takes one price range per type from it
// instead of one per (place, type) group of RowsByGroup: hundreds of binary searches fewer.
export function groupByType(byPrice: Uint32Array, type: Uint8Array, types: number): { order: Uint32Array; start: Uint32Array } {
  const start = new Uint32Array(types + 1);
  for (let k = 0; k < byPrice.length; k++) start[type[byPrice[k]] + 1]++;
  for (let t = 0; t < types; t++) start[t + 1] += start[t];
  const next = start.slice(0, types);
  const order = new Uint32Array(byPrice.length);
  for (let k = 0; k < byPrice.length; k++) {
    const i = byPrice[k];
    order[next[type[i]]++] = i;
  }
  return { order, start };
}

// The (commune, locality) pairs present: each row's pair code, the pairs of each commune code
// and the locality code of each pair.
export function placePairs(n: number, commune: Uint16Array, locality: Uint16Array, communes: number): { pairOf: Uint32Array; pairsOfCommune: number[][]; pairLocality: number[] } {
  const pairCodes = new Map<number, number>();
  const pairOf = new Uint32Array(n);
  const pairsOfCommune: number[][] = Array.from({ length: communes }, () => []);
  const pairLocality: number[] = [];
  for (let i = 0; i < n; i++) {
    const key = commune[i] * 0x10000 + locality[i];
    let code = pairCodes.get(key);
    if (code === undefined) {
      code = pairLocality.length;
      pairCodes.set(key, code);
      pairLocality.push(locality[i]);
      pairsOfCommune[commune[i]].push(code);
    }
    pairOf[i] = code;
  }
  return { pairOf, pairsOfCommune, pairLocality };
}
