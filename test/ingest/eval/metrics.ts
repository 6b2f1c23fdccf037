import type { Knex } from 'knex';

// What deduplication did to a set with known truth, measured from the database after the
// imports: per property (the unit a user cares about) and per pair of listings.
//
// A listing's group is the public listing it ended in: itself when active, the listing it
// was merged into when merged. A listing visible to a Free key is active and unflagged
// (docs/spec/contract.md section 7: Free and Starter keys never see flagged listings).

export interface ListingState {
  key: string; // `${source}\u0000${external_id}`
  id: string;
  source: string;
  status: 'active' | 'inactive' | 'merged';
  mergedInto: string | null;
  flags: string[];
  // The figures as stored (for the recall within 2 m2 and 3 %); absent in hand-built states.
  area?: number | null;
  price?: number;
}

export interface Metrics {
  properties: number;
  listings: number;
  rejected: number;
  multiListed: number;
  // Multi-listed properties whose listings all ended in one group.
  mergedToOne: number;
  recall: number;
  // The same over the multi-listed properties whose listings all lie within 2 m2 of area (or
  // have none) and 3 % of price of each other: issue 13 says every pair missed on the feeds
  // we had not seen was within those.
  within: { multiListed: number; mergedToOne: number; recall: number };
  // Properties with a listing in a group whose public listing is another property's.
  lost: number;
  lostShare: number;
  // ... of which no listing is left visible to a Free key.
  lostAndHidden: number;
  pairs: { precision: number; recall: number; tp: number; fp: number; fn: number };
  freeVisible: number;
  freeVisibility: number;
  // Why the properties that a Free key cannot see are hidden (a property counts once, under
  // the first reason that applies in this order).
  hiddenBy: { rejected: number; wrongMerge: number; possibleDuplicate: number; priceOutlier: number; stale: number; other: number };
  // Properties a Free key sees more than once.
  shownTwice: number;
  possibleDuplicate: {
    // Active listings flagged possible_duplicate.
    flagged: number;
    // ... whose property has another listing in another group: a true duplicate left unmerged.
    onUnmergedDuplicates: number;
    // ... whose property is listed once, or whose listings are all merged already.
    onOthers: number;
  };
}

export async function readStates(db: Knex, truth: Map<string, string>): Promise<Map<string, ListingState>> {
  const rows = (await db('listings').select('id', 'source', 'external_id', 'status', 'merged_into', 'flags', 'area_m2', 'price_eur')) as {
    id: string; source: string; external_id: string; status: ListingState['status']; merged_into: string | null; flags: string[];
    area_m2: number | null; price_eur: number;
  }[];
  const out = new Map<string, ListingState>();
  for (const r of rows) {
    const key = `${r.source}\u0000${r.external_id}`;
    if (!truth.has(key)) continue;
    out.set(key, { key, id: r.id, source: r.source, status: r.status, mergedInto: r.merged_into, flags: [...r.flags], area: r.area_m2, price: r.price_eur });
  }
  return out;
}

export function groupOf(s: ListingState): string | null {
  if (s.status === 'active') return s.id;
  if (s.status === 'merged') return s.mergedInto;
  return null;
}

export const visibleToFree = (s: ListingState) => s.status === 'active' && s.flags.length === 0;

export function computeMetrics(truth: Map<string, string>, states: Map<string, ListingState>): Metrics {
  const byProperty = new Map<string, string[]>();
  for (const [k, p] of truth) byProperty.set(p, [...(byProperty.get(p) ?? []), k]);
  const propertyOfId = new Map<string, string>();
  for (const s of states.values()) propertyOfId.set(s.id, truth.get(s.key)!);

  let multiListed = 0;
  let mergedToOne = 0;
  const within = { multiListed: 0, mergedToOne: 0, recall: 1 };
  let lost = 0;
  let lostAndHidden = 0;
  let freeVisible = 0;
  let shownTwice = 0;
  const hiddenBy = { rejected: 0, wrongMerge: 0, possibleDuplicate: 0, priceOutlier: 0, stale: 0, other: 0 };
  let rejected = 0;

  for (const [prop, keys] of byProperty) {
    const st = keys.map((k) => states.get(k));
    rejected += st.filter((s) => !s).length;
    const present = st.filter((s): s is ListingState => !!s);
    const groups = present.map(groupOf);
    if (keys.length > 1) {
      multiListed++;
      const one = present.length === keys.length && groups[0] !== null && groups.every((g) => g === groups[0]);
      if (one) mergedToOne++;
      if (present.length === keys.length && present.every((a) => present.every((b) => closeFigures(a, b)))) {
        within.multiListed++;
        if (one) within.mergedToOne++;
      }
    }
    const isLost = groups.some((g) => g !== null && propertyOfId.get(g) !== undefined && propertyOfId.get(g) !== prop);
    const visible = present.filter(visibleToFree).length;
    if (isLost) lost++;
    if (visible > 0) freeVisible++;
    if (visible > 1) shownTwice++;
    if (isLost && visible === 0) lostAndHidden++;
    if (visible === 0) {
      const flags = new Set(present.filter((s) => s.status === 'active').flatMap((s) => s.flags));
      if (present.length === 0) hiddenBy.rejected++;
      else if (isLost) hiddenBy.wrongMerge++;
      else if (flags.has('possible_duplicate')) hiddenBy.possibleDuplicate++;
      else if (flags.has('price_outlier')) hiddenBy.priceOutlier++;
      else if (flags.has('stale')) hiddenBy.stale++;
      else hiddenBy.other++;
    }
  }

  // Pairs: two listings are "predicted the same" when they ended in one group.
  let tp = 0;
  let fp = 0;
  let fn = 0;
  const members = new Map<string, string[]>();
  for (const s of states.values()) {
    const g = groupOf(s);
    if (g) members.set(g, [...(members.get(g) ?? []), s.key]);
  }
  for (const m of members.values())
    for (let i = 0; i < m.length; i++)
      for (let j = i + 1; j < m.length; j++) {
        if (truth.get(m[i]) === truth.get(m[j])) tp++;
        else fp++;
      }
  for (const keys of byProperty.values())
    for (let i = 0; i < keys.length; i++)
      for (let j = i + 1; j < keys.length; j++) {
        const a = states.get(keys[i]);
        const b = states.get(keys[j]);
        if (!a || !b || groupOf(a) === null || groupOf(a) !== groupOf(b)) fn++;
      }

  const flaggedActive = [...states.values()].filter((s) => s.status === 'active' && s.flags.includes('possible_duplicate'));
  let onUnmerged = 0;
  for (const s of flaggedActive) {
    const prop = truth.get(s.key)!;
    const others = byProperty.get(prop)!.map((k) => states.get(k)).filter((o): o is ListingState => !!o && o.key !== s.key);
    if (others.some((o) => groupOf(o) !== null && groupOf(o) !== s.id)) onUnmerged++;
  }

  const properties = byProperty.size;
  return {
    properties,
    listings: truth.size,
    rejected,
    multiListed,
    mergedToOne,
    recall: multiListed ? mergedToOne / multiListed : 1,
    within: { ...within, recall: within.multiListed ? within.mergedToOne / within.multiListed : 1 },
    lost,
    lostShare: properties ? lost / properties : 0,
    lostAndHidden,
    pairs: { precision: tp + fp ? tp / (tp + fp) : 1, recall: tp + fn ? tp / (tp + fn) : 1, tp, fp, fn },
    freeVisible,
    freeVisibility: properties ? freeVisible / properties : 1,
    hiddenBy,
    shownTwice,
    possibleDuplicate: { flagged: flaggedActive.length, onUnmergedDuplicates: onUnmerged, onOthers: flaggedActive.length - onUnmerged },
  };
}

// Within 2 m2 of area (or an area missing) and 3 % of price.
function closeFigures(a: ListingState, b: ListingState): boolean {
  const priced = a.price !== undefined && b.price !== undefined;
  if (priced && Math.abs(a.price! - b.price!) > 0.03 * Math.max(a.price!, b.price!)) return false;
  return !(a.area && b.area && Math.abs(a.area - b.area) > 2);
}

// The targets (issue 13), on every evaluation set.
export const TARGETS = { recall: 0.95, lostShare: 0.02, freeVisibility: 0.97 };

export function meetsTargets(m: Metrics): string[] {
  const misses: string[] = [];
  if (m.recall < TARGETS.recall) misses.push(`recall ${m.recall.toFixed(3)} < ${TARGETS.recall}`);
  if (m.lostShare > TARGETS.lostShare) misses.push(`lost ${(100 * m.lostShare).toFixed(2)} % > ${100 * TARGETS.lostShare} %`);
  if (m.freeVisibility < TARGETS.freeVisibility) misses.push(`Free visibility ${(100 * m.freeVisibility).toFixed(2)} % < ${100 * TARGETS.freeVisibility} %`);
  return misses;
}
