import { haversineKm, KM_PER_DEG_LAT } from '../domain/geo.js';
import type { ListingFilter, Sort } from '../domain/search.js';
import { type Columns, FLAGGED, STUDENTS } from './columns.js';
import { type CompiledFilter, compileFilter } from './compiled-filter.js';
import { buildGrid, cellsNear, type Grid, NO_POS, SUB2 } from './geo-grid.js';
import { MaxHeap } from './max-heap.js';
import { RoomsCounts } from './rooms-counts.js';
import { groupByPlaceAndType, groupByType, NULL_RANK, placePairs, type RowsByGroup, sliceSorted, type SortedRows } from './sort-orders.js';
import { type PlaceAlong, placeAlong, walk } from './walk.js';

// An in-memory, columnar copy of the active listings at one data version: the search
// columns in typed arrays (off the JS heap), row i being the i-th active listing in id order,
// so that comparing row numbers is comparing ids (the tie-break of every sort, in the
// database's own collation). It answers what PostgreSQL answers slowly at 1,000,000 rows: the
// exact count of a filter and the ids of one sorted page. The full rows of a page are then
// read from the database by primary key. It is only ever used at the version it was loaded at
// (see read-model.ts), so its answers are exactly the database's at that version.
//
// Its parts: columns.ts (the columns and their dictionaries), sort-orders.ts, geo-grid.ts,
// compiled-filter.ts, max-heap.ts (the nearest rows), walk.ts (a sorted order walked for a
// page); builder.ts loads and builds it.

// What a row walked on a geo search costs, in rows of the cells collected instead: measured
// on the geo pages of scenario 9 not sorted by distance, at 1,000,000 listings (bench/README.md,
// stop 26), ms per page: 2 without the walk's budget (as before) 0.23-0.36; with it, 2
// 0.19-0.23, 4 0.15-0.18, 6 0.14-0.17, 8 0.14-0.18, 12 0.14-0.18, 16 0.16-0.20.
const GEO_WALK_ROW = 6;

// A page of row numbers, with their distances on a geo search.
export interface IndexPage {
  rows: number[];
  distances?: number[];
}

// Rows to visit: order[from..to) for each pair of `ranges` (order null: the row numbers
// themselves); `rooms`: the rooms counts over that order's positions.
interface Candidates {
  order: Uint32Array | null;
  ranges: number[];
  size: number;
  rooms?: RoomsCounts;
}

export class ListingIndex {
  readonly size: number;
  private readonly byPrice: SortedRows;
  private readonly byArea: SortedRows;
  private readonly byCreated: SortedRows;
  private readonly createdPlace: PlaceAlong; // along byCreated, the default sort's order
  // Rows by (commune and locality pair, listing type), each group by price then row; the
  // pairs of each commune code, and the locality code of each pair.
  private readonly byGroup: RowsByGroup;
  private readonly pairsOfCommune: number[][];
  private readonly pairLocality: number[];
  private readonly roomsCounts: RoomsCounts;
  // Rows by type, by price then row (for filters that name no place), and their rooms counts.
  private readonly byType: { order: Uint32Array; start: Uint32Array; rooms: RoomsCounts };
  private lastCandidates: { f: ListingFilter; c: Candidates & { exact: boolean } } | null = null;
  private readonly grid: Grid | null;
  private readonly cleanTotal: number;
  // The columns, as fields so that the hot loops read them directly.
  private readonly price: Int32Array;
  private readonly rooms: Int32Array;
  private readonly commune: Uint16Array;
  private readonly locality: Uint16Array;
  private readonly source: Uint16Array;
  private readonly type: Uint8Array;
  private readonly bits: Uint8Array;

  constructor(
    readonly version: number,
    private readonly c: Columns,
  ) {
    this.size = c.n;
    this.byPrice = c.byPrice;
    this.byArea = c.byArea;
    this.byCreated = c.byCreated;
    this.createdPlace = placeAlong(c.byCreated.order, c.commune, c.type, c.dicts.commune.size, c.dicts.type.size);
    this.price = c.price;
    this.rooms = c.rooms;
    this.commune = c.commune;
    this.locality = c.locality;
    this.source = c.source;
    this.type = c.type;
    this.bits = c.bits;
    // Groups by (commune, locality) pair and type, so that a locality (a quarter of the city)
    // is a set of price ranges as a commune is.
    const { pairOf, pairsOfCommune, pairLocality } = placePairs(c.n, c.commune, c.locality, c.dicts.commune.size);
    this.pairsOfCommune = pairsOfCommune;
    this.pairLocality = pairLocality;
    this.byGroup = groupByPlaceAndType(c.n, pairOf, c.type, c.price, this.pairLocality.length, c.dicts.type.size);
    this.roomsCounts = new RoomsCounts(this.byGroup.order, c.rooms, c.bits);
    const byType = groupByType(c.byPrice.order, c.type, c.dicts.type.size);
    this.byType = { ...byType, rooms: new RoomsCounts(byType.order, c.rooms, c.bits) };
    this.grid = buildGrid(c);
    c.lat = c.lng = new Float64Array(0); // the grid holds them, in its order: let these go
    let clean = 0;
    for (let i = 0; i < c.n; i++) if ((c.bits[i] & FLAGGED) === 0) clean++;
    this.cleanTotal = clean;
  }

  // Bytes held in typed arrays (for logs and metrics).
  get bytes(): number {
    const c = this.c;
    let b = c.ids.bytes;
    for (const a of [c.price, c.rooms, c.commune, c.locality, c.source, c.type, c.bits]) b += a.byteLength;
    for (const s of [this.byPrice, this.byArea, this.byCreated]) b += s.order.byteLength + (s.rank === c.price ? 0 : s.rank.byteLength);
    b += (this.createdPlace?.byteLength ?? 0) + this.byGroup.order.byteLength + this.byGroup.start.byteLength + this.roomsCounts.bytes;
    b += this.byType.order.byteLength + this.byType.start.byteLength + this.byType.rooms.bytes;
    if (this.grid) for (const a of [this.grid.order, this.grid.start, this.grid.sub, this.grid.clean, this.grid.lat, this.grid.lng, this.grid.posOf]) b += a.byteLength;
    return b;
  }

  id(row: number): string {
    return this.c.ids.get(row);
  }

  // The filter's conditions other than the circle (flag, price, communes, type, rooms,
  // source, locality, students) on row i.
  private matchesAttributes(q: CompiledFilter, i: number): boolean {
    return (
      (q.flag < 0 || (this.bits[i] & FLAGGED) === q.flag) &&
      this.price[i] >= q.minP &&
      this.price[i] <= q.maxP &&
      (q.mask === null || q.mask[this.commune[i]] === 1) &&
      (q.typ < 0 || this.type[i] === q.typ) &&
      this.rooms[i] >= q.minR &&
      (q.src < 0 || this.source[i] === q.src) &&
      (q.loc === null || q.loc[this.locality[i]] === 1) &&
      (!q.students || (this.bits[i] & STUDENTS) !== 0)
    );
  }

  // The whole filter on row i, the circle included.
  private matches(q: CompiledFilter, i: number): boolean {
    if (!this.matchesAttributes(q, i)) return false;
    const g = q.geo;
    if (g === null) return true;
    const grid = this.grid; // null: no row has coordinates
    const k = grid ? grid.posOf[i] : NO_POS;
    return k !== NO_POS && g.within(grid!.lat[k], grid!.lng[k]);
  }

  // Rows known to hold every match of a filter without geo part: along the (commune and
  // locality, type, price) groups, the price range of each group the filter's communes,
  // locality and type select (binary searches); every row when the filter names none of
  // them. `exact` when those rows are exactly the matches (nothing else in the filter).
  private candidates(f: ListingFilter, q: CompiledFilter): Candidates & { exact: boolean } {
    // A request asks for its filter's candidates up to three times (count, then the page's
    // cost estimate and collection): the last filter's are kept (a filter is never modified).
    if (this.lastCandidates?.f === f) return this.lastCandidates.c;
    const c = this.findCandidates(f, q);
    this.lastCandidates = { f, c };
    return c;
  }

  private findCandidates(f: ListingFilter, q: CompiledFilter): Candidates & { exact: boolean } {
    if (!f.communes && !f.localities && !f.listingType && f.minPrice === undefined && f.maxPrice === undefined) {
      return { order: null, ranges: [0, this.size], size: this.size, exact: q.trivial };
    }
    // No place named: one range per type of the rows by type (the (place, type) groups hold the
    // same rows split into hundreds of ranges, each a binary search and, with min_rooms, up to
    // two partial blocks of rows visited).
    const anyPlace = !f.communes && !f.localities;
    const { order, start } = anyPlace ? this.byType : this.byGroup;
    const types = this.byGroup.types;
    const typeCodes = q.typ >= 0 ? [q.typ] : Array.from({ length: types }, (_, t) => t);
    const groups: number[] = [];
    if (anyPlace) groups.push(...typeCodes);
    else {
      const d = this.c.dicts;
      const communeCodes = f.communes
        ? [...new Set(f.communes)].map((n) => d.commune.find(n)).filter((c) => c >= 0)
        : Array.from({ length: d.commune.size }, (_, c) => c);
      const loc = q.loc;
      const pairs = communeCodes.flatMap((c) => (loc === null ? this.pairsOfCommune[c] : this.pairsOfCommune[c].filter((p) => loc[this.pairLocality[p]] === 1)));
      for (const p of pairs) for (const t of typeCodes) groups.push(p * types + t);
    }
    const price = this.price;
    const lowerBound = (lo: number, hi: number, v: number) => {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (price[order[mid]] < v) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    const ranges: number[] = [];
    let size = 0;
    for (const g of groups) {
      let from = start[g];
      let to = start[g + 1];
      if (from === to) continue;
      if (f.minPrice !== undefined) from = lowerBound(from, to, f.minPrice);
      if (f.maxPrice !== undefined) to = lowerBound(from, to, Math.floor(f.maxPrice) + 1); // integer prices
      if (from >= to) continue;
      ranges.push(from, to);
      size += to - from;
    }
    const exact = q.flag < 0 && q.minR === -Infinity && q.src < 0 && !q.students;
    return { order, ranges, size, exact, rooms: anyPlace ? this.byType.rooms : this.roomsCounts };
  }

  // The exact number of active listings matching the filter.
  count(f: ListingFilter): number {
    const q = compileFilter(f, this.c.dicts);
    if (!q) return 0;
    if (!q.geo) {
      if (q.trivial) return this.size;
      if (q.flagOnly) return this.cleanTotal;
      const { order, ranges, size, exact, rooms: roomsCounts } = this.candidates(f, q);
      if (exact) return size;
      // Within the (commune, type, price) ranges, the commonest rest is rooms and the flag:
      // tested alone, without the conditions the ranges already hold.
      if (order !== null && roomsCounts && q.src < 0 && !q.students) {
        // Counted per block of positions where the threshold allows (rooms-counts.ts).
        let counted: number | null = 0;
        for (let r = 0; r < ranges.length && counted !== null; r += 2) {
          const c: number | null = roomsCounts.count(ranges[r], ranges[r + 1], q.minR, q.flag);
          counted = c === null ? null : counted + c;
        }
        if (counted !== null) return counted;
        const { rooms, bits } = this;
        const { minR, flag } = q;
        let n = 0;
        for (let r = 0; r < ranges.length; r += 2) {
          const to = ranges[r + 1];
          for (let k = ranges[r]; k < to; k++) {
            const i = order[k];
            if (rooms[i] >= minR && (flag < 0 || (bits[i] & FLAGGED) === flag)) n++;
          }
        }
        return n;
      }
      let n = 0;
      for (let r = 0; r < ranges.length; r += 2) {
        const to = ranges[r + 1];
        if (order === null) {
          for (let i = ranges[r]; i < to; i++) if (this.matchesAttributes(q, i)) n++;
        } else {
          for (let k = ranges[r]; k < to; k++) if (this.matchesAttributes(q, order[k])) n++;
        }
      }
      return n;
    }
    const grid = this.grid;
    if (!grid) return 0; // no active listing has coordinates: none is within any circle
    const { order, sub, lat, lng } = grid;
    const { bits } = this;
    const circle = q.geo!;
    let n = 0;
    for (const cell of cellsNear(grid, f.geo!, true)) {
      if (cell.inside) {
        // Wholly inside the circle: with the tier's default filter, counted without visiting.
        const from = grid.start[cell.cell];
        const to = grid.start[cell.cell + 1];
        if (q.trivial) n += to - from;
        else if (q.flagOnly) n += grid.clean[cell.cell];
        else for (let k = from; k < to; k++) if (this.matchesAttributes(q, order[k])) n++;
        continue;
      }
      // On the edge, by subcell: those inside as above (a count, or their rows' flags or
      // attributes), those on the edge point by point against the circle (a radius search
      // alone, the commonest, tests nothing else).
      for (let j = 0; j < SUB2; j++) {
        const bit = 1 << j;
        if (((cell.subInside | cell.subEdge) & bit) === 0) continue;
        const from = sub[cell.cell * SUB2 + j];
        const to = sub[cell.cell * SUB2 + j + 1];
        if (cell.subInside & bit) {
          if (q.trivial) n += to - from;
          else if (q.flagOnly) {
            for (let k = from; k < to; k++) if ((bits[order[k]] & FLAGGED) === 0) n++;
          } else for (let k = from; k < to; k++) if (this.matchesAttributes(q, order[k])) n++;
        } else if (q.trivial) {
          for (let k = from; k < to; k++) if (circle.withinCell(lat[k], lng[k], cell.cosMin, cell.cosMax)) n++;
        } else if (q.flagOnly) {
          for (let k = from; k < to; k++) {
            const i = order[k];
            if ((bits[i] & FLAGGED) === 0 && circle.withinCell(lat[k], lng[k], cell.cosMin, cell.cosMax)) n++;
          }
        } else {
          for (let k = from; k < to; k++) {
            const i = order[k];
            if (this.matchesAttributes(q, i) && circle.withinCell(lat[k], lng[k], cell.cosMin, cell.cosMax)) n++;
          }
        }
      }
    }
    return n;
  }

  // Rows [offset, offset + limit) of the matches in `sort` order; `total` is count(f).
  page(f: ListingFilter, sort: Sort, offset: number, limit: number, total: number): IndexPage {
    const q = compileFilter(f, this.c.dicts);
    if (!q || offset >= total) return f.geo ? { rows: [], distances: [] } : { rows: [] };
    const want = Math.min(total, offset + limit);
    let rows: number[];
    if (sort === 'distance') {
      if (!f.geo) throw new Error('sort=distance needs a geo filter');
      rows = this.nearest(f.geo, q, want);
    } else {
      const sorted = sort === 'price' || sort === '-price' ? this.byPrice : sort === 'size' || sort === '-size' ? this.byArea : this.byCreated;
      const desc = sort.startsWith('-');
      // Every row matches: the page is a slice of the sort order.
      if (q.trivial && !q.geo) return { rows: sliceSorted(sorted, desc, offset, want) };
      // Walking visits about want × size / total rows, collecting every candidate (and offers
      // each match to a heap). Measured on the mix's requests at 1M: a walked row costs what a
      // candidate of ranges or a match costs, six candidates of cells (a geo walk reads each
      // row's position out of order, where the cells are read in sequence). The estimate
      // assumes the matches spread evenly along the order, which a place and a price do not
      // (the cheapest flats of the country are not in the city): so a walk that has tested
      // as many rows as collecting would cost gives up, and the page is collected.
      const walked = (want * this.size) / total;
      const candidates = this.candidateCount(f, q);
      const along = sorted === this.byCreated ? this.createdPlace : null; // (walk.ts)
      const budget = f.geo ? candidates / GEO_WALK_ROW : candidates + total;
      rows = (walked <= budget ? walk(sorted, desc, q, want, (i) => this.matches(q, i), along, budget) : null) ?? this.collectSorted(f, q, sorted, desc, want);
    }
    const page = rows.slice(offset, want);
    if (!f.geo) return { rows: page };
    const g = f.geo;
    const { lat, lng, posOf } = this.grid!; // a row of a geo page has coordinates
    return { rows: page, distances: page.map((i) => haversineKm(g.lat, g.lng, lat[posOf[i]], lng[posOf[i]])) };
  }

  private candidateCount(f: ListingFilter, q: CompiledFilter): number {
    if (f.geo) {
      const grid = this.grid;
      if (!grid) return 0;
      let n = 0;
      for (const cell of cellsNear(grid, f.geo)) n += grid.start[cell.cell + 1] - grid.start[cell.cell];
      return n;
    }
    return this.candidates(f, q).size;
  }

  // The first `want` matches in sort order: every candidate visited, the best kept in a
  // bounded heap by (key, row) (descending: the negated key; rows without the key last).
  private collectSorted(f: ListingFilter, q: CompiledFilter, s: SortedRows, desc: boolean, want: number): number[] {
    const heap = new MaxHeap(want);
    const key = s.rank;
    const offer = desc ? (i: number) => heap.offer(key[i] === NULL_RANK && key !== this.price ? Infinity : -key[i], i) : (i: number) => heap.offer(key[i], i);
    if (f.geo) {
      const grid = this.grid!;
      for (const cell of cellsNear(grid, f.geo)) {
        for (let k = grid.start[cell.cell]; k < grid.start[cell.cell + 1]; k++) {
          const i = grid.order[k];
          if ((q.trivial || this.matchesAttributes(q, i)) && (cell.inside || q.geo!.withinCell(grid.lat[k], grid.lng[k], cell.cosMin, cell.cosMax))) offer(i);
        }
      }
    } else {
      // The ranges hold the place, type and price: when exact every row matches, else (as in
      // count) rooms and the flag alone are left to test unless more is asked.
      const { order, ranges, exact } = this.candidates(f, q);
      const roomsAndFlag = order !== null && q.src < 0 && !q.students;
      const { rooms, bits } = this;
      for (let r = 0; r < ranges.length; r += 2) {
        for (let k = ranges[r]; k < ranges[r + 1]; k++) {
          const i = order === null ? k : order[k];
          if (exact || (roomsAndFlag ? rooms[i] >= q.minR && (q.flag < 0 || (bits[i] & FLAGGED) === q.flag) : this.matchesAttributes(q, i))) offer(i);
        }
      }
    }
    return heap.sorted();
  }

  // The `want` nearest matches, nearest first (ties by id). Cells are visited nearest first
  // and a round stops once no unvisited cell can hold a nearer point than the farthest kept;
  // rounds widen from a small circle (most pages lie in a few hundred metres) to the whole
  // radius, and end as soon as the farthest kept lies within the round's circle, every cell
  // that may hold a point of that circle having been visited.
  private nearest(g: NonNullable<ListingFilter['geo']>, q: CompiledFilter, want: number): number[] {
    const grid = this.grid;
    if (!grid) return [];
    const circle = q.geo!;
    const heap = new MaxHeap(want);
    const visited = new Set<number>();
    for (let r = Math.min(g.radiusKm, 0.25); ; r = Math.min(g.radiusKm, r * 4)) {
      const cells = cellsNear(grid, { lat: g.lat, lng: g.lng, radiusKm: r })
        .filter((c) => !visited.has(c.cell))
        .sort((a, b) => a.lowerKm - b.lowerKm);
      for (const cell of cells) {
        if (heap.full && cell.lowerKm > heap.topKey) break;
        visited.add(cell.cell);
        for (let k = grid.start[cell.cell]; k < grid.start[cell.cell + 1]; k++) {
          const i = grid.order[k];
          // Farther north or south than the farthest kept: no nearer (no trigonometry).
          if (heap.full && Math.abs(grid.lat[k] - g.lat) * KM_PER_DEG_LAT > heap.topKey * (1 + 1e-9) + 1e-9) continue;
          if (!(q.trivial || this.matchesAttributes(q, i)) || !(cell.inside || circle.withinCell(grid.lat[k], grid.lng[k], cell.cosMin, cell.cosMax))) continue;
          heap.offer(haversineKm(g.lat, g.lng, grid.lat[k], grid.lng[k]), i);
        }
      }
      if (r >= g.radiusKm || (heap.full && heap.topKey <= r)) break;
    }
    return heap.sorted();
  }
}
