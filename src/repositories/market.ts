import type { Knex } from 'knex';

export interface MarketRecord {
  commune: string;
  locality?: string;
  listings: number;
  avg_rent_eur: number | null;
  avg_price_per_m2_eur: number | null;
  median_rent_eur: number | null;
  median_price_per_m2_eur: number | null;
}

// Live from active, unflagged rentals (type RENT) as they stand. Rents
// rounded to whole euros, per-m2 figures to cents; per-m2 averaged per listing over the
// listings with an area > 0.
export async function marketPrices(db: Knex, f: { communes?: string[]; locality?: string } = {}): Promise<MarketRecord[]> {
  const q = db('listings')
    .select('commune')
    .select(
      db.raw('count(*)::int AS listings'),
      db.raw('round(avg(price_eur))::int AS avg_rent_eur'),
      db.raw('round(avg(price_eur::numeric / area_m2::numeric) FILTER (WHERE area_m2 > 0), 2) AS avg_price_per_m2_eur'),
      db.raw('round(percentile_cont(0.5) WITHIN GROUP (ORDER BY price_eur)::numeric)::int AS median_rent_eur'),
      db.raw(
        'round((percentile_cont(0.5) WITHIN GROUP (ORDER BY price_eur / area_m2) FILTER (WHERE area_m2 > 0))::numeric, 2) AS median_price_per_m2_eur',
      ),
    )
    .where({ status: 'active', listing_type: 'RENT', flagged: false })
    .groupBy('commune');
  if (f.communes) q.whereIn('commune', f.communes);
  if (f.locality) q.where('locality', f.locality);
  const rows = (await q) as MarketRecord[];
  return rows;
}
