import type { Knex } from 'knex';

// The changes feed (GET /api/v1/changes, docs/decisions.md "The changes feed"): for every
// listing ever written, the sequence number of its latest public change. One row a listing
// (the latest change is all a mirror needs: the route serves the listing's current state),
// kept also for listings that are gone (a tombstone: a mirror must learn that they went).
//
// The sequence number is the data version (data_state, migrations/20261122003000_data_version.ts)
// that the writing statement bumps. Every writing transaction updates that one row, so its row
// lock queues writers until commit: a transaction can only bump the version after every
// transaction that bumped it before has committed (and become visible). So the sequence
// numbers of committed changes are always a prefix of all the numbers that will ever be
// given, and a reader that has read everything up to the version of its snapshot can never
// miss a change committed later. A plain sequence would not do: nextval() is taken in
// transaction order, not commit order, and a number taken by a transaction that commits
// after a later one becomes visible after a reader has passed it
// (test/api/changes-concurrency.test.ts shows both).
//
// The triggers are statement-level with transition tables: one version per statement, and
// one set-based write of the changed ids whatever the number of rows. A row counts as
// changed when anything GET /listings/:id shows (or that decides whether it shows it)
// differs: an import that only confirms a listing (last_seen_at) records nothing.
// `active` and `flagged` are kept beside the sequence number so that a first walk through
// the feed can skip the listings that are not visible, from an index.
const PUBLIC = [
  'source', 'external_id', 'title', 'price_eur', 'area_m2', 'rooms', 'commune', 'locality', 'lat', 'lng', 'listing_type',
  'accepts_students', 'images', 'source_url', 'created_at', 'updated_at', 'status', 'merged_into', 'flags', 'removed_at',
];
const row = (alias: string) => `(${PUBLIC.map((c) => `${alias}.${c}`).join(', ')})`;

// A statement that wrote no row changes nothing: no version (migrations/20261129000100).
const NO_ROWS_NO_VERSION = `
      IF TG_OP = 'INSERT' OR TG_OP = 'UPDATE' THEN
        IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
      ELSIF TG_OP = 'DELETE' THEN
        IF NOT EXISTS (SELECT 1 FROM old_rows) THEN RETURN NULL; END IF;
      END IF;`;

// The trigger function (shared with migrations/20261129000100_no_version_without_rows.ts, which
// brings databases migrated before it to the same function).
// `shown` (migrations/20261130000100_listing_changes_shown.ts, which turns it on): whether the
// listing was ever in the unflagged view when a transaction committed. Set from the state each
// statement leaves; a value set by this very transaction (shown_tx) is decided again by its
// later statements (an import writes a listing, then flags it), one set by a committed one kept.
export function recordListingChangesFunction(o: { skipNoRows?: boolean; shown?: boolean } = {}): string {
  const { skipNoRows = true, shown = false } = o;
  const earlier = `(listing_changes.shown AND listing_changes.shown_tx IS DISTINCT FROM txid_current())`;
  const upsert = `ON CONFLICT (listing_id) DO UPDATE SET seq = EXCLUDED.seq, active = EXCLUDED.active, flagged = EXCLUDED.flagged${
    shown ? `, shown = ${earlier} OR EXCLUDED.shown, shown_tx = CASE WHEN ${earlier} THEN listing_changes.shown_tx ELSE EXCLUDED.shown_tx END` : ''
  }`;
  const cols = `listing_id, seq, active, flagged${shown ? ', shown, shown_tx' : ''}`;
  const isShown = (n: string) => {
    const state = `coalesce(${n}.status = 'active' AND NOT ${n}.flagged, false)`;
    return shown ? `, ${state}, CASE WHEN ${state} THEN txid_current() END` : '';
  };
  const notShown = shown ? ', false, NULL::bigint' : '';
  return `
    CREATE OR REPLACE FUNCTION record_listing_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE v bigint;
    BEGIN
${skipNoRows ? NO_ROWS_NO_VERSION : ''}      -- The bump of migrations/20261122003000_data_version.ts, done here for listings so that
      -- the version this statement wrote is the sequence number of its changes.
      UPDATE data_state SET version = version + 1, changed_at = now() RETURNING version INTO v;
      IF TG_OP = 'INSERT' THEN
        INSERT INTO listing_changes (${cols})
        SELECT n.id, v, n.status = 'active', n.flagged${isShown('n')} FROM new_rows n
        ${upsert};
      ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO listing_changes (${cols})
        SELECT coalesce(n.id, o.id), v, coalesce(n.status = 'active', false), coalesce(n.flagged, false)${isShown('n')}
          FROM new_rows n FULL JOIN old_rows o ON o.id = n.id
         WHERE n.id IS NULL OR o.id IS NULL OR ${row('o')} IS DISTINCT FROM ${row('n')}
        ${upsert};
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO listing_changes (${cols})
        SELECT o.id, v, false, false${notShown} FROM old_rows o
        ${upsert};
      ELSE -- TRUNCATE: every visible listing is gone
        UPDATE listing_changes SET seq = v, active = false, flagged = false WHERE active;
      END IF;
      RETURN NULL;
    END $$`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`SET LOCAL statement_timeout = 0`);
  await knex.raw(`
    CREATE TABLE listing_changes (
      listing_id text PRIMARY KEY,
      seq bigint NOT NULL,
      active boolean NOT NULL,
      flagged boolean NOT NULL
    )`);
  await knex.raw(`CREATE INDEX listing_changes_seq_idx ON listing_changes (seq, listing_id)`);
  await knex.raw(`CREATE INDEX listing_changes_active_seq_idx ON listing_changes (seq, listing_id) WHERE active`);

  await knex.raw(recordListingChangesFunction());
  await knex.raw(`DROP TRIGGER IF EXISTS listings_bump_data_version ON listings`);
  await knex.raw(`
    CREATE TRIGGER listings_changes_insert AFTER INSERT ON listings
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION record_listing_changes()`);
  await knex.raw(`
    CREATE TRIGGER listings_changes_update AFTER UPDATE ON listings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION record_listing_changes()`);
  await knex.raw(`
    CREATE TRIGGER listings_changes_delete AFTER DELETE ON listings
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION record_listing_changes()`);
  await knex.raw(`
    CREATE TRIGGER listings_changes_truncate AFTER TRUNCATE ON listings
    FOR EACH STATEMENT EXECUTE FUNCTION record_listing_changes()`);

  // The listings already there: all at one new version.
  await knex.raw(`
    WITH v AS (UPDATE data_state SET version = version + 1, changed_at = now() RETURNING version)
    INSERT INTO listing_changes (listing_id, seq, active, flagged)
    SELECT l.id, v.version, l.status = 'active', l.flagged FROM listings l, v`);
  await knex.raw(`ANALYZE listing_changes`);
}

export async function down(knex: Knex): Promise<void> {
  for (const op of ['insert', 'update', 'delete', 'truncate']) await knex.raw(`DROP TRIGGER IF EXISTS listings_changes_${op} ON listings`);
  await knex.raw(`DROP FUNCTION IF EXISTS record_listing_changes()`);
  await knex.raw(`DROP TABLE IF EXISTS listing_changes`);
  await knex.raw(`
    CREATE TRIGGER listings_bump_data_version
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON listings
    FOR EACH STATEMENT EXECUTE FUNCTION bump_data_version()`);
}
