import type { Knex } from 'knex';
import { recordListingChangesFunction } from './20261124000100_listing_changes.js';

// Brings a database migrated by an earlier form of migrations/20261130000100 (this stop's first
// commits: `shown` set per statement, or by a deferred trigger per row) to its final form: the
// `shown_tx` column and the statement triggers' function that decides `shown` again within a
// transaction. A no-op on a database migrated by the final 20261130000100 (the function written
// again). Outside re-check of stop 48: a migration edited in place never reaches a database that
// already ran it.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listing_changes ADD COLUMN IF NOT EXISTS shown_tx bigint`);
  await knex.raw(`DROP TRIGGER IF EXISTS listing_changes_shown ON listing_changes`);
  await knex.raw(`DROP FUNCTION IF EXISTS mark_listing_shown()`);
  await knex.raw(recordListingChangesFunction({ shown: true }));
}

export async function down(): Promise<void> {
  // Nothing to undo: 20261130000100's own down removes the columns and the function's use of them.
}
