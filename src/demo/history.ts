import type { Knex } from 'knex';
import { utcDay } from '../domain/market.js';
import { COUNTED_LISTINGS_SQL } from '../repositories/market.js';
import { deleteAllSnapshots, takeMarketSnapshot } from '../repositories/market-snapshots.js';

// The demo's market history (docs/demo-data.md, "Market history"): a year and more of
// snapshots, taken through the service's own snapshot code (takeMarketSnapshot) over the
// demo's listings as they would have stood on each past day. Nothing is typed in: every
// figure is computed from listings, like a live snapshot. The simulated past:
// - prices: each listing's price deflated by its commune's yearly growth (rents about
//   +3.5 % a year, asking prices about +1.5 %, each commune within ±1.5 points of that) and
//   a mild seasonal swing (rents highest around September, when leases turn over);
// - turnover: on each past day, a different part of today's listings was on the market
//   (each listing is present with a probability from a hash of its id and the day), and the
//   market was a little thinner further back (96 % of today's listings a week ago, 80 % a year ago).
// Deterministic: the same listings and `now` give the same history.

export const DEMO_HISTORY_WEEKS = 56; // one snapshot a week, 13 months back

const RENT_GROWTH = 0.035;
const SALE_GROWTH = 0.015;
const COMMUNE_SPREAD = 0.03;
const SEASONAL = 0.012;

// [0, 1) from a text, in SQL: the first 28 bits of its md5.
const unit = (expr: string) => `(('x' || substr(md5(${expr}), 1, 7))::bit(28)::int / 268435456.0)`;

// Today's counted listings, narrow (the listings table is wide: titles, descriptions, images),
// read once for all the weeks: a temporary table of the backfill's transaction.
const BASE_TABLE = 'demo_history_base';

// The counted listings as they stood `yearsAgo` before today, on day-of-year `doy`.
function pastListingsSql(): string {
  const growth = `(CASE WHEN listing_type = 'SALE' THEN ${SALE_GROWTH} ELSE ${RENT_GROWTH} END + (${unit('commune')} - 0.5) * ${COMMUNE_SPREAD})`;
  // Seasonality as a ratio of the past day's swing to today's.
  const season = (doy: string) => `(1 + ${SEASONAL} * cos(2 * pi() * (${doy} - 258) / 365.25))`;
  return `(SELECT commune, listing_type, rooms, area_m2,
                  round(price_eur * power(1 + ${growth}, -?::float8)
                        * CASE WHEN listing_type = 'SALE' THEN 1 ELSE ${season('?::float8')} / ${season('?::float8')} END)::int AS price_eur
             FROM ${BASE_TABLE}
            WHERE ${unit("id || ?")} < 0.96 - 0.16 * ?::float8) AS counted`;
}

export async function backfillDemoMarketHistory(db: Knex, opts: { now: Date; weeks?: number }): Promise<{ days: number }> {
  await deleteAllSnapshots(db);
  const weeks = opts.weeks ?? DEMO_HISTORY_WEEKS;
  const todayDoy = dayOfYear(opts.now);
  const sql = pastListingsSql();
  // One transaction: the snapshots are taken in it (each in its own savepoint) and see its
  // temporary table.
  await db.transaction(async (trx) => {
    await trx.raw(
      `CREATE TEMP TABLE ${BASE_TABLE} ON COMMIT DROP AS
         SELECT id, commune, listing_type, rooms, area_m2, price_eur FROM listings WHERE ${COUNTED_LISTINGS_SQL}`,
    );
    for (let w = weeks; w >= 1; w--) {
      const at = new Date(opts.now.getTime() - w * 7 * 86_400_000);
      const day = utcDay(at);
      const yearsAgo = (w * 7) / 365.25;
      await takeMarketSnapshot(trx, {
        day,
        takenAt: at,
        kind: 'demo_backfill',
        source: { sql, bindings: [yearsAgo, dayOfYear(at), todayDoy, day, yearsAgo] },
      });
    }
  });
  return { days: weeks };
}

function dayOfYear(d: Date): number {
  return Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
}
