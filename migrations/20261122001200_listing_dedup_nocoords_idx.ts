import type { Knex } from 'knex';

// Listings without coordinates can only be paired within their commune. A listing that has
// coordinates finds its neighbours with coordinates through the grid-cell index; through
// this one it looks up only the commune's listings that have none, instead of walking the
// whole commune (a big commune holds a large part of all listings).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX listings_dedup_nocoords_idx ON listings (listing_type, commune, dedup_area_bucket, price_eur)
      WHERE status IN ('active', 'merged') AND dedup_area_bucket IS NOT NULL AND lat IS NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS listings_dedup_nocoords_idx`);
}
