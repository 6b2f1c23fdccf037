import { RULE } from './tolerances.js';

// The candidate search of deduplication (driver.ts), in SQL: blocking through the dedup
// indexes, then the agreement classes of rule.ts written in SQL, so that only matches travel
// back to be decided by classifyPair.

// The listing's source writes one postcode per locality (postcodes.ts).
const LOCALITY_CODED = `ARRAY(SELECT name FROM sources WHERE postcode_per_locality)`;
const placeCoded = (t: string) => `(${t}.source = ANY (${LOCALITY_CODED}))`;

// The columns of a DedupNode and its standing, for listings aliased `t`.
export const NODE_COLS = (t: string) => `${t}.id, ${t}.source, ${t}.listing_type, ${t}.commune, ${t}.locality, ${t}.postcode, ${placeCoded(t)} AS postcode_of_place, ${t}.lat, ${t}.lng,
  (${t}.dedup_cell IS NOT NULL) AS located, ${t}.area_m2, ${t}.rooms, ${t}.price_eur, ${t}.charges_included, ${t}.charges_eur, ${t}.floor, jsonb_array_length(${t}.images) AS image_count,
  (${t}.source_url IS NOT NULL) AS has_source_url, ${t}.created_at, ${t}.stated_created_at AS stated_at, ('stale' = ANY (${t}.flags)) AS stale, ('price_outlier' = ANY (${t}.flags)) AS outlier, ${t}.status, ${t}.merged_into, ${t}.flags`;

// 3 x 3 grid cells around a point (cells are 0.004 deg of latitude by 0.006 deg of
// longitude, about 450 m square here, wider than RULE.nearKm), as offsets of dedup_cell.
const CELL_OFFSETS = `'{-100001,-100000,-99999,-1,0,1,99999,100000,100001}'::bigint[]`;

// Cities of many quarters (PlacePoints.hasQuarters), for sqlWeak.
const CITIES = `ARRAY(SELECT DISTINCT commune FROM localities WHERE kind LIKE 'quartier%')`;

const EPS = 1e-6;
// SQL of rule.ts's classes, for c (candidate) and f (probe); slightly wider (EPS) so that
// nothing classifyPair would accept is lost.
const slack = (x: string) =>
  `(CASE WHEN ${x} = trunc(${x}) THEN CASE WHEN mod(${x}::numeric, 5) = 0 THEN greatest(0.5, least(2.5, 0.03 * ${x})) ELSE 0.5 END
         WHEN ${x} * 2 = trunc(${x} * 2) THEN 0.25 ELSE 0.05 END)`;
const rawArea = `abs(c.area_m2 - f.area_m2)`;
const areaExact = `${rawArea} <= ${RULE.areaExact + EPS}`;
const areaSame = `${rawArea} - ${slack('c.area_m2')} - ${slack('f.area_m2')} <= ${RULE.areaSame + EPS}`;
const areaClose = `${rawArea} - ${slack('c.area_m2')} - ${slack('f.area_m2')} <= greatest(${RULE.areaCloseAbs}, ${RULE.areaCloseRel} * greatest(c.area_m2, f.area_m2)) + ${EPS}`;
const areaWide = `${rawArea} - ${slack('c.area_m2')} - ${slack('f.area_m2')} <= greatest(${RULE.areaWideAbs}, ${RULE.areaWideRel} * greatest(c.area_m2, f.area_m2)) + ${EPS}`;
const rentLike = `f.listing_type <> 'SALE'`;
// The prices compared (rule.ts, gapOf): a rent with its charges included beside one stating the
// charges it leaves out compares with that rent plus them.
const compared = (t: string, o: string) =>
  `(CASE WHEN ${o}.charges_included IS TRUE AND ${t}.charges_eur IS NOT NULL AND ${rentLike} THEN ${t}.price_eur + ${t}.charges_eur ELSE ${t}.price_eur END)`;
const [cPrice, fPrice] = [compared('c', 'f'), compared('f', 'c')];
const priceWithin = (tol: number) => `abs(${cPrice} - ${fPrice}) <= ${tol + EPS} * greatest(${cPrice}, ${fPrice})`;
// Located together (tolerances.ts, priceGap): a rent with its charges included and one not said
// to include them, up to chargesMax under it, are "close".
const warm = `(CASE WHEN c.charges_included IS TRUE THEN c.price_eur ELSE f.price_eur END)`;
const other = `(CASE WHEN c.charges_included IS TRUE THEN f.price_eur ELSE c.price_eur END)`;
const chargesClose = `(${rentLike} AND (c.charges_included IS TRUE) <> (f.charges_included IS TRUE)
    AND ${other} < ${warm} AND ${other} * ${1 + RULE.chargesMax} >= ${warm} - ${EPS})`;
const gapWithin = (tol: number) => (tol >= RULE.priceClose ? `(${priceWithin(tol)} OR ${chargesClose})` : priceWithin(tol));
const roomsSame = `c.rooms = f.rooms`;
// Both located within RULE.nearKm (a box around it: 0.0028 deg of latitude is 311 m, 0.0044
// of longitude at least 300 m north to 49.9 N).
const near = `abs(c.lat - f.lat) <= 0.0028 AND abs(c.lng - f.lng) <= 0.0044`;
const sqlStrong = `${near} AND (((${areaExact} OR ${areaSame}) AND ${gapWithin(RULE.priceClose)})
    OR (${rawArea} <= ${RULE.areaNearAbs + EPS} AND ${priceWithin(RULE.priceNear)})
    OR (${areaWide} AND ${priceWithin(RULE.priceSame)})
    OR (${areaExact} AND ${rentLike} AND ${gapWithin(RULE.priceRelisted)}))`;
const sqlStrongNoArea = `${near} AND (c.rooms IS NULL OR f.rooms IS NULL OR ${roomsSame}) AND ${priceWithin(RULE.priceSame)}`;
// A locality named by both, or a postcode stated by both when one of them names no locality
// (rule.ts: shared 'locality'); no locality stated differently by them, nor two postcodes
// unless the area is exact and the price identical (rule.ts explains why a postcode counts only so).
const samePlace = `(c.locality = f.locality OR (c.postcode = f.postcode AND (c.locality IS NULL) <> (f.locality IS NULL)))`;
const postcodesAgree = `(c.postcode IS NULL OR f.postcode IS NULL OR c.postcode = f.postcode OR ${placeCoded('c')} OR ${placeCoded('f')})`;
const noOtherPlace = `(c.locality IS NULL OR f.locality IS NULL OR c.locality = f.locality) AND (${postcodesAgree} OR (${areaExact} AND ${priceWithin(RULE.priceIdentical)}))`;
const noOtherPlaceNoArea = `(c.locality IS NULL OR f.locality IS NULL OR c.locality = f.locality) AND ${postcodesAgree}`;
const sqlWeak = (cities: string) => `((${areaExact} AND ${priceWithin(RULE.priceSame)})
    OR ((${samePlace} OR NOT (f.commune = ANY (${cities}))) AND (
         (${areaExact} AND ${priceWithin(RULE.priceClose)})
      OR ((${rentLike} OR ${priceWithin(RULE.priceSame)}) AND (${samePlace} OR ${roomsSame} OR (NOT ${rentLike} AND ${areaSame}))
          AND ((${areaSame} AND ${priceWithin(RULE.priceClose)}) OR (${areaClose} AND ${priceWithin(RULE.priceSame)}))))))`;

// The statement, with no bindings: it reads the probes from dedup_frontier.
export const CANDIDATE_SQL = candidateSql();

function candidateSql(): string {
  const live = (t: string) => `${t}.status IN ('active', 'merged')`;
  // The prices a candidate may have: within tol; for a probe with its charges included, as
  // far under as the charges a candidate may state allow (gapOf); for a probe stating its
  // charges, as dear as its rent plus them; located together, for a rent, also as far as a rent
  // with its charges included allows (the band: for a probe without them, dearer candidates).
  const priceIn = (tol: number, band = false) => {
    const under = `CASE WHEN f.listing_type <> 'SALE' AND f.charges_included IS TRUE THEN ${1 + Math.max(RULE.statedChargesMax, RULE.chargesMax)} ELSE 1 END`;
    const over = band ? `CASE WHEN f.listing_type <> 'SALE' AND f.charges_included IS NOT TRUE THEN ${1 + RULE.chargesMax} ELSE 1 END` : '1';
    return `c.price_eur BETWEEN floor(f.price_eur * ${1 - tol} / ${under})::integer
      AND ceil((f.price_eur + coalesce(f.charges_eur, 0)) / ${1 - tol} * ${over})::integer`;
  };
  // Every b with |a - b| - rounding(a) - rounding(b) <= max(3, 6 % of the larger) (the
  // widest area class), with roundings of at most 2.5 m2 each.
  const lo = `((f.area_m2 - 5) * (1 - ${RULE.areaWideRel}) - ${RULE.areaWideAbs})`;
  const hi = `((f.area_m2 + 5) / (1 - ${RULE.areaWideRel}) + ${RULE.areaWideAbs})`;
  const area = `c.area_m2 BETWEEN ${lo} AND ${hi}`;
  const buckets = `c.dedup_area_bucket = ANY (ARRAY(SELECT generate_series(floor(ln(greatest(${lo}, 1)) / ln(1.06))::integer, floor(ln(${hi}) / ln(1.06))::integer)))`;
  const cells = `c.dedup_cell = ANY (ARRAY(SELECT f.dedup_cell + o FROM unnest(${CELL_OFFSETS}) o))`;
  const located = `${live('c')} AND c.listing_type = f.listing_type AND ${priceIn(RULE.priceRelisted, true)} AND c.dedup_cell IS NOT NULL AND ${cells}`;
  // Without positions on both sides there is no relisting class: a narrower price range.
  const commune = `${live('c')} AND c.listing_type = f.listing_type AND ${priceIn(RULE.priceClose)} AND c.dedup_area_bucket IS NOT NULL AND c.commune = f.commune AND ${buckets} AND ${area}`;
  const branches = [
    // A located probe with an area: located neighbours with an area in the window...
    `WHERE f.dedup_cell IS NOT NULL AND f.area_m2 > 0 AND ${located} AND ${area} AND ${sqlStrong}`,
    // ... and without an area.
    `WHERE f.dedup_cell IS NOT NULL AND f.area_m2 > 0 AND ${located} AND c.area_m2 IS NULL AND ${sqlStrongNoArea}`,
    // A located probe without an area: its located neighbours.
    `WHERE f.dedup_cell IS NOT NULL AND coalesce(f.area_m2, 0) <= 0 AND ${located} AND ${sqlStrongNoArea}`,
  ];
  // Pairs with an unlocated side, nearest figures first, at most RULE.crowd + 1 per branch:
  // one more than that tells that the place is crowded (see deduplicate).
  const weak = `c.source <> f.source AND ${commune} AND ${sqlWeak(CITIES)}
          AND ${noOtherPlace}
          AND (c.rooms IS NULL OR f.rooms IS NULL OR c.rooms = f.rooms OR (abs(c.rooms - f.rooms) = 1 AND c.locality = f.locality AND ${areaExact} AND ${priceWithin(RULE.priceSame)}))
        ORDER BY abs(${cPrice} - ${fPrice}), abs(c.area_m2 - f.area_m2), c.id LIMIT ${RULE.crowd + 1}`;
  // An area missing on one side, not both located: the same room count and price in the
  // commune, a locality named by both in a city of quarters.
  const weakNoArea = `c.source <> f.source AND ${live('c')} AND c.listing_type = f.listing_type AND c.commune = f.commune
          AND c.rooms = f.rooms AND ${priceIn(RULE.priceSame)} AND ${priceWithin(RULE.priceSame)} AND (f.dedup_cell IS NULL OR c.dedup_cell IS NULL)
          AND (${samePlace} OR NOT (f.commune = ANY (${CITIES})))
          AND ${noOtherPlaceNoArea}
        ORDER BY abs(${cPrice} - ${fPrice}), c.id LIMIT ${RULE.crowd + 1}`;
  const weakBranches = [
    // A probe with an area: the unlocated listings of its commune in the window.
    `WHERE f.area_m2 > 0 AND c.dedup_cell IS NULL AND ${weak}`,
    // An unlocated probe with an area: the located listings of its commune in the window.
    `WHERE f.dedup_cell IS NULL AND f.area_m2 > 0 AND c.dedup_cell IS NOT NULL AND ${weak}`,
    // A probe with an area and a room count: the listings of its commune without an area
    // (listings_dedup_noarea_idx) ...
    `WHERE f.area_m2 > 0 AND f.rooms IS NOT NULL AND c.rooms IS NOT NULL AND coalesce(c.area_m2, 0) <= 0 AND ${weakNoArea}`,
    // ... and a probe without an area: the listings of its commune, with an area or not
    // (listings_dedup_rooms_idx).
    `WHERE coalesce(f.area_m2, 0) <= 0 AND f.rooms IS NOT NULL AND c.rooms IS NOT NULL AND ${weakNoArea}`,
  ];
  return `SELECT f.id AS probe, c.*
       FROM dedup_frontier x JOIN listings f ON f.id = x.id
       CROSS JOIN LATERAL (
         ${[...branches, ...weakBranches].map((w) => `(SELECT ${NODE_COLS('c')} FROM listings c ${w})`).join('\n         UNION ALL\n         ')}
       ) c
      WHERE ${live('f')} AND c.source <> f.source AND c.id <> f.id`;
}
