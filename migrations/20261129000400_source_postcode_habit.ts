import type { Knex } from 'knex';

// Whether a source writes one postcode for a whole locality (or commune) instead of the
// street's: src/ingest/dedup/postcodes.ts decides it from the source's own listings at each of
// its imports, and deduplication then reads its postcodes as saying nothing of the street
// (src/ingest/dedup/rule.ts). Not public.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE sources ADD COLUMN postcode_per_locality boolean NOT NULL DEFAULT false`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE sources DROP COLUMN IF EXISTS postcode_per_locality`);
}
