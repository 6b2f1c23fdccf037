import type { Knex } from 'knex';

// Deduplication compares a listing without an area with the listings of its commune that
// state the same room count at the same price, when the two are not both located
// (src/ingest/dedup/rule.ts). Neither the area buckets nor the grid cells can find those.
// A listing with an area looks among those without one (a small index); a listing without
// one looks among all.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX listings_dedup_noarea_idx ON listings (listing_type, commune, rooms, price_eur)
      WHERE status IN ('active', 'merged') AND rooms IS NOT NULL AND coalesce(area_m2, 0) <= 0`);
  await knex.raw(`
    CREATE INDEX listings_dedup_rooms_idx ON listings (listing_type, commune, rooms, price_eur)
      WHERE status IN ('active', 'merged') AND rooms IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS listings_dedup_noarea_idx`);
  await knex.raw(`DROP INDEX IF EXISTS listings_dedup_rooms_idx`);
}
