import type { Knex } from 'knex';

type Db = Knex | Knex.Transaction;

export const STALE_AFTER_DAYS = 14;

// price_outlier: the price per m2 of an active listing is below a third or above three
// times the median price per m2 of active listings of the same type in its commune. When
// the commune has fewer than OUTLIER_MIN_SAMPLE such listings with an area, the median of
// its canton is used, then the country's; with fewer everywhere, nothing is judged.
// Listings without an area are never judged. The median moves with every import, so the
// flags of every active listing are re-decided (only the rows whose verdict changes are
// written).
export const OUTLIER_RATIO = 3;
export const OUTLIER_MIN_SAMPLE = 10;

// Returns the ids of listings that had no flag and now have one.
export async function refreshPriceOutliers(db: Db, now: Date): Promise<string[]> {
  const res = await db.raw(
    `WITH base AS (
       SELECT l.id, l.commune, c.canton, l.listing_type,
              CASE WHEN l.area_m2 > 0 THEN l.price_eur / l.area_m2 END AS ppm
         FROM listings l JOIN communes c ON c.name = l.commune
        WHERE l.status = 'active'),
     by_commune AS (SELECT commune, listing_type, count(ppm) AS n, percentile_cont(0.5) WITHIN GROUP (ORDER BY ppm) AS med
                      FROM base GROUP BY commune, listing_type),
     by_canton AS (SELECT canton, listing_type, count(ppm) AS n, percentile_cont(0.5) WITHIN GROUP (ORDER BY ppm) AS med
                     FROM base GROUP BY canton, listing_type),
     by_country AS (SELECT listing_type, count(ppm) AS n, percentile_cont(0.5) WITHIN GROUP (ORDER BY ppm) AS med
                      FROM base GROUP BY listing_type),
     verdict AS (
       SELECT b.id,
              COALESCE(b.ppm < m.med / ? OR b.ppm > m.med * ?, false) AS outlier
         FROM base b
         LEFT JOIN by_commune m1 ON m1.commune = b.commune AND m1.listing_type = b.listing_type
         LEFT JOIN by_canton m2 ON m2.canton = b.canton AND m2.listing_type = b.listing_type
         LEFT JOIN by_country m3 ON m3.listing_type = b.listing_type
         CROSS JOIN LATERAL (SELECT CASE WHEN m1.n >= ? THEN m1.med WHEN m2.n >= ? THEN m2.med WHEN m3.n >= ? THEN m3.med END AS med) m)
     UPDATE listings l
        SET flags = CASE WHEN v.outlier THEN array_append(l.flags, 'price_outlier') ELSE array_remove(l.flags, 'price_outlier') END,
            updated_at = ?
       FROM verdict v
      WHERE l.id = v.id AND v.outlier <> ('price_outlier' = ANY (l.flags))
     RETURNING l.id, v.outlier, cardinality(l.flags) AS n`,
    [OUTLIER_RATIO, OUTLIER_RATIO, OUTLIER_MIN_SAMPLE, OUTLIER_MIN_SAMPLE, OUTLIER_MIN_SAMPLE, now],
  );
  return (res.rows as { id: string; outlier: boolean; n: number }[]).filter((r) => r.outlier && r.n === 1).map((r) => r.id);
}

// stale: a live listing its source has not confirmed for more than 14 days (by the clock
// of the import, so tests can move time). Run at every import of any source, because a
// source that stops delivering runs no import of its own; refreshStaleFlags can also be
// called on its own (a daily job).
export async function refreshStaleFlags(db: Db, now: Date): Promise<string[]> {
  const cutoff = new Date(now.getTime() - STALE_AFTER_DAYS * 86_400_000);
  const added = await db.raw(
    `UPDATE listings SET flags = array_append(flags, 'stale'), updated_at = ?
      WHERE status IN ('active', 'merged') AND last_seen_at < ? AND NOT ('stale' = ANY (flags))
     RETURNING id, cardinality(flags) AS n`,
    [now, cutoff],
  );
  await db.raw(
    `UPDATE listings SET flags = array_remove(flags, 'stale'), updated_at = ?
      WHERE 'stale' = ANY (flags) AND (last_seen_at >= ? OR status = 'inactive')`,
    [now, cutoff],
  );
  return (added.rows as { id: string; n: number }[]).filter((r) => r.n === 1).map((r) => r.id);
}
