import type { Knex } from 'knex';

// The creation date the record states, as it states it (a date in the future too, which
// created_at caps at the import's time; for OpenImmo, whose records state their last change,
// stand_vom, the one of the first record seen), or null when it states none: then created_at is
// when this service first saw it (src/ingest/writer.ts). Deduplication ranks by this date, not by
// created_at (src/ingest/dedup/groups.ts, compareCanonical): the time of an import depends on the
// order in which the sources are imported (an outside probe of stop 55: two undated records of one
// flat made public whichever source was imported first; its re-check: a record dated a minute
// ahead, capped or not by when it was imported). Not part of the public listing.
//
// Rows written before: the date is taken as stated where created_at is not exactly their first
// sighting (as the importer writes an undated record), without a public change or a new data
// version (the changes trigger is off for that statement: nothing public moves). Their groups,
// decided by the import order, are decided again by the next import or the server's next stale
// check (dedup_rerank_pending, read by src/ingest/flags.ts): the live listings of a group with a
// member that states no date (the re-check found them unchanged by unchanged re-imports).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings ADD COLUMN stated_created_at timestamptz`);
  await knex.raw(`ALTER TABLE listings DISABLE TRIGGER listings_changes_update`);
  await knex.raw(`UPDATE listings SET stated_created_at = created_at WHERE created_at IS DISTINCT FROM first_seen_at`);
  await knex.raw(`ALTER TABLE listings ENABLE TRIGGER listings_changes_update`);
  await knex.raw(`CREATE TABLE dedup_rerank_pending (id text PRIMARY KEY)`);
  await knex.raw(`INSERT INTO dedup_rerank_pending SELECT id FROM listings WHERE stated_created_at IS NULL AND status IN ('active', 'merged')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS dedup_rerank_pending`);
  await knex.raw(`ALTER TABLE listings DROP COLUMN IF EXISTS stated_created_at`);
}
