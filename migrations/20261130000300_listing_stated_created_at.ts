import { createHash } from 'node:crypto';
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
// Rows written before: created_at is the stated date where it is not exactly the row's first
// sighting. Where it is, the record stated no date, or one in the future (capped): told apart by
// the content hash, which holds the date as stated (undatedHash below); for the second, the capped
// date is the best known, and ranks it as before. Written without a public change or a new data
// version (the changes trigger is off for those statements: nothing public moves). The groups of
// live listings that state no date, decided until now by the order of the imports, are decided
// again by the next import or the server's next stale check (dedup_rerank_pending, read by
// src/ingest/flags.ts; the re-check found them unchanged by unchanged re-imports).

// The content hash of a record that states no creation date: a frozen copy of
// src/ingest/normalize.ts contentHash as of this migration (its fields in its order), the date null.
const HASHED = ['title', 'price_eur', 'area_m2', 'rooms', 'commune', 'locality', 'lat', 'lng', 'listing_type', 'accepts_students', 'images', 'source_url'];
type HashedRow = Record<string, unknown> & { id: string; content_hash: string };
function undatedHash(r: HashedRow): string {
  return createHash('sha256').update(JSON.stringify([...HASHED.map((c) => r[c]), null])).digest('base64url').slice(0, 32);
}

const SLICE = 10_000;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings ADD COLUMN stated_created_at timestamptz`);
  await knex.raw(`ALTER TABLE listings DISABLE TRIGGER listings_changes_update`);
  await knex.raw(`UPDATE listings SET stated_created_at = created_at WHERE created_at IS DISTINCT FROM first_seen_at`);
  // Created when first seen: undated, or dated in the future and capped.
  for (let after = ''; ; ) {
    const rows = (
      await knex.raw(
        `SELECT id, ${HASHED.join(', ')}, content_hash FROM listings WHERE created_at = first_seen_at AND id > ? ORDER BY id LIMIT ?`,
        [after, SLICE],
      )
    ).rows as HashedRow[];
    if (rows.length === 0) break;
    after = rows[rows.length - 1].id;
    const dated = rows.filter((r) => undatedHash(r) !== r.content_hash).map((r) => r.id);
    if (dated.length > 0) await knex.raw(`UPDATE listings SET stated_created_at = created_at WHERE id = ANY (?::text[])`, [dated]);
  }
  await knex.raw(`ALTER TABLE listings ENABLE TRIGGER listings_changes_update`);
  await knex.raw(`CREATE TABLE dedup_rerank_pending (id text PRIMARY KEY)`);
  await knex.raw(`INSERT INTO dedup_rerank_pending SELECT id FROM listings WHERE stated_created_at IS NULL AND status IN ('active', 'merged')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS dedup_rerank_pending`);
  await knex.raw(`ALTER TABLE listings DROP COLUMN IF EXISTS stated_created_at`);
}
