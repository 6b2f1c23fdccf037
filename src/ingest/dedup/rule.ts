import { haversineKm } from '../../reference/gazetteer.js';
import type { ScoredPair } from './clear-matches.js';
import { areaClass, gapClass, priceGap, relDiff, RENT_LIKE, RULE } from './tolerances.js';

export { areaClass, areaRounding, gapClass, priceClass, priceGap, relDiff, RULE, type AreaClass, type PriceClass } from './tolerances.js';
export { decideMatches, type MatchPair, type ScoredPair } from './clear-matches.js';

// The facts deduplication looks at, for one live listing.
export interface DedupNode {
  id: string;
  source: string;
  listing_type: string;
  commune: string;
  locality: string | null;
  // The postcode the record states (a street or a part of one), or null.
  postcode: number | null;
  lat: number | null;
  lng: number | null;
  // Coordinates that say where the flat is: given, and not a reference point (a commune's
  // or locality's point, where geocoders put what they could not place; see the migration
  // 20261123000200). Unlocated listings are compared by commune only.
  located: boolean;
  area_m2: number | null;
  rooms: number | null;
  price_eur: number;
  // The rent is stated with its charges included (true), without them (false), or the record
  // does not say (null): see priceGap.
  charges_included: boolean | null;
  // The charges stated beside a rent without them (charges_included false), else null: see gapOf.
  charges_eur: number | null;
  image_count: number;
  has_source_url: boolean;
  created_at: Date;
  // Flagged stale: its source has not confirmed it for 14 days (flags.ts).
  stale: boolean;
}

// Reference points of the places a listing can name (communes.csv, localities.csv).
export interface PlacePoints {
  locality(commune: string, locality: string): { lat: number; lng: number } | null;
  commune(commune: string): { lat: number; lng: number; radiusKm: number } | null;
  // The points of a commune's localities and quarters (communes are not discs: a village
  // can lie further from the commune's point than the commune's radius).
  localitiesOf(commune: string): readonly { lat: number; lng: number }[];
  // A city the reference data divides into quarters (Luxembourg, Esch-sur-Alzette): a
  // listing that names only the city could be anywhere among thousands of flats.
  hasQuarters(commune: string): boolean;
}

// The rule, as evidence rather than one threshold (README "Duplicates across sources" says
// the same in full; the tolerances are in tolerances.ts).
//
// Contradictions rule a pair out whatever else agrees: the same source; another listing
// type; room counts both stated and two or more apart (one apart only when everything else
// agrees exactly: agencies count rooms their own way, bedrooms + 1, half rooms); both
// located and more than `nearKm` apart; a named locality (or, naming none, the commune)
// far from the other's position; without positions on both sides, two communes or two
// localities stated; an area or a price beyond every tolerance. Two postcodes stated by records
// naming the place alike are evidence against: only an exact area and an identical price
// outweigh them.
//
// A missing field is neither for nor against: it only leaves less evidence. Agreement is
// read in classes, with tolerances the way feeds round and measure:
// - area: "exact" (within 0.5 m2 as stated), "same" (the same once each value is read as
//   the interval its rounding allows: see areaRounding), "close" (beyond that, within
//   max(1.5 m2, 4 %): habitable vs usable surface), "wide" (within max(3 m2, 6 %): surface
//   utile vs habitable, cellar or loggia counted or not);
// - price: "same" (1 %: rounding to 10, 50 or 5,000 EUR, weekly rents made monthly),
//   "close" (3.5 %: charges included or not, unsaid), "relisted" (6 %, rents only); located
//   together, a rent said to include its charges is "close" to one not said to when the
//   charges come to at most 15 % of the latter (tolerances.ts, priceGap).
// Both located within nearKm: the area exact or the same and the price close, the area
// close or wide and the price the same, or both only close but within areaNearAbs m2 and
// priceNear, merge; an area missing on one side merges with room
// counts not contradicting and the same price; the same area and a rent 3.5-6 % apart
// (relisted, or a twin flat of a new building) is only a possible duplicate. Not both
// located: tighter, by what the two share (classifyPair: one locality or one postcode, a
// commune, a city of quarters); an area missing on one side then needs room counts stated
// alike by both and the same price, outside a city of quarters unless both name one
// locality or postcode.
//
// A pair that qualifies is a *match*. It is merged only when it is clear: each side is the
// other's best match in the other's source, by a margin (one listing per source per
// property: two equally good candidates from one agency cannot both be it), or when a
// bundle of sibling flats listed by two agencies each pairs one way clearly better than any
// other (clear-matches.ts). A match that is not clear is a *possible duplicate*.
// How precisely a weak pair (not both located) is placed: the same locality (or postcode)
// stated by both, a commune without quarters, or only a city of many quarters.
export type SharedPlace = 'locality' | 'commune' | 'city';

export interface PairVerdict {
  // 'merge': enough agreement to be one property; 'possible': a look-alike not sure
  // enough to merge (possible_duplicate); null: neither.
  match: 'merge' | 'possible' | null;
  // A contradiction: the two cannot be one property (as opposed to too little agreement
  // to say they are). Two listings that contradict never end in one group, not even
  // through a third.
  contradiction: boolean;
  // Why not, or which evidence made the match (for tests and for reading decisions).
  reason: string;
  // How far apart the two are, in tolerance units (lower is closer); only for matches.
  discrepancy: number;
  strong: boolean;
}

const no = (reason: string): PairVerdict => ({ match: null, contradiction: true, reason, discrepancy: Infinity, strong: false });
const notEnough = (reason: string): PairVerdict => ({ match: null, contradiction: false, reason, discrepancy: Infinity, strong: false });

// Is `place` (what a listing names) far from the position of the other listing?
function placeFarFrom(places: PlacePoints, commune: string, locality: string | null, lat: number, lng: number): boolean {
  if (locality !== null) {
    const p = places.locality(commune, locality);
    if (p) return haversineKm(p.lat, p.lng, lat, lng) > RULE.placeKm;
  }
  // Naming only the commune: far when far from its point (by its radius) and from every one
  // of its localities.
  const c = places.commune(commune);
  if (c === null || haversineKm(c.lat, c.lng, lat, lng) <= c.radiusKm + RULE.communeMarginKm) return false;
  return !places.localitiesOf(commune).some((p) => haversineKm(p.lat, p.lng, lat, lng) <= RULE.placeKm);
}

export function classifyPair(a: DedupNode, b: DedupNode, places: PlacePoints): PairVerdict {
  if (a.source === b.source) return no('same source');
  if (a.listing_type !== b.listing_type) return no('listing types differ');

  const area = areaClass(a.area_m2, b.area_m2);
  const gap = gapOf(a, b);
  const price = gapClass(a.listing_type, gap);
  const roomsStated = a.rooms !== null && b.rooms !== null;
  const roomsDiff = roomsStated ? Math.abs(a.rooms! - b.rooms!) : 0;
  if (roomsDiff > RULE.roomsSoftDiff) return no('room counts differ');

  const strong = a.located && b.located;
  let km: number | null = null;
  if (strong) {
    km = haversineKm(a.lat!, a.lng!, b.lat!, b.lng!);
    if (km > RULE.nearKm) return no('positions too far apart');
    // Close positions decide the place; the names need only be plausible for them (a
    // flat on the border of two quarters or communes is advertised under either).
    if (placeFarFrom(places, a.commune, a.locality, b.lat!, b.lng!) || placeFarFrom(places, b.commune, b.locality, a.lat!, a.lng!)) {
      return no('a named place is far from the other position');
    }
  } else {
    if (a.commune !== b.commune) return no('communes differ');
    if (a.locality !== null && b.locality !== null && a.locality !== b.locality) return no('localities differ');
    // A postcode names a street (or a part of one), when the agency writes the address's own.
    // Some write one postcode for a whole locality or commune instead; then a record naming
    // only the commune and one naming its locality state two postcodes for one flat. So two
    // postcodes that differ say two streets only when both records name the place alike
    // (the same locality, or none), and one postcode stated by both places the pair like a
    // shared locality only when one of them names no locality (when both name none, it may be
    // the commune's own code). Located together, the positions decide, as over the names.
    // Even named alike, two postcodes are not a contradiction but evidence against (below):
    // agencies writing their locality's one postcode beside others writing the street's kept
    // 110-119 properties of 2,500 apart in an outside probe's feeds, the largest class.
    if (a.located && b.locality !== null && placeFarFrom(places, b.commune, b.locality, a.lat!, a.lng!)) return no('a named place is far from the other position');
    if (b.located && a.locality !== null && placeFarFrom(places, a.commune, a.locality, b.lat!, b.lng!)) return no('a named place is far from the other position');
  }

  // The area and price are the flat's own: one group never spans figures further apart
  // than any match allows.
  if (area === 'far') return no('areas too far apart');
  if (price === 'far') return no('prices too far apart');
  if (roomsDiff === 1 && !(strong && (area === 'exact' || area === 'same') && price === 'same')) return notEnough('room counts one apart');

  // Two postcodes of records naming the place alike (see above): only an exact area and an
  // identical price (priceIdentical) outweigh them. Measured on the third set (look-alikes of
  // one quarter with the same figures in other streets): 0-8 more properties lost of 3,400,
  // against 47-57 more merged of 734-763 multi-listed in the outside probe's feeds.
  if (!strong && a.postcode !== null && b.postcode !== null && a.postcode !== b.postcode && a.locality === b.locality) {
    if (area !== 'exact' || gap > RULE.priceIdentical + 1e-9) return notEnough('postcodes differ');
    return { match: 'merge', contradiction: false, reason: 'area exact, price identical, postcodes differ', discrepancy: discrepancy(a, b, km), strong };
  }
  const sale = !RENT_LIKE.has(a.listing_type);
  const areaAgrees = area === 'exact' || area === 'same';
  const shared: SharedPlace | null = strong
    ? null
    : (a.locality !== null && a.locality === b.locality) || (a.postcode !== null && a.postcode === b.postcode && (a.locality === null) !== (b.locality === null))
      ? 'locality' // (a postcode: see the contradictions above)
      : places.hasQuarters(a.commune)
        ? 'city'
        : 'commune';
  const where = strong ? 'located together' : `${shared} shared`;
  const verdict = (match: 'merge' | 'possible', what: string): PairVerdict => ({
    match, contradiction: false, reason: `${what}, ${where}`, discrepancy: discrepancy(a, b, km), strong,
  });
  if (area === 'missing') {
    // Nothing to compare but rooms and price. Located together: the same price and room
    // counts not contradicting (a count left out is neutral). A price merely close is not
    // enough here: the area would be the only check left against a neighbour's flat.
    if (strong && price === 'same') return verdict('merge', 'an area missing, price same');
    // Without positions on both sides: the room count stated alike by both, the same price,
    // and a place narrower than a city of quarters (a commune of its own, or one locality
    // named by both). The driver drops such matches in a crowded place.
    if (!strong && price === 'same' && roomsStated && roomsDiff === 0 && shared !== 'city') return verdict('merge', 'an area missing, rooms and price same');
  } else if (price === 'relisted') {
    // The same area and a rent 3.5-6 % apart: the flat relisted at a new rent, or its twin
    // in a new building. Not sure enough to merge either way.
    if (strong && area === 'exact') return verdict('possible', 'area exact, rent relisted or a twin flat');
  } else if (area === 'wide') {
    // Surface utile vs habitable: only with the same price, located together.
    if (strong && price === 'same') return verdict('merge', 'area wide, price same');
  } else if (strong) {
    if (areaAgrees || price === 'same') return verdict('merge', `area ${area}, price ${price}`);
    // Both figures only close, but each within what feeds do to one flat's figures: the area
    // within 2 m2 as stated (habitable vs usable surface, one agency's rounding) and the
    // price within 3 % (charges, rounding).
    if (Math.abs(a.area_m2! - b.area_m2!) <= RULE.areaNearAbs + 1e-9 && gap <= RULE.priceNear + 1e-9) {
      return verdict('merge', 'area and price close, within 2 m2 and 3 %');
    }
  } else if (area === 'exact' && price === 'same') {
    return verdict('merge', 'area exact, price same');
  } else if (shared !== 'city') {
    // The area exact and the price close: charges counted or not, a sale's agency fees
    // included or not, each agency's rounding.
    if (area === 'exact' && price === 'close') return verdict('merge', 'area exact, price close');
    // Beyond exact figures, a sale's asking price (the seller's) must be the same; a
    // commune-wide match needs the room count too, except for a sale at the same asking price
    // and the same area.
    if (sale && price !== 'same') return notEnough(`not enough agreement (area ${area}, price ${price}, a sale not both located)`);
    if (shared === 'locality' || (roomsStated && roomsDiff === 0) || (sale && area === 'same')) {
      if (area === 'same' || price === 'same') return verdict('merge', `area ${area}, price ${price}`);
    }
  }
  return notEnough(`not enough agreement (area ${area}, price ${price}, ${strong ? 'located together' : 'not both located'})`);
}

// Distance between two matching listings in tolerance units: area (raw difference over
// max(1.5 m2, 4 %)), price (over 3.5 %), position (over nearKm; 1 when not both located),
// and 1 for an area missing. Only compares the candidates of one listing with each other.
export function discrepancy(a: DedupNode, b: DedupNode, km: number | null): number {
  const areaUnit = (x: number, y: number) => Math.abs(x - y) / Math.max(RULE.areaCloseAbs, RULE.areaCloseRel * Math.max(x, y));
  const area = a.area_m2 && b.area_m2 ? areaUnit(a.area_m2, b.area_m2) : 1;
  return area + gapOf(a, b) / RULE.priceClose + (km === null ? 1 : km / RULE.nearKm);
}

// The gap between two listings' prices. A rent with its charges included beside one stating the
// charges it leaves out compares with that rent plus them, located or not: the figure is known
// (an outside probe: 101-102 of about 210 such missed pairs a seed added up exactly). Otherwise,
// located together, a rent with its charges included is read as the cold rents it allows
// (tolerances.ts, priceGap): a wider tolerance, for strong evidence only; without positions on
// both sides, the prices as stated.
function gapOf(a: DedupNode, b: DedupNode): number {
  const warm = statedWarm(a, b) ?? statedWarm(b, a);
  if (warm !== null) return relDiff(warm[0], warm[1]);
  return a.located && b.located
    ? priceGap(a.listing_type, a.price_eur, a.charges_included, b.price_eur, b.charges_included)
    : relDiff(a.price_eur, b.price_eur);
}

// [a's rent with its charges, b's rent plus the charges it states], when a includes them and b
// states them; else null.
function statedWarm(a: DedupNode, b: DedupNode): [number, number] | null {
  return a.charges_included === true && b.charges_eur !== null && RENT_LIKE.has(a.listing_type) ? [a.price_eur, b.price_eur + b.charges_eur] : null;
}

// A real position counts two points: without one, the property is out of every radius search
// (an outside probe found groups whose public listing had none while a member had one, after a
// tie with an origin link that OpenImmo feeds do not carry).
function completeness(n: DedupNode): number {
  return (
    (n.area_m2 ? 1 : 0) +
    (n.rooms !== null ? 1 : 0) +
    (n.located ? 2 : 0) +
    (n.locality !== null ? 1 : 0) +
    (n.image_count > 0 ? 1 : 0) +
    (n.has_source_url ? 1 : 0)
  );
}

// The representative (public listing) of a group: a record its source still confirms (not
// stale) before one it has stopped confirming, since a stale public listing would hide from
// Free and Starter keys a property another source still lists; then the most complete
// record (area, rooms, locality, photos, origin link: one point each; a real position two),
// then the oldest (created_at, the source's own date), then the smallest id. Every criterion is a
// property of the records alone (and of the clock, for stale), so the choice does not
// depend on the order of the imports.
export function compareCanonical(a: DedupNode, b: DedupNode): number {
  return (
    Number(a.stale) - Number(b.stale) ||
    completeness(b) - completeness(a) ||
    a.created_at.getTime() - b.created_at.getTime() ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

export interface Resolution {
  // Each node's group representative (itself when it is one).
  canonical: Map<string, string>;
  // Representatives that get the possible_duplicate flag.
  possibleDuplicate: Set<string>;
}

// Two clear merges of one listing, with listings of two other sources that cannot be one
// property (they contradict each other), about as good as each other (within
// RULE.clearMargin): nothing tells which one it is, and taking the first by the order of ids
// would decide by the install's id secret (an outside probe: the same feeds merged one way on
// one database and the other way on another). Neither merges: each is a possible duplicate,
// flagged on the listing that hesitates (the two it hesitates between stay visible).
function undecidedMerges(
  nodes: Map<string, DedupNode>,
  pairs: ScoredPair[],
  contradicts: (a: DedupNode, b: DedupNode) => boolean,
): Map<ScoredPair, ScoredPair> {
  const byNode = new Map<string, ScoredPair[]>();
  for (const p of pairs) {
    if (p.kind !== 'merge') continue;
    for (const n of [p.a, p.b]) {
      const list = byNode.get(n);
      if (list) list.push(p);
      else byNode.set(n, [p]);
    }
  }
  const undecided = new Map<ScoredPair, ScoredPair>();
  for (const [n, ps] of byNode) {
    for (let i = 0; i < ps.length; i++) {
      for (let j = i + 1; j < ps.length; j++) {
        const [p, q] = [ps[i], ps[j]];
        if (Math.abs(p.discrepancy - q.discrepancy) >= RULE.clearMargin) continue;
        const x = nodes.get(p.a === n ? p.b : p.a)!;
        const y = nodes.get(q.a === n ? q.b : q.a)!;
        if (!contradicts(x, y)) continue;
        for (const r of [p, q]) {
          // Undecided from both of its ends: neither may carry the flag.
          const flag = undecided.has(r) && undecided.get(r)!.flag !== n ? null : n;
          undecided.set(r, { ...r, kind: 'possible', flag });
        }
      }
    }
  }
  return undecided;
}

// Groups the nodes and decides who is public and who is flagged.
// - Clear matches join groups, closest first (ties by ids), unless the two groups already
//   hold a listing of one source (an agency does not list one flat twice as far as we are
//   concerned: same-source listings never end in one group, not even through a third) or
//   two listings that contradict each other.
// - Each group's representative is chosen by compareCanonical.
// - A possible duplicate links the group of its hesitating side (ScoredPair.flag) to the
//   other's; groups are looked at best representative first, and a linked group ranking
//   below a look-alike kept visible gets possible_duplicate on its representative. So every
//   flagged listing has a visible, better-ranked look-alike, no candidate of a hesitating
//   listing is ever hidden for it, and merged rows never carry the flag.
export function resolveGroups(
  nodes: Map<string, DedupNode>,
  pairs: ScoredPair[],
  contradicts: (a: DedupNode, b: DedupNode) => boolean,
): Resolution {
  const parent = new Map<string, string>();
  const members = new Map<string, DedupNode[]>();
  for (const n of nodes.values()) {
    parent.set(n.id, n.id);
    members.set(n.id, [n]);
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
  const inRegion = pairs.filter((p) => nodes.has(p.a) && nodes.has(p.b));
  const undecided = undecidedMerges(nodes, inRegion, contradicts);
  const merges = inRegion
    .filter((p) => p.kind === 'merge' && !undecided.has(p))
    .sort((x, y) => x.discrepancy - y.discrepancy || pairKey(x).localeCompare(pairKey(y)));
  for (const p of merges) {
    const ra = find(p.a);
    const rb = find(p.b);
    if (ra === rb) continue;
    const ma = members.get(ra)!;
    const mb = members.get(rb)!;
    if (ma.some((x) => mb.some((y) => x.source === y.source || contradicts(x, y)))) continue;
    // The smaller id becomes the root so that the structure itself is order-free.
    const [root, child] = ra < rb ? [ra, rb] : [rb, ra];
    parent.set(child, root);
    members.set(root, [...ma, ...mb]);
    members.delete(child);
  }
  const canonical = new Map<string, string>();
  const groupOf = new Map<string, DedupNode[]>();
  for (const g of members.values()) {
    const best = [...g].sort(compareCanonical)[0];
    for (const n of g) canonical.set(n.id, best.id);
    groupOf.set(best.id, g);
  }

  // links: the group that may carry the flag -> the groups it may be a duplicate of.
  const links = new Map<string, Set<string>>();
  for (const p of [...inRegion.filter((q) => q.kind === 'possible'), ...undecided.values()]) {
    if (!p.flag) continue;
    const mine = canonical.get(p.flag)!;
    const theirs = canonical.get(p.flag === p.a ? p.b : p.a)!;
    if (mine === theirs) continue;
    // A member of one group that contradicts a member of the other (positions far apart, two
    // communes): the groups cannot be one property, whatever the hesitating listing is.
    if (groupOf.get(mine)!.some((x) => groupOf.get(theirs)!.some((y) => contradicts(x, y)))) continue;
    if (!links.has(mine)) links.set(mine, new Set());
    links.get(mine)!.add(theirs);
  }
  const ranked = [...new Set([...links.keys(), ...[...links.values()].flatMap((s) => [...s])])].map((id) => nodes.get(id)!).sort(compareCanonical);
  const possibleDuplicate = new Set<string>();
  for (const rep of ranked) {
    // Flagged when every look-alike it may be surely stays visible (so flagging it hides no
    // property it could be): each one never hesitates itself (it is never flagged for it) and
    // is confirmed by its source (not stale: a stale listing is hidden from Free and Starter
    // keys), whatever the ranks; or ranks above it and was left visible (better ranked, so
    // already decided; a stale one ranks below any other).
    const visible = (o: string) => (!links.has(o) && !nodes.get(o)!.stale) || (!possibleDuplicate.has(o) && compareCanonical(nodes.get(o)!, rep) < 0);
    const mine = [...(links.get(rep.id) ?? [])];
    if (mine.length > 0 && mine.every(visible)) possibleDuplicate.add(rep.id);
  }
  return { canonical, possibleDuplicate };
}

export function pairKey(p: { a: string; b: string }): string {
  return p.a < p.b ? `${p.a}|${p.b}` : `${p.b}|${p.a}`;
}
