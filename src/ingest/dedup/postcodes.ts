import type { Knex } from 'knex';

type Db = Knex | Knex.Transaction;

// A postcode names a street (or a part of one) when the agency writes the address's own. Some
// agencies write one code for a whole locality instead (their CRM keeps a place, not an
// address), and two listings of one flat then state two postcodes. Deduplication counts two
// postcodes against a merge only between sources that write the street's (rule.ts); this
// decides which do not, from each source's own listings, so the answer does not depend on
// what other sources delivered or in which order.
//
// A source writes one code per place when, in the places (commune and locality, or the commune
// alone) where it has at least PLACE_LISTINGS live listings with a postcode, at least PLACES of
// them, the listings that state another postcode than their place's most stated one are at most
// SLIPS of those listings. A source writing streets' codes has two or more in any place with a
// few streets (a village of one postcode looks alike either way, and says nothing either way),
// so a third or more of its listings differ from their place's most stated code. Until stop 53
// every place had to state one code: an outside probe's agency of 281 listings lost the habit,
// and 89 of its merges, over one record's typo (or a village of two communes of one name, put
// in one place).
export const POSTCODE_HABIT = { PLACE_LISTINGS: 3, PLACES: 3, SLIPS: 0.05 };

// Decides the source's habit again (after its import's life cycle). When it changes, every
// live listing of the source is decided again by deduplication (added to ingest_touched);
// returns how many.
export async function refreshPostcodeHabit(trx: Db, source: string): Promise<number> {
  const res = await trx.raw(
    `WITH codes AS (
       SELECT commune, locality, count(*) AS n
         FROM listings
        WHERE source = ? AND status IN ('active', 'merged') AND postcode IS NOT NULL
        GROUP BY commune, locality, postcode),
     places AS (
       SELECT sum(n) AS n, max(n) AS top FROM codes
        GROUP BY commune, locality
       HAVING sum(n) >= ?),
     habit AS (SELECT count(*) >= ? AND coalesce(sum(n - top) <= ? * sum(n), false) AS per_locality FROM places)
     UPDATE sources s SET postcode_per_locality = h.per_locality FROM habit h
      WHERE s.name = ? AND s.postcode_per_locality IS DISTINCT FROM h.per_locality
     RETURNING s.name`,
    [source, POSTCODE_HABIT.PLACE_LISTINGS, POSTCODE_HABIT.PLACES, POSTCODE_HABIT.SLIPS, source],
  );
  if (res.rows.length === 0) return 0;
  const touched = await trx.raw(
    `INSERT INTO ingest_touched SELECT id FROM listings WHERE source = ? AND status IN ('active', 'merged') ON CONFLICT DO NOTHING`,
    [source],
  );
  return touched.rowCount ?? 0;
}
