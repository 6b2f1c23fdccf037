import type { Knex } from 'knex';

// The floor a listing's title says the flat is on ("1er étage", "2. OG", "3rd floor", "rez-de-
// chaussée"), as src/ingest/floor.ts reads it; null when the title names none, or more than one.
// Kept for deduplication only (src/ingest/dedup/rule.ts: two records stating different floors are
// two flats), like postcode and charges_eur: not part of the public listing, nor of the content
// hash (the title is). Listings stored before it have none until their source's next import
// writes it (src/ingest/writer.ts, as for postcode): their groups are decided again then.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings ADD COLUMN floor smallint`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings DROP COLUMN IF EXISTS floor`);
}
