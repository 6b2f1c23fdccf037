import type { Knex } from 'knex';

// State the feed importer keeps on each listing:
// - content_hash: a hash of the normalized record, so that re-importing an unchanged record
//   writes nothing but last_seen_at (updated_at stays as it was).
// - dedup_area_bucket / dedup_cell: blocking keys for cross-source deduplication. Candidate
//   pairs are looked up through the two indexes below (same type and commune, or same
//   ~450 m grid cell, and a neighbouring 6 % area bucket), never by comparing all pairs.
//   Generated, so every writer (importer, seed, tests) gets them right without knowing them.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE listings
      ADD COLUMN content_hash text,
      ADD COLUMN dedup_area_bucket integer GENERATED ALWAYS AS (
        CASE WHEN area_m2 > 0 THEN floor(ln(area_m2) / ln(1.06))::integer END) STORED,
      ADD COLUMN dedup_cell bigint GENERATED ALWAYS AS (
        CASE WHEN lat IS NOT NULL AND lng IS NOT NULL
             THEN floor(lat / 0.004)::bigint * 100000 + floor(lng / 0.006)::bigint END) STORED
  `);
  // Live listings (active or merged) are the ones deduplication works on.
  await knex.raw(`
    CREATE INDEX listings_dedup_commune_idx ON listings (listing_type, commune, dedup_area_bucket, price_eur)
      WHERE status IN ('active', 'merged') AND dedup_area_bucket IS NOT NULL`);
  await knex.raw(`
    CREATE INDEX listings_dedup_cell_idx ON listings (listing_type, dedup_cell, dedup_area_bucket, price_eur)
      WHERE status IN ('active', 'merged') AND dedup_area_bucket IS NOT NULL AND dedup_cell IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS listings_dedup_cell_idx`);
  await knex.raw(`DROP INDEX IF EXISTS listings_dedup_commune_idx`);
  await knex.raw(`ALTER TABLE listings DROP COLUMN dedup_cell, DROP COLUMN dedup_area_bucket, DROP COLUMN content_hash`);
}
