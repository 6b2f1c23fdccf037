import type { Knex } from 'knex';

// An independent recomputation of the published market figures from listings, in
// JavaScript, for the market tests to check the API's SQL against.

export interface MarketListing {
  commune: string;
  listing_type: string;
  rooms: number | null;
  price_eur: number;
  area_m2: number | null;
}

// PostgreSQL's percentile_cont: linear interpolation between the closest ranks.
export function percentileCont(values: number[], p: number): number {
  const v = [...values].sort((a, b) => a - b);
  const pos = p * (v.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return v[lo] + (pos - lo) * (v[hi] - v[lo]);
}

const cents = (x: number) => Math.round(Number(x.toPrecision(15)) * 100) / 100;
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

export function recompute(all: MarketListing[], commune: string, listingType: string, rooms: number | null): Record<string, unknown> {
  const rows = all.filter(
    (l) => l.commune === commune && l.listing_type === listingType && (rooms === null || (l.rooms !== null && (rooms === 5 ? l.rooms >= 5 : l.rooms === rooms))),
  );
  const prices = rows.map((l) => l.price_eur);
  const perM2 = rows.filter((l) => l.area_m2 !== null && l.area_m2 > 0).map((l) => l.price_eur / l.area_m2!);
  const money = rows.length >= 3;
  const area = money && perM2.length >= 3;
  const m = (f: () => number) => (money ? Math.round(f()) : null);
  const a = (f: () => number) => (area ? cents(f()) : null);
  const name = listingType === 'SALE' ? 'price' : 'rent';
  return {
    listing_type: listingType,
    rooms,
    listings: rows.length,
    listings_with_area: perM2.length,
    low_sample: rows.length < 10,
    [`avg_${name}_eur`]: m(() => mean(prices)),
    [`median_${name}_eur`]: m(() => percentileCont(prices, 0.5)),
    [`p25_${name}_eur`]: m(() => percentileCont(prices, 0.25)),
    [`p75_${name}_eur`]: m(() => percentileCont(prices, 0.75)),
    avg_price_per_m2_eur: a(() => mean(perM2)),
    median_price_per_m2_eur: a(() => percentileCont(perM2, 0.5)),
    p25_price_per_m2_eur: a(() => percentileCont(perM2, 0.25)),
    p75_price_per_m2_eur: a(() => percentileCont(perM2, 0.75)),
  };
}

// The listings the figures count, read back from the database: active and unflagged.
export async function countedListings(db: Knex): Promise<MarketListing[]> {
  return db('listings').select('commune', 'listing_type', 'rooms', 'price_eur', 'area_m2').where({ status: 'active', flagged: false });
}
