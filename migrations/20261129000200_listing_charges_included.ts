import type { Knex } from 'knex';

// Whether a listing's record states its rent with the charges included (OpenImmo warmmiete,
// "1 850 € CC", "charges comprises": true), without them (kaltmiete, "HC", "+ 200 € charges":
// false), or does not say (null); src/ingest/normalize.ts reads it. Kept for deduplication only
// (src/ingest/dedup/tolerances.ts, priceGap): one flat's rent with and without its charges is
// 5-15 % apart. Not part of the public listing, like the postcode
// (migrations/20261128000100_listing_postcode.ts), so writing it alone is no public change.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings ADD COLUMN charges_included boolean`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings DROP COLUMN IF EXISTS charges_included`);
}
