import { haversineKm } from '../reference/gazetteer.js';

// The facts deduplication looks at, for one live listing.
export interface DedupNode {
  id: string;
  source: string;
  listing_type: string;
  commune: string;
  locality: string | null;
  lat: number | null;
  lng: number | null;
  area_m2: number | null;
  rooms: number | null;
  price_eur: number;
  image_count: number;
  has_source_url: boolean;
  created_at: Date;
}

export type PairKind = 'merge' | 'possible' | 'none';

// The rule, in plain words (docs/feed-operators.md says the same):
// - never two listings of one source, never two types, never without both areas, never
//   two different room counts;
// - merged, with both coordinates: within 250 m of each other, area and price within 3 %;
// - merged, when either lacks coordinates: the same commune and the same locality named by
//   both, area within 1 % and price within 1.5 % (without coordinates many flats of a
//   quarter look alike, so the figures must agree almost exactly);
// - a possible duplicate (both get the flag, neither is hidden): area within 3 %, price
//   within 5 %, and either within 400 m, or (when either lacks coordinates) the same
//   locality named by both, or the same commune with area within 1 % and price within 1.5 %;
// - anything else: unrelated.
// Titles are not compared: agencies write them in different languages.
export const RULE = {
  outArea: 0.03,
  outPrice: 0.05,
  outKm: 0.4,
  mergeArea: 0.03,
  mergePrice: 0.03,
  mergeKm: 0.25,
  mergeAreaNoCoords: 0.01,
  mergePriceNoCoords: 0.015,
  localityConflictKm: 0.3,
};

export function relDiff(a: number, b: number): number {
  const m = Math.max(Math.abs(a), Math.abs(b));
  return m === 0 ? 0 : Math.abs(a - b) / m;
}

export function classifyPair(a: DedupNode, b: DedupNode): { kind: PairKind; score: number } {
  const none = { kind: 'none' as const, score: 0 };
  if (a.source === b.source || a.listing_type !== b.listing_type) return none;
  if (a.area_m2 === null || b.area_m2 === null) return none;
  if (a.rooms !== null && b.rooms !== null && a.rooms !== b.rooms) return none;
  const dArea = relDiff(a.area_m2, b.area_m2);
  const dPrice = relDiff(a.price_eur, b.price_eur);
  if (dArea > RULE.outArea || dPrice > RULE.outPrice) return none;
  const bothCoords = a.lat !== null && a.lng !== null && b.lat !== null && b.lng !== null;
  const km = bothCoords ? haversineKm(a.lat!, a.lng!, b.lat!, b.lng!) : null;
  if (km !== null && km > RULE.outKm) return none;
  if (km === null && a.commune !== b.commune) return none;
  const bothLocalities = a.locality !== null && b.locality !== null;
  if (bothLocalities && a.locality !== b.locality && (km === null || km > RULE.localityConflictKm)) return none;
  const nearlyIdentical = dArea <= RULE.mergeAreaNoCoords && dPrice <= RULE.mergePriceNoCoords;
  // Without coordinates and without a locality named by both, a commune holds too many
  // flats of one size and price to call a pair likely unless the figures are the same.
  if (km === null && !bothLocalities && !nearlyIdentical) return none;

  // Closeness in [0, 1], only used to order the merges (the strongest pairs join first).
  const score = 1 - (dArea / RULE.outArea) * 0.35 - (dPrice / RULE.outPrice) * 0.35 - (km === null ? 0.15 : (km / RULE.outKm) * 0.3);
  const merge =
    km !== null
      ? km <= RULE.mergeKm && dArea <= RULE.mergeArea && dPrice <= RULE.mergePrice
      : bothLocalities && a.locality === b.locality && nearlyIdentical;
  return { kind: merge ? 'merge' : 'possible', score };
}

function completeness(n: DedupNode): number {
  return (
    (n.area_m2 !== null ? 1 : 0) +
    (n.rooms !== null ? 1 : 0) +
    (n.lat !== null ? 1 : 0) +
    (n.locality !== null ? 1 : 0) +
    (n.image_count > 0 ? 1 : 0) +
    (n.has_source_url ? 1 : 0)
  );
}

// The public listing of a group: the most complete record (area, rooms, coordinates,
// locality, photos, origin link), then the one with more photos, then the oldest
// (created_at), then the smallest id. Every criterion is a property of the records alone,
// so the choice does not depend on the order in which sources were imported.
export function compareCanonical(a: DedupNode, b: DedupNode): number {
  return (
    completeness(b) - completeness(a) ||
    b.image_count - a.image_count ||
    a.created_at.getTime() - b.created_at.getTime() ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

export interface ScoredPair {
  a: string;
  b: string;
  kind: Exclude<PairKind, 'none'>;
  score: number;
}

// Groups the nodes: merge pairs join, strongest first (ties by ids), unless the two groups
// already hold a listing of the same source (one agency never lists one flat twice under
// two references as far as we are concerned: same-source pairs are never merged, not even
// through a third listing). Returns each node's canonical id.
export function clusterNodes(nodes: Map<string, DedupNode>, pairs: ScoredPair[]): Map<string, string> {
  const parent = new Map<string, string>();
  const sources = new Map<string, Set<string>>();
  for (const n of nodes.values()) {
    parent.set(n.id, n.id);
    sources.set(n.id, new Set([n.source]));
  }
  const find = (x: string): string => {
    let r = x;
    while (parent.get(r) !== r) r = parent.get(r)!;
    let c = x;
    while (c !== r) {
      const next = parent.get(c)!;
      parent.set(c, r);
      c = next;
    }
    return r;
  };
  const merges = pairs
    .filter((p) => p.kind === 'merge' && nodes.has(p.a) && nodes.has(p.b))
    .sort((x, y) => y.score - x.score || pairKey(x).localeCompare(pairKey(y)));
  for (const p of merges) {
    const ra = find(p.a);
    const rb = find(p.b);
    if (ra === rb) continue;
    const sa = sources.get(ra)!;
    const sb = sources.get(rb)!;
    if ([...sa].some((s) => sb.has(s))) continue;
    // The smaller id becomes the root so that the structure itself is order-free.
    const [root, child] = ra < rb ? [ra, rb] : [rb, ra];
    parent.set(child, root);
    for (const s of sources.get(child)!) sources.get(root)!.add(s);
  }
  const groups = new Map<string, DedupNode[]>();
  for (const n of nodes.values()) {
    const r = find(n.id);
    const g = groups.get(r) ?? [];
    g.push(n);
    groups.set(r, g);
  }
  const canonical = new Map<string, string>();
  for (const g of groups.values()) {
    const best = [...g].sort(compareCanonical)[0];
    for (const n of g) canonical.set(n.id, best.id);
  }
  return canonical;
}

export function pairKey(p: { a: string; b: string }): string {
  return p.a < p.b ? `${p.a}|${p.b}` : `${p.b}|${p.a}`;
}
