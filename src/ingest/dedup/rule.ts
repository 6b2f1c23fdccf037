import { haversineKm } from '../../reference/gazetteer.js';
import type { DedupNode } from './node.js';
import { areaClass, gapClass, priceGap, relDiff, RENT_LIKE, RULE } from './tolerances.js';

export { areaClass, areaRounding, gapClass, priceClass, priceGap, relDiff, RULE, type AreaClass, type PriceClass } from './tolerances.js';
export { decideMatches, type MatchPair, type ScoredPair } from './clear-matches.js';
export { compareCanonical, pairKey, resolveGroups, type Resolution } from './groups.js';
export type { DedupNode } from './node.js';

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
// type; two floors stated (floor.ts); room counts both stated and two or more apart (one
// apart only when everything else agrees exactly: agencies count rooms their own way,
// bedrooms + 1, half rooms); both
// located and more than `nearKm` apart; a named locality (or, naming none, the commune)
// far from the other's position; without positions on both sides, two communes or two
// localities stated; an area or a price beyond every tolerance. Two postcodes stated (neither
// written per place by its source) are evidence against, located together or not: only an
// identical price with the area exact (or, located together, missing) outweighs them; within
// 15 m (one building) they are neither for nor against.
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
//   charges come to at most 15 % of the latter (tolerances.ts, priceGap); not located
//   together, such a pair is not a contradiction, but too little agreement; a rent with its
//   charges beside one stating the charges it leaves out compares with that rent plus them
//   (gapOf).
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
  // Not located together, a rent with its charges included and one without, within the charges
  // band (priceGap; the charges unstated on both sides): the prices compare as stated (weaker
  // evidence), but the two may be one flat, so it is too little agreement, not a contradiction
  // (an outside probe's agencies wrote 63 such pairs in 734 multi-listed properties). Merging
  // them with the area exact, the rooms alike and one locality was tried (stop 40): +0.03 recall
  // on its feeds, but its candidate search (every rent up to 15 % dearer) made an import of
  // 100,000 records into 1,000,000 take 253 s instead of 191.
  const chargesAlone = !(a.located && b.located) && a.charges_eur === null && b.charges_eur === null && priceGap(a.listing_type, a.price_eur, a.charges_included, b.price_eur, b.charges_included) < gap;
  const price = gapClass(a.listing_type, gap);
  const roomsStated = a.rooms !== null && b.rooms !== null;
  const roomsDiff = roomsStated ? Math.abs(a.rooms! - b.rooms!) : 0;
  if (roomsDiff > RULE.roomsSoftDiff) return no('room counts differ');
  // Two floors stated: two flats, the twins of one building that agree on everything else
  // (floor.ts reads a title's floor; an outside probe of stop 56 had 24 of its 25 pairs of twin
  // flats merged, each record's title naming its floor).
  if (a.floor != null && b.floor != null && a.floor !== b.floor) return no('floors differ');

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
    // only the commune and one naming its locality state two postcodes for one flat. So one
    // postcode stated by both places the pair like a shared locality only when one of them names
    // no locality (when both name none, it may be the commune's own code), and two that differ
    // are evidence against, not a contradiction (below). Located together, the positions
    // decide, as over the names.
    if (a.located && b.locality !== null && placeFarFrom(places, b.commune, b.locality, a.lat!, a.lng!)) return no('a named place is far from the other position');
    if (b.located && a.locality !== null && placeFarFrom(places, a.commune, a.locality, b.lat!, b.lng!)) return no('a named place is far from the other position');
  }

  // The area and price are the flat's own: one group never spans figures further apart
  // than any match allows.
  if (area === 'far') return no('areas too far apart');
  if (price === 'far' && chargesAlone) return notEnough('a rent with its charges against one without, not located together');
  if (price === 'far') return no('prices too far apart');
  // Room counts one apart: agencies count rooms their own way (bedrooms typed as rooms, a
  // living room counted or not). Enough only when the rest agrees exactly: located together,
  // the area the same and the price the same; not, the area exact, the price the same and one
  // locality named by both.
  const oneLocality = a.locality !== null && a.locality === b.locality;
  if (roomsDiff === 1 && !(strong && (area === 'exact' || area === 'same') && price === 'same') && !(!strong && oneLocality && area === 'exact' && price === 'same')) return notEnough('room counts one apart');

  // Two postcodes (neither from a source writing one per place: postcodes.ts) say two streets:
  // only an exact area and an identical price (priceIdentical) outweigh them; located together,
  // also an area missing on one side with an identical price. Not located together, they were a
  // contradiction between records naming the place alike, and nothing otherwise: an outside
  // probe's agencies writing their locality's postcode beside others writing the street's kept
  // 110-119 properties of 2,500 apart (a seventh set); another's merged flats of two streets of
  // one commune, one record naming only the commune (an eighth). As evidence against, whatever
  // the names: fewer lost on every set (stop 40). Located together, positions alone decided until
  // stop 43: street-level geocoding puts flats of two streets within 300 m, and on the eleventh
  // set (an outside session's) 32 such pairs were wrong merges or possible duplicates against 13
  // true, 11 of them identical in price; 58 wrong against none true on the third set.
  // Positions within 15 m (one building: one street, one postcode) make two postcodes neither for
  // nor against: one agency writes the street's code, another the locality's (an outside probe of
  // stop 56: 327 true pairs within 2 m2 and 3 % with two postcodes, 47 % merged; at the same point
  // too). Within 15 m: +38 of its 850 multi-listed properties for none lost, +1 / +1 on the tenth
  // set, +1 on the eleventh, nothing else moved (30 m: +45 for 5 lost, and the re-check merged
  // flats across a street, 25 m apart; 60 m: +50 for 6, +2 lost on the tenth).
  const oneBuilding = km !== null && km <= RULE.sameBuildingKm;
  if (!oneBuilding && a.postcode !== null && b.postcode !== null && a.postcode !== b.postcode && !a.postcode_of_place && !b.postcode_of_place) {
    const figuresOutweigh = gap <= RULE.priceIdentical + 1e-9 && (area === 'exact' || (strong && area === 'missing'));
    if (!figuresOutweigh) return notEnough('postcodes differ');
    return { match: 'merge', contradiction: false, reason: `area ${area}, price identical, postcodes differ`, discrepancy: discrepancy(a, b, km), strong };
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
