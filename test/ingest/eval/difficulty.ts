import type { Knex } from 'knex';
import { haversineKm } from '../../../src/domain/geo.js';

// How hard a set is, whatever the rule: measured on the listings as the importer stored
// them (after normalisation), against the truth. Nothing here looks at merge decisions.
//
// A multi-listed property is "ambiguous" when one of its true pairs (x, y) has a competitor:
// a listing c of another property, from y's source, that is as close to x as y is on every
// piece of evidence (same type; rooms, locality not contradicting; area and price at least
// as close; as near when both have coordinates, or in the same commune when the pair has
// none). Commune centroids (communes.csv points) count as no coordinates. No rule that
// reads only these fields can tell y from c, so 1 - ambiguous share is a rough upper bound
// on the recall a rule can reach without wrong merges.

interface Row {
  source: string;
  external_id: string;
  listing_type: string;
  price_eur: number;
  area_m2: number | null;
  rooms: number | null;
  commune: string;
  locality: string | null;
  lat: number | null;
  lng: number | null;
  prop: string;
}

export interface Difficulty {
  truePairs: number;
  // Shares of true pairs by how far apart their two listings are.
  areaDiff: Record<string, number>;
  priceDiff: Record<string, number>;
  distance: Record<string, number>;
  communeDiffers: number;
  roomsDiffer: number;
  ambiguousProperties: number;
  multiListed: number;
}

export async function measureDifficulty(db: Knex, truth: Map<string, string>): Promise<Difficulty> {
  const centroids = new Set(
    ((await db('communes').select('lat', 'lng')) as { lat: number; lng: number }[]).map((c) => `${Number(c.lat)},${Number(c.lng)}`),
  );
  const rows = (await db('listings').select('source', 'external_id', 'listing_type', 'price_eur', 'area_m2', 'rooms', 'commune', 'locality', 'lat', 'lng'))
    .map((r) => ({ ...r, prop: truth.get(`${r.source}\u0000${r.external_id}`) }))
    .filter((r): r is Row => r.prop !== undefined);
  const usable = (a: Row) => a.lat !== null && a.lng !== null && !centroids.has(`${a.lat},${a.lng}`);
  const diff = (a: Row, b: Row) => ({
    dp: Math.abs(a.price_eur - b.price_eur) / Math.min(a.price_eur, b.price_eur),
    da: a.area_m2 === null || b.area_m2 === null ? null : Math.abs(a.area_m2 - b.area_m2),
    d: usable(a) && usable(b) ? haversineKm(a.lat!, a.lng!, b.lat!, b.lng!) * 1000 : null,
  });
  const compatible = (a: Row, b: Row) =>
    a.listing_type === b.listing_type &&
    (a.rooms === null || b.rooms === null || a.rooms === b.rooms) &&
    (a.locality === null || b.locality === null || a.locality === b.locality);

  const byProp = new Map<string, Row[]>();
  const bySourceType = new Map<string, Row[]>();
  for (const r of rows) {
    byProp.set(r.prop, [...(byProp.get(r.prop) ?? []), r]);
    const k = `${r.source}\u0000${r.listing_type}`;
    bySourceType.set(k, [...(bySourceType.get(k) ?? []), r]);
  }
  const bucket = (h: Record<string, number>, k: string) => (h[k] = (h[k] ?? 0) + 1);
  const out: Difficulty = {
    truePairs: 0, areaDiff: {}, priceDiff: {}, distance: {}, communeDiffers: 0, roomsDiffer: 0, ambiguousProperties: 0, multiListed: 0,
  };
  for (const list of byProp.values()) {
    if (list.length < 2) continue;
    out.multiListed++;
    let ambiguous = false;
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) {
        const [a, b] = [list[i], list[j]];
        const t = diff(a, b);
        out.truePairs++;
        bucket(out.areaDiff, t.da === null ? 'missing' : t.da <= 1 ? '<= 1' : t.da <= 2 ? '<= 2' : t.da <= 4 ? '<= 4' : t.da <= 6 ? '<= 6' : '> 6');
        bucket(out.priceDiff, t.dp <= 0.005 ? '<= 0.5 %' : t.dp <= 0.02 ? '<= 2 %' : t.dp <= 0.03 ? '<= 3 %' : t.dp <= 0.05 ? '<= 5 %' : t.dp <= 0.08 ? '<= 8 %' : '> 8 %');
        bucket(out.distance, t.d === null ? 'no usable pair' : t.d <= 30 ? '<= 30 m' : t.d <= 100 ? '<= 100 m' : t.d <= 300 ? '<= 300 m' : '> 300 m');
        if (a.commune !== b.commune) out.communeDiffers++;
        if (a.rooms !== null && b.rooms !== null && a.rooms !== b.rooms) out.roomsDiffer++;
        for (const [x, y] of [[a, b], [b, a]] as const) {
          if (ambiguous) break;
          for (const c of bySourceType.get(`${y.source}\u0000${x.listing_type}`) ?? []) {
            if (c.prop === x.prop || !compatible(x, c)) continue;
            const u = diff(x, c);
            if (t.d !== null) {
              if (u.d === null || u.d > t.d + 30) continue;
            } else if (c.commune !== x.commune || (u.d !== null && u.d > 300)) continue;
            const areaAsClose = t.da === null || u.da === null || u.da <= t.da + 0.5;
            if (areaAsClose && u.dp <= t.dp + 0.005) {
              ambiguous = true;
              break;
            }
          }
        }
      }
    if (ambiguous) out.ambiguousProperties++;
  }
  return out;
}

export function formatDifficulty(d: Difficulty): string[] {
  const order = ['<= 0.5 %', '<= 1', '<= 2', '<= 2 %', '<= 3 %', '<= 4', '<= 5 %', '<= 6', '<= 8 %', '> 6', '> 8 %', '<= 30 m', '<= 100 m', '<= 300 m', '> 300 m'];
  const rank = (k: string) => (order.includes(k) ? order.indexOf(k) : order.length);
  const share = (h: Record<string, number>) =>
    Object.entries(h)
      .sort((a, b) => rank(a[0]) - rank(b[0]))
      .map(([k, v]) => `${k}: ${((100 * v) / d.truePairs).toFixed(0)} %`)
      .join(', ');
  return [
    `true pairs: ${d.truePairs}; commune differs on ${d.communeDiffers}, rooms differ on ${d.roomsDiffer}`,
    `  area apart: ${share(d.areaDiff)}`,
    `  price apart: ${share(d.priceDiff)}`,
    `  distance (commune centroids count as none): ${share(d.distance)}`,
    `ambiguous multi-listed properties (an equally close competitor exists): ${d.ambiguousProperties} of ${d.multiListed} ` +
      `(${((100 * d.ambiguousProperties) / Math.max(1, d.multiListed)).toFixed(1)} %; recall bound without wrong merges about ${(1 - d.ambiguousProperties / Math.max(1, d.multiListed)).toFixed(3)})`,
  ];
}
