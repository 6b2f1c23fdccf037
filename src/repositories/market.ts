import type { Knex } from 'knex';
import type { ListingType } from '../domain/listing.js';
import { ROOMS_TOP_BUCKET, type MarketFigures } from '../domain/market.js';

// The figures of a group of listings (docs/spec/contract.md section 8), one SQL expression
// list shared by /market/prices (live) and the daily snapshots (market-snapshots.ts), so
// that history and live answers are the same computation. Over a relation with the columns
// price_eur and area_m2: money rounded to whole euros, per-m² figures to cents, per-m²
// figures over the listings with an area > 0 (averaged per listing). Quartiles and medians
// are percentile_cont (continuous), all three from one sort.
export const FIGURES_INNER_SQL = `
  count(*)::int AS listings,
  (count(*) FILTER (WHERE area_m2 > 0))::int AS listings_with_area,
  round(avg(price_eur))::int AS avg_price,
  percentile_cont(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP (ORDER BY price_eur) AS q_price,
  round(avg(price_eur::numeric / area_m2::numeric) FILTER (WHERE area_m2 > 0), 2) AS avg_per_m2,
  percentile_cont(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP (ORDER BY price_eur / area_m2) FILTER (WHERE area_m2 > 0) AS q_per_m2`;

// The outer select over FIGURES_INNER_SQL's columns (q_price, q_per_m2 arrays) into the
// MarketFigures columns.
export const FIGURES_OUTER_SQL = `
  listings, listings_with_area, avg_price,
  round(q_price[1]::numeric)::int AS p25_price,
  round(q_price[2]::numeric)::int AS median_price,
  round(q_price[3]::numeric)::int AS p75_price,
  avg_per_m2,
  round(q_per_m2[1]::numeric, 2) AS p25_per_m2,
  round(q_per_m2[2]::numeric, 2) AS median_per_m2,
  round(q_per_m2[3]::numeric, 2) AS p75_per_m2`;

// The listings market figures count: active, unflagged.
export const COUNTED_LISTINGS_SQL = `status = 'active' AND NOT flagged`;

export interface MarketPricesFilter {
  communes?: string[];
  locality?: string;
  listingType: ListingType;
  // 0..4, or 5 for 5 rooms or more; undefined: all listings whatever their rooms.
  rooms?: number;
}

export interface CommuneFigures extends MarketFigures {
  commune: string;
}

// Live figures per commune for active, unflagged listings of one type, as they stand.
export async function marketPrices(db: Knex, f: MarketPricesFilter): Promise<CommuneFigures[]> {
  const where: string[] = [COUNTED_LISTINGS_SQL, 'listing_type = ?'];
  const bindings: unknown[] = [f.listingType];
  if (f.rooms !== undefined) {
    where.push(f.rooms >= ROOMS_TOP_BUCKET ? 'rooms >= ?' : 'rooms = ?');
    bindings.push(f.rooms);
  }
  if (f.communes) {
    where.push('commune = ANY(?::text[])');
    bindings.push(f.communes);
  }
  if (f.locality) {
    where.push('locality = ?');
    bindings.push(f.locality);
  }
  const { rows } = await db.raw(
    `SELECT commune, ${FIGURES_OUTER_SQL}
       FROM (SELECT commune, ${FIGURES_INNER_SQL} FROM listings WHERE ${where.join(' AND ')} GROUP BY commune) g`,
    bindings as Knex.RawBinding[],
  );
  return rows as CommuneFigures[];
}

// The figures of every group /market/prices can ask for, as they stand at one data version:
// per commune and type, for all rooms (rooms null) and per rooms bucket (0..4, 5 for 5 or
// more), and the same per (commune, locality) (locality null: the commune as a whole). The
// same expressions over the same listings as marketPrices, so each group's figures are the
// ones marketPrices gives; one statement (about 0.5 s at 1,000,000 listings) instead of one
// per request. Read in one REPEATABLE READ snapshot together with the data version.
export interface MarketGroup extends CommuneFigures {
  locality: string | null;
  listing_type: ListingType;
  rooms: number | null;
}

export async function marketFiguresOfEveryGroup(db: Knex): Promise<{ version: number; groups: MarketGroup[] }> {
  const bucket = `CASE WHEN rooms >= ${ROOMS_TOP_BUCKET} THEN ${ROOMS_TOP_BUCKET} ELSE rooms END`;
  return db.transaction(
    async (trx) => {
      // Longer than a request may take on a busy machine at 1,000,000 listings.
      await trx.raw(`SET LOCAL statement_timeout = '120s'`);
      const { rows: state } = await trx.raw(`SELECT version FROM data_state`);
      const { rows } = await trx.raw(
        `SELECT commune, locality, listing_type, rooms, ${FIGURES_OUTER_SQL}
           FROM (SELECT commune,
                        CASE WHEN GROUPING(locality) = 0 THEN locality END AS locality,
                        listing_type,
                        CASE WHEN GROUPING(bucket) = 0 THEN bucket END AS rooms,
                        ${FIGURES_INNER_SQL}
                   FROM (SELECT commune, locality, listing_type, price_eur, area_m2, ${bucket} AS bucket
                           FROM listings WHERE ${COUNTED_LISTINGS_SQL}) counted
                  GROUP BY GROUPING SETS ((commune, listing_type), (commune, listing_type, bucket),
                                          (commune, locality, listing_type), (commune, locality, listing_type, bucket))
                 HAVING (GROUPING(bucket) = 1 OR bucket IS NOT NULL) AND (GROUPING(locality) = 1 OR locality IS NOT NULL)) g`,
      );
      return { version: Number(state[0]?.version ?? 0), groups: rows as MarketGroup[] };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}
