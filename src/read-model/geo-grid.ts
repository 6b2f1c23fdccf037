import { boundingBox, EARTH_RADIUS_KM, haversineKm } from '../domain/geo.js';
import type { ListingFilter } from '../domain/search.js';
import { type Columns, FLAGGED } from './columns.js';
import { groupRows } from './sort-orders.js';

// The geo search of the read model: the rows with coordinates in a grid of cells, the cells a
// circle may reach (with distance bounds), and the "within the radius" test.

export const RAD = Math.PI / 180; // the same double as PostgreSQL's RADIANS_PER_DEGREE
// The same slack as the SQL: a point computed to lie on the circle stays inside.
const RADIUS_SLACK_KM = 1e-9;

type GeoFilter = NonNullable<ListingFilter['geo']>;

// "Within the radius" for one centre, decided exactly as the SQL decides it (haversine <=
// radius + slack) but cheaply: the haversine's inner term h grows with the distance, so h far
// enough below or above its value at the limit decides alone (the margin, 1e-9 relative, is
// millions of times the rounding error); only points within that margin of the circle get
// the full formula.
export class Circle {
  private readonly cos1: number;
  private readonly lo: number;
  private readonly hi: number;
  private readonly latReach: number; // degrees
  readonly limit: number;
  constructor(
    readonly lat: number,
    readonly lng: number,
    radiusKm: number,
  ) {
    this.cos1 = Math.cos(lat * RAD);
    this.limit = radiusKm + RADIUS_SLACK_KM;
    this.latReach = (this.limit / (EARTH_RADIUS_KM * RAD)) * (1 + 1e-9) + 1e-12;
    const s = Math.sin(Math.min(Math.PI / 2, this.limit / (2 * EARTH_RADIUS_KM)));
    this.lo = s * s * (1 - 1e-9);
    this.hi = this.limit >= Math.PI * EARTH_RADIUS_KM ? Infinity : s * s * (1 + 1e-9);
  }
  within(lat2: number, lng2: number): boolean {
    // Farther north or south than the radius reaches (a great circle is never shorter than
    // its north-south part): out, without trigonometry.
    if (Math.abs(lat2 - this.lat) > this.latReach) return false;
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

// Each cell is split SUB × SUB for the edge of a circle (see cellsNear).
export const SUB = 4;
export const SUB2 = SUB * SUB;

export interface Grid {
  lat0: number;
  lng0: number;
  cellDeg: number;
  rows: number;
  cols: number;
  // Rows with coordinates by cell: order[start[c]..start[c+1]); within a cell by subcell (a
  // 4 × 4 split of it): subcell j of cell c is order[sub[c·16 + j]..sub[c·16 + j + 1]).
  order: Uint32Array;
  start: Uint32Array;
  sub: Uint32Array;
  // Per cell, how many of its rows are not flagged.
  clean: Uint32Array;
  // The coordinates in the grid's order (lat[k] is row order[k]'s), and each row's position k
  // (NO_POS: no coordinates). The geo loops walk the grid's order and so read them in
  // sequence; read by row number, at 1,000,000 rows a point's lat and lng were two cache
  // misses, most of the time of a radius count. The columns' own row-order copies are dropped.
  lat: Float64Array;
  lng: Float64Array;
  posOf: Uint32Array;
}

export const NO_POS = 0xffffffff;

export function buildGrid(c: Columns): Grid | null {
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
  const subOf = new Uint32Array(c.n);
  const NONE = rows * cols; // an extra group for rows without coordinates, dropped below
  const subDeg = cellDeg / SUB;
  for (let i = 0; i < c.n; i++) {
    const la = c.lat[i];
    if (Number.isNaN(la)) {
      cellOf[i] = NONE;
      subOf[i] = NONE * SUB2;
      continue;
    }
    const r = Math.min(rows - 1, Math.floor((la - latMin) / cellDeg));
    const k = Math.min(cols - 1, Math.floor((c.lng[i] - lngMin) / cellDeg));
    cellOf[i] = r * cols + k;
    const sr = Math.max(0, Math.min(SUB - 1, Math.floor((la - latMin - r * cellDeg) / subDeg)));
    const sc = Math.max(0, Math.min(SUB - 1, Math.floor((c.lng[i] - lngMin - k * cellDeg) / subDeg)));
    subOf[i] = cellOf[i] * SUB2 + sr * SUB + sc;
  }
  const g = groupRows(c.n, subOf, NONE * SUB2 + 1);
  const sub = g.start.subarray(0, NONE * SUB2 + 1);
  const start = new Uint32Array(NONE + 1);
  for (let cell = 0; cell <= NONE; cell++) start[cell] = sub[cell * SUB2];
  const clean = new Uint32Array(NONE);
  for (let i = 0; i < c.n; i++) if (cellOf[i] !== NONE && (c.bits[i] & FLAGGED) === 0) clean[cellOf[i]]++;
  const order = g.order.subarray(0, sub[NONE * SUB2]);
  const lat = new Float64Array(order.length);
  const lng = new Float64Array(order.length);
  const posOf = new Uint32Array(c.n).fill(NO_POS);
  for (let k = 0; k < order.length; k++) {
    const i = order[k];
    lat[k] = c.lat[i];
    lng[k] = c.lng[i];
    posOf[i] = k;
  }
  return { lat0: latMin, lng0: lngMin, cellDeg, rows, cols, order, start, sub, clean, lat, lng, posOf };
}

export interface GeoCell {
  cell: number;
  // Bounds of cos(latitude) over the cell.
  cosMin: number;
  cosMax: number;
  lowerKm: number; // no point of the cell is nearer than this
  inside: boolean; // every point of the cell is within the radius
  // With `split`, for a cell on the edge: bit j set when subcell j is wholly inside
  // (subInside) or may hold points on either side (subEdge); neither: no point within.
  subInside: number;
  subEdge: number;
}

// The cells of the grid that may hold points within the circle, with bounds. Both bounds come
// from the haversine's own terms, h = hav(Δlat) + cos(lat0)·cos(lat)·hav(Δlng), each taken at
// its least (or greatest) over the cell: per grid row and per grid column once, then a
// multiply-add per cell (no trigonometry per cell). Unlike bounds on latitude or longitude
// alone, they drop the corners of the circle's bounding box (a fifth of its area), whose
// points were all tested one by one before. `split`: the cells on the edge are classified by
// subcell as well, so that only the points of subcells on the edge need testing.
export function cellsNear(grid: Grid | null, g: GeoFilter, split = false): GeoCell[] {
  if (!grid) return [];
  const b = boundingBox(g);
  const r0 = Math.max(0, Math.floor((b.latMin - grid.lat0) / grid.cellDeg));
  const r1 = Math.min(grid.rows - 1, Math.floor((b.latMax - grid.lat0) / grid.cellDeg));
  const k0 = b.wraps ? 0 : Math.max(0, Math.floor((b.lngMin - grid.lng0) / grid.cellDeg));
  const k1 = b.wraps ? grid.cols - 1 : Math.min(grid.cols - 1, Math.floor((b.lngMax - grid.lng0) / grid.cellDeg));
  if (r0 > r1 || k0 > k1) return [];
  const cells: GeoCell[] = [];
  const hav = (deg: number) => {
    const s = Math.sin((deg * RAD) / 2);
    return s * s;
  };
  // Slack for rounding in the bounds themselves (1 mm, and 1e-9 relative in h: far above
  // either), and for points a rounding error outside their cell (1e-9 degree, 0.1 mm).
  const eps = 1e-6;
  const pad = 1e-9;
  const twoR = 2 * EARTH_RADIUS_KM;
  const outArg = (g.radiusKm + eps) / twoR;
  const hOut = outArg >= Math.PI / 2 ? Infinity : Math.sin(outArg) ** 2 * (1 + 1e-9);
  const inArg = (g.radiusKm - eps) / twoR;
  const hIn = inArg <= 0 ? -1 : Math.sin(Math.min(Math.PI / 2, inArg)) ** 2 * (1 - 1e-9);
  const cos0 = Math.cos(g.lat * RAD);
  // hav(Δlng) over each column: least and greatest (hav grows with |Δlng| up to 180°).
  const colLow = new Float64Array(k1 - k0 + 1);
  const colHigh = new Float64Array(k1 - k0 + 1);
  for (let col = k0; col <= k1; col++) {
    const lo0 = grid.lng0 + col * grid.cellDeg - pad;
    const lo1 = grid.lng0 + (col + 1) * grid.cellDeg + pad;
    const dMin = g.lng < lo0 ? lo0 - g.lng : g.lng > lo1 ? g.lng - lo1 : 0;
    const dMax = Math.max(Math.abs(g.lng - lo0), Math.abs(g.lng - lo1));
    colLow[col - k0] = Math.min(hav(dMin), hav(dMax));
    colHigh[col - k0] = dMin <= 180 && dMax >= 180 ? 1 : Math.max(hav(dMin), hav(dMax));
  }
  // The same terms per subcell column, when asked.
  const subDeg = grid.cellDeg / SUB;
  const subColLow = split ? new Float64Array((k1 - k0 + 1) * SUB) : colLow;
  const subColHigh = split ? new Float64Array((k1 - k0 + 1) * SUB) : colHigh;
  if (split) {
    for (let col = k0; col <= k1; col++) {
      for (let j = 0; j < SUB; j++) {
        const lo0 = grid.lng0 + col * grid.cellDeg + j * subDeg - pad;
        const lo1 = grid.lng0 + col * grid.cellDeg + (j + 1) * subDeg + pad;
        const dMin = g.lng < lo0 ? lo0 - g.lng : g.lng > lo1 ? g.lng - lo1 : 0;
        const dMax = Math.max(Math.abs(g.lng - lo0), Math.abs(g.lng - lo1));
        subColLow[(col - k0) * SUB + j] = Math.min(hav(dMin), hav(dMax));
        subColHigh[(col - k0) * SUB + j] = dMin <= 180 && dMax >= 180 ? 1 : Math.max(hav(dMin), hav(dMax));
      }
    }
  }
  const subRowLow = new Float64Array(SUB);
  const subRowHigh = new Float64Array(SUB);
  for (let row = r0; row <= r1; row++) {
    const la0 = grid.lat0 + row * grid.cellDeg;
    const la1 = la0 + grid.cellDeg;
    // cos falls with |latitude|; the 1e-12 covers a point a rounding error off its cell.
    const c0 = Math.cos(la0 * RAD);
    const c1 = Math.cos(la1 * RAD);
    const cosMin = Math.max(0, Math.min(c0, c1) - 1e-12);
    const cosMax = la0 <= 0 && la1 >= 0 ? 1 : Math.max(c0, c1) + 1e-12;
    const p0 = la0 - pad;
    const p1 = la1 + pad;
    const rowLow = hav(g.lat < p0 ? p0 - g.lat : g.lat > p1 ? g.lat - p1 : 0);
    const rowHigh = hav(Math.max(Math.abs(g.lat - p0), Math.abs(g.lat - p1)));
    const lowFactor = cos0 * cosMin;
    const highFactor = cos0 * cosMax;
    if (split) {
      for (let j = 0; j < SUB; j++) {
        const q0 = la0 + j * subDeg - pad;
        const q1 = la0 + (j + 1) * subDeg + pad;
        subRowLow[j] = hav(g.lat < q0 ? q0 - g.lat : g.lat > q1 ? g.lat - q1 : 0);
        subRowHigh[j] = hav(Math.max(Math.abs(g.lat - q0), Math.abs(g.lat - q1)));
      }
    }
    for (let col = k0; col <= k1; col++) {
      const cell = row * grid.cols + col;
      if (grid.start[cell] === grid.start[cell + 1]) continue;
      const hLow = rowLow + lowFactor * colLow[col - k0];
      if (hLow > hOut) continue;
      const hHigh = rowHigh + highFactor * colHigh[col - k0];
      const lowerKm = Math.max(0, twoR * Math.asin(Math.min(1, Math.sqrt(hLow))) - eps);
      const inside = hHigh < hIn;
      let subInside = 0;
      let subEdge = 0;
      if (split && !inside) {
        const base = (col - k0) * SUB;
        for (let i = 0; i < SUB; i++) {
          for (let j = 0; j < SUB; j++) {
            if (subRowLow[i] + lowFactor * subColLow[base + j] > hOut) continue;
            if (subRowHigh[i] + highFactor * subColHigh[base + j] < hIn) subInside |= 1 << (i * SUB + j);
            else subEdge |= 1 << (i * SUB + j);
          }
        }
      }
      cells.push({ cell, cosMin, cosMax, lowerKm, inside, subInside, subEdge });
    }
  }
  return cells;
}
