import type { Knex } from 'knex';

// The postcode a listing's record states (src/ingest/place.ts, postcodeFor), kept for
// deduplication only (src/ingest/dedup/rule.ts): a Luxembourg postcode names a street or a
// part of one, so two records without positions on both sides that state different postcodes
// are two flats, and two that state the same one are in the same street. Not part of the
// public listing (the API, the changes feed and the export do not show it), so writing it
// alone is no public change (migrations/20261124000100_listing_changes.ts).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings ADD COLUMN postcode smallint CHECK (postcode BETWEEN 1000 AND 9999)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings DROP COLUMN IF EXISTS postcode`);
}
