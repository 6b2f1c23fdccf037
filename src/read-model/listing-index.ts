import { boundingBox, EARTH_RADIUS_KM, haversineKm } from '../domain/geo.js';
import type { ListingFilter, Sort } from '../domain/search.js';

// An in-memory, columnar copy of the active listings at one data version: the search
// columns in typed arrays (off the JS heap), row i being the i-th active listing in id order,
// so that comparing row numbers is comparing ids (the tie-break of every sort, in the
// database's own collation). It answers what PostgreSQL answers slowly at 1,000,000 rows: the
// exact count of a filter and the ids of one sorted page. The full rows of a page are then
// read from the database by primary key. It is only ever used at the version it was loaded at
// (see read-model.ts), so its answers are exactly the database's at that version.

const RAD = Math.PI / 180; // the same double as PostgreSQL's RADIANS_PER_DEGREE
const NO_CODE = 0;
const FLAGGED = 1;
const STUDENTS = 2;
// The same slack as the SQL: a point computed to lie on the circle stays inside.
const RADIUS_SLACK_KM = 1e-9;

// One active listing as the loader reads it.
export type IndexRow = [
  id: string,
  price: number,
  area: number | null,
  rooms: number | null,
  commune: string,
  locality: string | null,
  lat: number | null,
  lng: number | null,
  listingType: string,
  source: string,
  acceptsStudents: boolean,
  flagged: boolean,
  createdMs: number,
];

// "Within the radius" for one centre, decided exactly as the SQL decides it (haversine <=
// radius + slack) but cheaply: the haversine's inner term h grows with the distance, so h far
// enough below or above its value at the limit decides alone (the margin, 1e-9 relative, is
// millions of times the rounding error); only points within that margin of the circle get
// the full formula.
export class Circle {
  private readonly cos1: number;
  private readonly lo: number;
  private readonly hi: number;
  readonly limit: number;
  constructor(
    readonly lat: number,
    readonly lng: number,
    radiusKm: number,
  ) {
    this.cos1 = Math.cos(lat * RAD);
    this.limit = radiusKm + RADIUS_SLACK_KM;
    const s = Math.sin(Math.min(Math.PI / 2, this.limit / (2 * EARTH_RADIUS_KM)));
    this.lo = s * s * (1 - 1e-9);
    this.hi = this.limit >= Math.PI * EARTH_RADIUS_KM ? Infinity : s * s * (1 + 1e-9);
  }
  within(lat2: number, lng2: number): boolean {
    const a = Math.sin(((lat2 - this.lat) * RAD) / 2);
    const b = Math.sin(((lng2 - this.lng) * RAD) / 2);
    const h = a * a + this.cos1 * Math.cos(lat2 * RAD) * (b * b);
    if (h < this.lo) return true;
    if (h > this.hi) return false;
    return haversineKm(this.lat, this.lng, lat2, lng2) <= this.limit;
  }
  // The same test for a point whose latitude's cosine lies in [cosMin, cosMax], without
  // trigonometry: x - x³/6 <= sin x <= x bounds h from both sides; the full test only
  // when the bounds straddle the limit (points within about a metre of the circle).
  withinCell(lat2: number, lng2: number, cosMin: number, cosMax: number): boolean {
    const x = Math.abs(((lat2 - this.lat) * RAD) / 2);
    const y = Math.abs(((lng2 - this.lng) * RAD) / 2);
    const x2 = x * x;
    const y2 = y * y;
    if (x2 + this.cos1 * cosMax * y2 < this.lo) return true;
    const xl = Math.max(0, x - (x * x2) / 6);
    const yl = Math.max(0, y - (y * y2) / 6);
    if (xl * xl + this.cos1 * cosMin * (yl * yl) > this.hi) return false;
    return this.within(lat2, lng2);
  }
}

class Dictionary {
  private readonly codes = new Map<string, number>();
  private readonly values: string[] = [''];
  code(value: string): number {
    let c = this.codes.get(value);
    if (c === undefined) {
      c = this.values.length;
      if (c > 0xffff) throw new Error('read model: more than 65,535 distinct values in a column');
      this.values.push(value);
      this.codes.set(value, c);
    }
    return c;
  }
  find(value: string): number {
    return this.codes.get(value) ?? -1;
  }
  get size(): number {
    return this.values.length;
  }
}

export class ListingIndexBuilder {
  private n = 0;
  private readonly ids: Ids;
  private readonly price: Int32Array;
  private readonly area: Float64Array;
  private readonly rooms: Int32Array;
  private readonly created: Float64Array;
  private readonly lat: Float64Array;
  private readonly lng: Float64Array;
  private readonly commune: Uint16Array;
  private readonly locality: Uint16Array;
  private readonly source: Uint16Array;
  private readonly type: Uint8Array;
  private readonly bits: Uint8Array;
  private readonly dicts = { commune: new Dictionary(), locality: new Dictionary(), source: new Dictionary(), type: new Dictionary() };
  private lastId: string | null = null;

  // `capacity`: how many rows at most (the count read in the same snapshot).
  constructor(private readonly capacity: number) {
    this.ids = new Ids(capacity);
    this.price = new Int32Array(capacity);
    this.area = new Float64Array(capacity);
    this.rooms = new Int32Array(capacity);
    this.created = new Float64Array(capacity);
    this.lat = new Float64Array(capacity);
    this.lng = new Float64Array(capacity);
    this.commune = new Uint16Array(capacity);
    this.locality = new Uint16Array(capacity);
    this.source = new Uint16Array(capacity);
    this.type = new Uint8Array(capacity);
    this.bits = new Uint8Array(capacity);
  }

  // Rows must come in id order (ORDER BY id, the database's collation).
  add(r: IndexRow): void {
    const i = this.n;
    if (i >= this.capacity) throw new Error('read model: more rows than counted');
    const id = r[0];
    if (this.lastId !== null && id === this.lastId) throw new Error('read model: duplicate id');
    this.lastId = id;
    this.ids.set(i, id);
    this.price[i] = r[1];
    this.area[i] = r[2] ?? NaN;
    this.rooms[i] = r[3] ?? NO_ROOMS;
    this.commune[i] = this.dicts.commune.code(r[4]);
    this.locality[i] = r[5] === null ? NO_CODE : this.dicts.locality.code(r[5]);
    this.lat[i] = r[6] ?? NaN;
    this.lng[i] = r[7] ?? NaN;
    this.type[i] = this.dicts.type.code(r[8]);
    this.source[i] = this.dicts.source.code(r[9]);
    this.bits[i] = (r[11] ? FLAGGED : 0) | (r[10] ? STUDENTS : 0);
    this.created[i] = r[12];
    this.n++;
  }

  build(version: number): ListingIndex {
    const n = this.n;
    const cut = <T extends Float64Array | Int32Array | Uint16Array | Uint8Array | Uint32Array>(a: T): T => (a.length === n ? a : (a.slice(0, n) as T));
    // The sort keys are kept as orders and ranks; the doubles themselves are not needed after.
    const price = cut(this.price);
    return new ListingIndex(version, {
      n,
      ids: this.ids.cut(n),
      price,
      rooms: cut(this.rooms),
      byPrice: sortRows(n, price),
      byArea: sortRows(n, cut(this.area)),
      byCreated: sortRows(n, cut(this.created)),
      lat: cut(this.lat),
      lng: cut(this.lng),
      commune: cut(this.commune),
      locality: cut(this.locality),
      source: cut(this.source),
      type: cut(this.type),
      bits: cut(this.bits),
      dicts: this.dicts,
    });
  }
}

interface Columns {
  n: number;
  ids: Ids;
  price: Int32Array;
  rooms: Int32Array;
  byPrice: SortedRows;
  byArea: SortedRows;
  byCreated: SortedRows;
  lat: Float64Array;
  lng: Float64Array;
  commune: Uint16Array;
  locality: Uint16Array;
  source: Uint16Array;
  type: Uint8Array;
  bits: Uint8Array;
  dicts: { commune: Dictionary; locality: Dictionary; source: Dictionary; type: Dictionary };
}

// Rows sorted by a key, ties by row number; rows without the key (NaN) at the end. `rank`:
// per row, a number in the key's order (equal keys, equal numbers), NULL_RANK for no key.
interface SortedRows {
  order: Uint32Array;
  withKey: number;
  rank: Uint32Array | Int32Array;
}

const NULL_RANK = 0xffffffff;
const NO_ROOMS = -1; // rooms is never negative (a check constraint)

function sortRows(n: number, key: Float64Array | Int32Array): SortedRows {
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

// Listing ids: the usual shape (lst_ and 20 lower-case hex digits) packed in 10 bytes, any
// other id kept as it is.
const PACKED_ID = /^lst_[0-9a-f]{20}$/;
class Ids {
  private packed: Buffer;
  private readonly other = new Map<number, string>();
  constructor(capacity: number) {
    this.packed = Buffer.alloc(capacity * 10);
  }
  set(row: number, id: string): void {
    if (PACKED_ID.test(id)) this.packed.write(id.slice(4), row * 10, 'hex');
    else this.other.set(row, id);
  }
  get(row: number): string {
    return this.other.get(row) ?? 'lst_' + this.packed.toString('hex', row * 10, row * 10 + 10);
  }
  cut(n: number): Ids {
    if (this.packed.length > n * 10) this.packed = Buffer.from(this.packed.subarray(0, n * 10));
    return this;
  }
  get bytes(): number {
    return this.packed.length + this.other.size * 64;
  }
}

// Rows grouped by a small code (counting sort): rows of code c are order[start[c]..start[c+1]).
function groupRows(n: number, codes: Uint16Array | Uint32Array, groups: number): { order: Uint32Array; start: Uint32Array } {
  const start = new Uint32Array(groups + 1);
  for (let i = 0; i < n; i++) start[codes[i] + 1]++;
  for (let c = 0; c < groups; c++) start[c + 1] += start[c];
  const next = start.slice(0, groups);
  const order = new Uint32Array(start[groups]);
  for (let i = 0; i < n; i++) order[next[codes[i]]++] = i;
  return { order, start };
}

interface Grid {
  lat0: number;
  lng0: number;
  cellDeg: number;
  rows: number;
  cols: number;
  // Rows with coordinates by cell: cells[start[c]..start[c+1]).
  order: Uint32Array;
  start: Uint32Array;
  // Per cell, how many of its rows are not flagged.
  clean: Uint32Array;
}

function buildGrid(c: Columns): Grid | null {
  let latMin = Infinity;
  let latMax = -Infinity;
  let lngMin = Infinity;
  let lngMax = -Infinity;
  let withCoords = 0;
  for (let i = 0; i < c.n; i++) {
    const la = c.lat[i];
    if (Number.isNaN(la)) continue;
    const lo = c.lng[i];
    withCoords++;
    if (la < latMin) latMin = la;
    if (la > latMax) latMax = la;
    if (lo < lngMin) lngMin = lo;
    if (lo > lngMax) lngMax = lo;
  }
  if (withCoords === 0) return null;
  // ~500 m cells, coarser when the points are spread so wide that there would be over 2^20.
  const cellDeg = Math.max(0.005, Math.sqrt(((latMax - latMin + 1e-9) * (lngMax - lngMin + 1e-9)) / (1 << 20)));
  const rows = Math.floor((latMax - latMin) / cellDeg) + 1;
  const cols = Math.floor((lngMax - lngMin) / cellDeg) + 1;
  const cellOf = new Uint32Array(c.n);
  const NONE = rows * cols; // an extra group for rows without coordinates, dropped below
  for (let i = 0; i < c.n; i++) {
    const la = c.lat[i];
    if (Number.isNaN(la)) {
      cellOf[i] = NONE;
      continue;
    }
    const r = Math.min(rows - 1, Math.floor((la - latMin) / cellDeg));
    const k = Math.min(cols - 1, Math.floor((c.lng[i] - lngMin) / cellDeg));
    cellOf[i] = r * cols + k;
  }
  const g = groupRows(c.n, cellOf, NONE + 1);
  const clean = new Uint32Array(NONE);
  for (let i = 0; i < c.n; i++) if (cellOf[i] !== NONE && (c.bits[i] & FLAGGED) === 0) clean[cellOf[i]]++;
  return { lat0: latMin, lng0: lngMin, cellDeg, rows, cols, order: g.order.subarray(0, g.start[NONE]), start: g.start.subarray(0, NONE + 1), clean };
}

// A page of row numbers, with their distances on a geo search.
export interface IndexPage {
  rows: number[];
  distances?: number[];
}

// A filter compiled against the dictionaries: codes and bounds (-1 / ±Infinity for "any").
interface Query {
  flag: number; // -1 any, 0 clean only, FLAGGED flagged only
  mask: Uint8Array | null; // communes
  minP: number;
  maxP: number;
  minR: number;
  typ: number;
  src: number;
  loc: number;
  students: boolean;
  // Every row passes (`trivial`), or the flag is the only condition (`flagOnly`).
  trivial: boolean;
  flagOnly: boolean;
  geo: Circle | null;
}

interface GeoCell {
  cell: number;
  // Bounds of cos(latitude) over the cell.
  cosMin: number;
  cosMax: number;
  lowerKm: number; // no point of the cell is nearer than this
  inside: boolean; // every point of the cell is within the radius
}

// Rows to visit: order[from..to) for each pair of `ranges` (order null: the row numbers
// themselves).
interface Candidates {
  order: Uint32Array | null;
  ranges: number[];
  size: number;
}

export class ListingIndex {
  readonly size: number;
  private readonly byPrice: SortedRows;
  private readonly byArea: SortedRows;
  private readonly byCreated: SortedRows;
  // Rows by (commune, listing type), each group by price then row: group g = commune code ×
  // types + type code holds order[start[g]..start[g+1]).
  private readonly byGroup: { order: Uint32Array; start: Uint32Array; types: number };
  private readonly grid: Grid | null;
  private readonly cleanTotal: number;
  // The columns, as fields so that the hot loops read them directly.
  private readonly price: Int32Array;
  private readonly rooms: Int32Array;
  private readonly lat: Float64Array;
  private readonly lng: Float64Array;
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
    this.price = c.price;
    this.rooms = c.rooms;
    this.lat = c.lat;
    this.lng = c.lng;
    this.commune = c.commune;
    this.locality = c.locality;
    this.source = c.source;
    this.type = c.type;
    this.bits = c.bits;
    const types = c.dicts.type.size;
    const groupOf = new Uint32Array(c.n);
    for (let i = 0; i < c.n; i++) groupOf[i] = c.commune[i] * types + c.type[i];
    const groups = groupRows(c.n, groupOf, c.dicts.commune.size * types);
    const price = c.price;
    for (let g = 0; g + 1 < groups.start.length; g++) {
      const from = groups.start[g];
      const to = groups.start[g + 1];
      if (to - from > 1) groups.order.subarray(from, to).sort((a, b) => price[a] - price[b] || a - b);
    }
    this.byGroup = { ...groups, types };
    this.grid = buildGrid(c);
    let clean = 0;
    for (let i = 0; i < c.n; i++) if ((c.bits[i] & FLAGGED) === 0) clean++;
    this.cleanTotal = clean;
  }

  // Bytes held in typed arrays (for logs and metrics).
  get bytes(): number {
    const c = this.c;
    let b = c.ids.bytes;
    for (const a of [c.price, c.rooms, c.lat, c.lng, c.commune, c.locality, c.source, c.type, c.bits]) b += a.byteLength;
    for (const s of [this.byPrice, this.byArea, this.byCreated]) b += s.order.byteLength + (s.rank === c.price ? 0 : s.rank.byteLength);
    b += this.byGroup.order.byteLength + this.byGroup.start.byteLength;
    if (this.grid) b += this.grid.order.byteLength + this.grid.start.byteLength + this.grid.clean.byteLength;
    return b;
  }

  id(row: number): string {
    return this.c.ids.get(row);
  }

  // The filter against this index's dictionaries, or null when nothing can match.
  private compile(f: ListingFilter): Query | null {
    const d = this.c.dicts;
    const flag = !f.includeFlagged ? 0 : f.flagged === undefined ? -1 : f.flagged ? FLAGGED : 0;
    let mask: Uint8Array | null = null;
    if (f.communes) {
      mask = new Uint8Array(d.commune.size);
      let any = false;
      for (const name of f.communes) {
        const code = d.commune.find(name);
        if (code >= 0) (mask[code] = 1), (any = true);
      }
      if (!any) return null;
    }
    const loc = f.locality !== undefined ? d.locality.find(f.locality) : -1;
    const typ = f.listingType ? d.type.find(f.listingType) : -1;
    const src = f.source !== undefined ? d.source.find(f.source.toLowerCase()) : -1;
    if ((f.locality !== undefined && loc < 0) || (f.listingType && typ < 0) || (f.source !== undefined && src < 0)) return null;
    const students = f.studentOnly === true;
    const others = mask !== null || loc >= 0 || typ >= 0 || src >= 0 || f.minPrice !== undefined || f.maxPrice !== undefined || f.minRooms !== undefined || students;
    return {
      flag,
      mask,
      minP: f.minPrice ?? -Infinity,
      maxP: f.maxPrice ?? Infinity,
      minR: f.minRooms ?? -Infinity, // unknown rooms (-1) fail any given minimum (>= 0)
      typ,
      src,
      loc,
      students,
      trivial: !others && flag < 0,
      flagOnly: !others && flag === 0,
      geo: f.geo ? new Circle(f.geo.lat, f.geo.lng, f.geo.radiusKm) : null,
    };
  }

  // The filter's non-geo part on row i.
  private ok(q: Query, i: number): boolean {
    return (
      (q.flag < 0 || (this.bits[i] & FLAGGED) === q.flag) &&
      this.price[i] >= q.minP &&
      this.price[i] <= q.maxP &&
      (q.mask === null || q.mask[this.commune[i]] === 1) &&
      (q.typ < 0 || this.type[i] === q.typ) &&
      this.rooms[i] >= q.minR &&
      (q.src < 0 || this.source[i] === q.src) &&
      (q.loc < 0 || this.locality[i] === q.loc) &&
      (!q.students || (this.bits[i] & STUDENTS) !== 0)
    );
  }

  // The whole filter on row i, its geo part included.
  private matches(q: Query, i: number): boolean {
    if (!this.ok(q, i)) return false;
    const g = q.geo;
    return g === null || (!Number.isNaN(this.lat[i]) && g.within(this.lat[i], this.lng[i]));
  }

  // Rows known to hold every match of a filter without geo part: along the (commune, type,
  // price) groups, the price range of each group the filter's communes and type select
  // (binary searches); every row when the filter names none of the three. `exact` when
  // those rows are exactly the matches (nothing else in the filter).
  private candidates(f: ListingFilter, q: Query): Candidates & { exact: boolean } {
    if (!f.communes && !f.listingType && f.minPrice === undefined && f.maxPrice === undefined) {
      return { order: null, ranges: [0, this.size], size: this.size, exact: q.trivial };
    }
    const { order, start, types } = this.byGroup;
    const d = this.c.dicts;
    const communeCodes = f.communes
      ? [...new Set(f.communes)].map((n) => d.commune.find(n)).filter((c) => c >= 0)
      : Array.from({ length: d.commune.size }, (_, c) => c);
    const typeCodes = q.typ >= 0 ? [q.typ] : Array.from({ length: types }, (_, t) => t);
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
    for (const c of communeCodes) {
      for (const t of typeCodes) {
        const g = c * types + t;
        let from = start[g];
        let to = start[g + 1];
        if (from === to) continue;
        if (f.minPrice !== undefined) from = lowerBound(from, to, f.minPrice);
        if (f.maxPrice !== undefined) to = lowerBound(from, to, Math.floor(f.maxPrice) + 1); // integer prices
        if (from >= to) continue;
        ranges.push(from, to);
        size += to - from;
      }
    }
    const exact =
      q.flag < 0 && q.minR === -Infinity && q.src < 0 && q.loc < 0 && !q.students;
    return { order, ranges, size, exact };
  }

  // The cells of the grid that may hold points within the circle, with bounds.
  private geoCells(g: NonNullable<ListingFilter['geo']>): GeoCell[] {
    const grid = this.grid;
    if (!grid) return [];
    const b = boundingBox(g);
    const r0 = Math.max(0, Math.floor((b.latMin - grid.lat0) / grid.cellDeg));
    const r1 = Math.min(grid.rows - 1, Math.floor((b.latMax - grid.lat0) / grid.cellDeg));
    const k0 = b.wraps ? 0 : Math.max(0, Math.floor((b.lngMin - grid.lng0) / grid.cellDeg));
    const k1 = b.wraps ? grid.cols - 1 : Math.min(grid.cols - 1, Math.floor((b.lngMax - grid.lng0) / grid.cellDeg));
    if (r0 > r1 || k0 > k1) return [];
    const cells: GeoCell[] = [];
    const r = g.radiusKm;
    const cosLat = Math.cos(g.lat * RAD);
    // Distances to the grid's vertices, each shared by four cells.
    const w = k1 - k0 + 2;
    const vertex = new Float64Array((r1 - r0 + 2) * w);
    for (let row = r0; row <= r1 + 1; row++) {
      for (let col = k0; col <= k1 + 1; col++) {
        vertex[(row - r0) * w + (col - k0)] = haversineKm(g.lat, g.lng, grid.lat0 + row * grid.cellDeg, grid.lng0 + col * grid.cellDeg);
      }
    }
    // Slack for points that sit a rounding error outside their cell and for rounding in the
    // bounds themselves (1 mm: far above either).
    const eps = 1e-6;
    for (let row = r0; row <= r1; row++) {
      const la0 = grid.lat0 + row * grid.cellDeg;
      const la1 = la0 + grid.cellDeg;
      // Lower bound from latitude alone: a great circle is never shorter than its north-south part.
      const latKm = EARTH_RADIUS_KM * RAD * Math.max(0, la0 - g.lat, g.lat - la1);
      // cos falls with |latitude|; the 1e-12 covers a point a rounding error off its cell.
      const c0 = Math.cos(la0 * RAD);
      const c1 = Math.cos(la1 * RAD);
      const cosMin = Math.max(0, Math.min(c0, c1) - 1e-12);
      const cosMax = la0 <= 0 && la1 >= 0 ? 1 : Math.max(c0, c1) + 1e-12;
      for (let col = k0; col <= k1; col++) {
        const cell = row * grid.cols + col;
        if (grid.start[cell] === grid.start[cell + 1]) continue;
        const lo0 = grid.lng0 + col * grid.cellDeg;
        const lo1 = lo0 + grid.cellDeg;
        // Lower bound from longitude: a point east or west of the cell is at least its
        // cross-track distance from the cell's nearest meridian.
        const dLng = g.lng < lo0 ? lo0 - g.lng : g.lng > lo1 ? g.lng - lo1 : 0;
        const lngKm = dLng > 0 && dLng < 90 ? EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sin(dLng * RAD) * cosLat)) : 0;
        const lower = Math.max(0, Math.max(latKm, lngKm) - eps);
        if (lower > r + eps) continue;
        // The farthest point of a small lat/lng rectangle from a point is one of its corners.
        const v = (row - r0) * w + (col - k0);
        const far = Math.max(vertex[v], vertex[v + 1], vertex[v + w], vertex[v + w + 1]);
        cells.push({ cell, cosMin, cosMax, lowerKm: lower, inside: far <= r - eps });
      }
    }
    return cells;
  }

  // The exact number of active listings matching the filter.
  count(f: ListingFilter): number {
    const q = this.compile(f);
    if (!q) return 0;
    if (!q.geo) {
      if (q.trivial) return this.size;
      if (q.flagOnly) return this.cleanTotal;
      const { order, ranges, size, exact } = this.candidates(f, q);
      if (exact) return size;
      let n = 0;
      for (let r = 0; r < ranges.length; r += 2) {
        const to = ranges[r + 1];
        if (order === null) {
          for (let i = ranges[r]; i < to; i++) if (this.ok(q, i)) n++;
        } else {
          for (let k = ranges[r]; k < to; k++) if (this.ok(q, order[k])) n++;
        }
      }
      return n;
    }
    const grid = this.grid!;
    let n = 0;
    for (const cell of this.geoCells(f.geo!)) {
      const from = grid.start[cell.cell];
      const to = grid.start[cell.cell + 1];
      if (cell.inside) {
        // Wholly inside the circle: with the tier's default filter, counted without visiting.
        if (q.trivial) n += to - from;
        else if (q.flagOnly) n += grid.clean[cell.cell];
        else for (let k = from; k < to; k++) if (this.ok(q, grid.order[k])) n++;
      } else {
        const circle = q.geo!;
        for (let k = from; k < to; k++) {
          const i = grid.order[k];
          if (this.ok(q, i) && circle.withinCell(this.lat[i], this.lng[i], cell.cosMin, cell.cosMax)) n++;
        }
      }
    }
    return n;
  }

  // Rows [offset, offset + limit) of the matches in `sort` order; `total` is count(f).
  page(f: ListingFilter, sort: Sort, offset: number, limit: number, total: number): IndexPage {
    const q = this.compile(f);
    if (!q || offset >= total) return f.geo ? { rows: [], distances: [] } : { rows: [] };
    const want = Math.min(total, offset + limit);
    let rows: number[];
    if (sort === 'distance') {
      if (!f.geo) throw new Error('sort=distance needs a geo filter');
      rows = this.nearest(f.geo, q, want);
    } else {
      const sorted = sort === 'price' || sort === '-price' ? this.byPrice : sort === 'size' || sort === '-size' ? this.byArea : this.byCreated;
      const desc = sort.startsWith('-');
      // Walking the sorted rows visits about want × size / total rows; collecting the matches
      // and sorting them costs the candidate set plus a sort of every match.
      const walkCost = (want * this.size) / total;
      const collectCost = this.candidateCount(f, q) + total * Math.log2(total + 1);
      rows = walkCost <= collectCost ? this.walk(sorted, desc, q, want) : this.collectSorted(f, q, sorted, desc, want);
    }
    const page = rows.slice(offset, want);
    if (!f.geo) return { rows: page };
    const g = f.geo;
    return { rows: page, distances: page.map((i) => haversineKm(g.lat, g.lng, this.lat[i], this.lng[i])) };
  }

  private candidateCount(f: ListingFilter, q: Query): number {
    if (f.geo) {
      const grid = this.grid;
      if (!grid) return 0;
      let n = 0;
      for (const cell of this.geoCells(f.geo)) n += grid.start[cell.cell + 1] - grid.start[cell.cell];
      return n;
    }
    return this.candidates(f, q).size;
  }

  // The first `want` matches along a sorted order. Descending: keys from the top, but within
  // one key still by ascending id (the SQL's tie-break); rows without the key stay last.
  private walk(s: SortedRows, desc: boolean, q: Query, want: number): number[] {
    const out: number[] = [];
    const { order, withKey, rank: key } = s;
    if (!desc) {
      for (let k = 0; k < order.length && out.length < want; k++) if (this.matches(q, order[k])) out.push(order[k]);
      return out;
    }
    let end = withKey; // exclusive end of the run still to visit
    while (end > 0 && out.length < want) {
      const v = key[order[end - 1]];
      let startRun = end - 1;
      while (startRun > 0 && key[order[startRun - 1]] === v) startRun--;
      for (let k = startRun; k < end && out.length < want; k++) if (this.matches(q, order[k])) out.push(order[k]);
      end = startRun;
    }
    for (let k = withKey; k < order.length && out.length < want; k++) if (this.matches(q, order[k])) out.push(order[k]);
    return out;
  }

  // Every match, sorted, cut to `want`.
  private collectSorted(f: ListingFilter, q: Query, s: SortedRows, desc: boolean, want: number): number[] {
    const found: number[] = [];
    if (f.geo) {
      const grid = this.grid!;
      for (const cell of this.geoCells(f.geo)) {
        for (let k = grid.start[cell.cell]; k < grid.start[cell.cell + 1]; k++) {
          const i = grid.order[k];
          if (this.ok(q, i) && (cell.inside || q.geo!.withinCell(this.lat[i], this.lng[i], cell.cosMin, cell.cosMax))) found.push(i);
        }
      }
    } else {
      const { order, ranges } = this.candidates(f, q);
      for (let r = 0; r < ranges.length; r += 2) {
        for (let k = ranges[r]; k < ranges[r + 1]; k++) {
          const i = order === null ? k : order[k];
          if (this.ok(q, i)) found.push(i);
        }
      }
    }
    const key = s.rank;
    const nullable = s.rank !== this.price;
    const dir = desc ? -1 : 1;
    found.sort((a, b) => {
      const ka = key[a];
      const kb = key[b];
      if (nullable) {
        const na = ka === NULL_RANK;
        const nb = kb === NULL_RANK;
        if (na || nb) return na === nb ? a - b : na ? 1 : -1;
      }
      return (ka - kb) * dir || a - b;
    });
    return found.length > want ? found.slice(0, want) : found;
  }

  // The `want` nearest matches, nearest first (ties by id), visiting cells nearest first and
  // stopping once no unvisited cell can hold a nearer point than the farthest kept.
  private nearest(g: NonNullable<ListingFilter['geo']>, q: Query, want: number): number[] {
    const grid = this.grid;
    if (!grid) return [];
    const circle = q.geo!;
    const cells = this.geoCells(g).sort((a, b) => a.lowerKm - b.lowerKm);
    const heap = new MaxHeap(want);
    for (const cell of cells) {
      if (heap.full && cell.lowerKm > heap.topKey) break;
      for (let k = grid.start[cell.cell]; k < grid.start[cell.cell + 1]; k++) {
        const i = grid.order[k];
        if (!this.ok(q, i) || !(cell.inside || circle.withinCell(this.lat[i], this.lng[i], cell.cosMin, cell.cosMax))) continue;
        heap.offer(haversineKm(g.lat, g.lng, this.lat[i], this.lng[i]), i);
      }
    }
    return heap.sorted();
  }
}

// A bounded max-heap of (key, row) by key then row: keeps the `cap` smallest.
class MaxHeap {
  private readonly keys: Float64Array;
  private readonly rows: Uint32Array;
  private n = 0;
  constructor(private readonly cap: number) {
    this.keys = new Float64Array(cap);
    this.rows = new Uint32Array(cap);
  }
  get full(): boolean {
    return this.n >= this.cap;
  }
  get topKey(): number {
    return this.keys[0];
  }
  private greater(a: number, b: number): boolean {
    return this.keys[a] > this.keys[b] || (this.keys[a] === this.keys[b] && this.rows[a] > this.rows[b]);
  }
  private swap(a: number, b: number): void {
    const k = this.keys[a];
    this.keys[a] = this.keys[b];
    this.keys[b] = k;
    const r = this.rows[a];
    this.rows[a] = this.rows[b];
    this.rows[b] = r;
  }
  offer(key: number, row: number): void {
    if (this.cap === 0) return;
    if (this.n < this.cap) {
      let i = this.n++;
      this.keys[i] = key;
      this.rows[i] = row;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.greater(i, parent)) break;
        this.swap(i, parent);
        i = parent;
      }
      return;
    }
    if (key > this.keys[0] || (key === this.keys[0] && row > this.rows[0])) return;
    this.keys[0] = key;
    this.rows[0] = row;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.n && this.greater(l, m)) m = l;
      if (r < this.n && this.greater(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
  }
  sorted(): number[] {
    const idx = Array.from({ length: this.n }, (_, k) => k);
    idx.sort((a, b) => this.keys[a] - this.keys[b] || this.rows[a] - this.rows[b]);
    return idx.map((k) => this.rows[k]);
  }
}
