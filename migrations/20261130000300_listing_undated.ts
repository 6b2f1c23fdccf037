import type { Knex } from 'knex';

// The record stated no creation date of its own (or one in the future): its created_at is when
// this service first saw it (src/ingest/writer.ts). Deduplication compares created_at only between
// records that state it (src/ingest/dedup/groups.ts, compareCanonical): the time of an import
// depends on the order in which the sources were imported (an outside probe of stop 55: two
// undated records of one flat made public whichever source was imported first). Not part of the
// public listing, so writing it alone is no public change. Rows written before this column are
// taken as undated where created_at is exactly their first sighting, as the importer writes it.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings ADD COLUMN undated boolean NOT NULL DEFAULT false`);
  await knex.raw(`UPDATE listings SET undated = true WHERE created_at = first_seen_at`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings DROP COLUMN IF EXISTS undated`);
}
