import type { Knex } from 'knex';
import { recordListingChangesFunction } from './20261124000100_listing_changes.js';

// Whether a listing was ever in the changes feed's unflagged view (active and unflagged: what
// Free and Starter keys see) when a transaction committed. A mirror in that view is told of a
// listing's going (withdrawn, merged, flagged) only when the listing was once there to be held:
// a key that walked the feed from a cursor it wrote itself (no floor) got the id of every
// flagged listing, and the public page of each (an outside probe of stop 48). Never unset once
// committed.
//
// Set by the statement triggers of listings from the state each statement leaves; `shown_tx`
// says which transaction set it, and a later statement of that same transaction decides it again:
// an import writes a listing, then flags it (a price outlier) in a later statement, and a listing
// so flagged was never in the view (its regression probe found it marked shown when the first
// statement decided). Set-based, in the statements' own writes: no work per row at commit (a
// deferred trigger per row, tried first, took an import of 15,000 listings past 300 s once).
//
// The listings already there: those active and flagged are taken as never shown (which ones were
// shown before their flag is not known; a mirror in the unflagged view that held one is not told
// when it goes: docs/integrators.md), every other as shown.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`SET LOCAL statement_timeout = 0`);
  await knex.raw(`ALTER TABLE listing_changes ADD COLUMN shown boolean NOT NULL DEFAULT true, ADD COLUMN shown_tx bigint`);
  await knex.raw(`UPDATE listing_changes SET shown = false WHERE active AND flagged`);
  await knex.raw(`ALTER TABLE listing_changes ALTER COLUMN shown SET DEFAULT false`);
  await knex.raw(`CREATE INDEX listing_changes_shown_seq_idx ON listing_changes (seq, listing_id) WHERE shown`);
  await knex.raw(recordListingChangesFunction({ shown: true }));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(recordListingChangesFunction());
  await knex.raw(`DROP INDEX IF EXISTS listing_changes_shown_seq_idx`);
  await knex.raw(`ALTER TABLE listing_changes DROP COLUMN IF EXISTS shown, DROP COLUMN IF EXISTS shown_tx`);
}
