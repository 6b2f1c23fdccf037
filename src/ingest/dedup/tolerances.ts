// The tolerances of the deduplication rule (rule.ts), the way feeds round and measure, and
// the agreement classes they define. No I/O; candidates.ts writes the same classes in SQL.
export const RULE = {
  nearKm: 0.3,
  // Two positions this close are one building, as geocoders place it: one street, so one
  // postcode, and two postcodes stated are one agency's street code and another's locality code,
  // neither for nor against (rule.ts; stop 56). 15 m: 30 m also took two buildings across a
  // street, or a corner building's two addresses (the re-check of stop 56).
  sameBuildingKm: 0.015,
  placeKm: 2.0,
  communeMarginKm: 1.0,
  roomsSoftDiff: 1,
  areaExact: 0.5,
  areaSame: 0.5,
  areaCloseAbs: 1.5,
  areaCloseRel: 0.04,
  // Beyond "close": one agency's surface utile, another's habitable surface (walls,
  // loggias, a cellar share counted or not). Only ever merges with the same price and close
  // positions (rule.ts).
  areaWideAbs: 3,
  areaWideRel: 0.06,
  // Located together, an area within this many m2 as stated and a price within priceNear:
  // two agencies' measures and roundings of one flat, each at the edge of a class.
  // 2 m2 and 3 % since stop 38 (1.5 and 2 % before): what issue 13 says of the pairs missed on
  // the feeds we had not seen, and what an outside probe's own feeds did (docs/feed-operators.md).
  areaNearAbs: 2.0,
  priceNear: 0.03,
  priceSame: 0.01,
  // Prices this close are one figure (up to an agency's rounding of a sale to 5,000 EUR above
  // 2,000,000): what outweighs two postcodes (rule.ts).
  priceIdentical: 0.0025,
  priceClose: 0.035,
  priceRelisted: 0.06,
  // A rent stated with its charges included (OpenImmo warmmiete, "CC", "charges comprises")
  // beside one that is not: the charges are up to this share of the cold rent (a flat's
  // charges in Luxembourg run about 2-4 EUR/m2 a month, 5-15 % of its rent). 0.12 until stop 40:
  // an outside probe's agencies stated charges of 7-15 %, and recall on its feeds rose 0.704 /
  // 0.718 -> 0.719 / 0.726 with 0.15, lost and the other sets unchanged.
  chargesMax: 0.15,
  // Charges a record states beside a rent without them (normalize.ts keeps them up to this
  // share of the rent; more is a slip or another figure): that rent plus them is the rent with
  // charges another agency states (rule.ts, gapOf).
  statedChargesMax: 0.5,
  // Discrepancy units (see discrepancy()) by which the best match must beat the next.
  clearMargin: 0.2,
  // A listing with more candidates than this not located on both sides is in a crowded
  // place: its weak matches are not used (driver.ts).
  crowd: 4,
};

// Listing types whose price is a monthly rent.
export const RENT_LIKE = new Set(['RENT', 'SUBLET', 'FLATSHARE']);

export function relDiff(a: number, b: number): number {
  const m = Math.max(Math.abs(a), Math.abs(b));
  return m === 0 ? 0 : Math.abs(a - b) / m;
}

// Half the rounding step a stated area may hide: a multiple of 5 may be rounded to 5 m2
// (agencies round flats that way, not rooms: at most 3 % of the area), a whole number to
// 1 m2, a half to 0.5 m2; a decimal is as measured.
export function areaRounding(a: number): number {
  if (Number.isInteger(a)) return a % 5 === 0 ? Math.max(0.5, Math.min(2.5, 0.03 * a)) : 0.5;
  if (Number.isInteger(a * 2)) return 0.25;
  return 0.05;
}

export type AreaClass = 'exact' | 'same' | 'close' | 'wide' | 'far' | 'missing';
export type PriceClass = 'same' | 'close' | 'relisted' | 'far';

export function areaClass(a: number | null, b: number | null): AreaClass {
  if (!(a && a > 0) || !(b && b > 0)) return 'missing';
  const raw = Math.abs(a - b);
  if (raw <= RULE.areaExact + 1e-9) return 'exact';
  const residual = Math.max(0, raw - areaRounding(a) - areaRounding(b));
  if (residual <= RULE.areaSame + 1e-9) return 'same';
  const big = Math.max(a, b);
  if (residual <= Math.max(RULE.areaCloseAbs, RULE.areaCloseRel * big) + 1e-9) return 'close';
  if (residual <= Math.max(RULE.areaWideAbs, RULE.areaWideRel * big) + 1e-9) return 'wide';
  return 'far';
}

export function priceClass(type: string, a: number, b: number): PriceClass {
  return gapClass(type, relDiff(a, b));
}

// The relative gap between two listings' prices, located together (rule.ts). A rent with its
// charges included, beside one not said to include them (a cold rent, or a rent stated without
// saying), is the cold rent plus charges of 0 to chargesMax of it: a cold rent up to that much
// under it reads as "close" at least (not "same" unless within 1 %: the charges are unknown).
// Further under it, two rents that say the same of their charges, and sales compare as stated.
export function priceGap(type: string, a: number, aIncludesCharges: boolean | null, b: number, bIncludesCharges: boolean | null): number {
  const d = relDiff(a, b);
  if (!RENT_LIKE.has(type) || (aIncludesCharges === true) === (bIncludesCharges === true)) return d;
  const [warm, other] = aIncludesCharges === true ? [a, b] : [b, a];
  if (other >= warm) return d; // charges are never negative
  const low = warm / (1 + RULE.chargesMax);
  return other >= low ? Math.min(d, RULE.priceClose) : d;
}

export function gapClass(type: string, d: number): PriceClass {
  if (d <= RULE.priceSame + 1e-9) return 'same';
  if (d <= RULE.priceClose + 1e-9) return 'close';
  if (RENT_LIKE.has(type) && d <= RULE.priceRelisted + 1e-9) return 'relisted';
  return 'far';
}
