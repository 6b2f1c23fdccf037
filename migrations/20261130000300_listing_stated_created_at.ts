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
// sighting. Where it is, the record stated no date, or one in the future (capped). Taken as
// undated where its content hash is the one without a date (undatedHash below: the hash holds the
// date as stated); the others keep created_at, the capped date, ranked as the earlier versions
// ranked them, their exact date coming back with their next change (the second re-check of stop 55:
// re-deciding such a group handed it to an undated record). An OpenImmo source's record is taken as
// undated: its stand_vom is not in the hash, and is read at a record's first sighting only, so a
// date given it here stays for good (the fifth re-check: groups with an undated OpenImmo record,
// given its first sighting as a date, left the rule's answer at a member's change, for good); a
// capped stand_vom (a last change in the future, rare) is then taken as none. Not told apart: a record dated in the future at its first import, then
// re-sent without its date and changed, before the upgrade (it hashes as undated now); a date
// that lay in the future when a change was stored (capped at that change) is read as stated.
// Written without a public change or a new data version (the changes trigger is off for those
// statements). No group is decided again here or because of it: each keeps its public listing
// until one of its members changes (the fourth re-check of stop 55: deciding them all again at
// the next import moved groups whose dates the stored rows cannot give back, OpenImmo's undated
// records among them, away from the rule's answer). Rolled back and applied again, the migration
// reads the dates stored since as it reads an earlier version's.

// The content hash of a record that states no creation date: a frozen copy of
// src/ingest/normalize.ts contentHash as of this migration (its fields in its order), the date null.
const HASHED = ['title', 'price_eur', 'area_m2', 'rooms', 'commune', 'locality', 'lat', 'lng', 'listing_type', 'accepts_students', 'images', 'source_url'];
type HashedRow = Record<string, unknown> & { id: string; content_hash: string; format: string | null };
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
        `SELECT l.id, ${HASHED.map((c) => `l.${c}`).join(', ')}, l.content_hash, s.format
           FROM listings l LEFT JOIN sources s ON s.name = l.source
          WHERE l.created_at = l.first_seen_at AND l.id > ? ORDER BY l.id LIMIT ?`,
        [after, SLICE],
      )
    ).rows as HashedRow[];
    if (rows.length === 0) break;
    after = rows[rows.length - 1].id;
    const undated = (r: HashedRow) => r.format === 'openimmo' || undatedHash(r) === r.content_hash;
    const dated = rows.filter((r) => !undated(r)).map((r) => r.id);
    if (dated.length > 0) await knex.raw(`UPDATE listings SET stated_created_at = created_at WHERE id = ANY (?::text[])`, [dated]);
  }
  await knex.raw(`ALTER TABLE listings ENABLE TRIGGER listings_changes_update`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings DROP COLUMN IF EXISTS stated_created_at`);
}
