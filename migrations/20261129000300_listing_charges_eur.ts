import type { Knex } from 'knex';

// The monthly charges a record states beside a rent that does not include them (OpenImmo
// nebenkosten, or warmmiete above kaltmiete; JSON { "rent": { "net", "charges" } }; "1 850 € +
// 200 € charges"), in EUR; src/ingest/normalize.ts reads them. Kept for deduplication only
// (src/ingest/dedup/rule.ts, gapOf): that rent plus its charges is what another agency states
// with the charges included. Not part of the public listing, like charges_included
// (migrations/20261129000200_listing_charges_included.ts), so writing it alone is no public change.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings ADD COLUMN charges_eur integer`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings DROP COLUMN IF EXISTS charges_eur`);
}
