import type { Knex } from 'knex';
import { recordListingChangesFunction } from './20261124000100_listing_changes.js';

// A statement on listings that writes no row moves no data version. Found by an outside probe
// (stop 38): the server's stale check (src/ingest/flags.ts, every 15 minutes) runs UPDATEs that
// usually match nothing, and each moved the version. So with nothing changed, today's market
// snapshot was taken again, every instance dropped its caches and reloaded its read model, and
// a client revalidating /market/history got a new ETag (a 200 counted against its quota) for
// the same figures. The statement triggers of listings (migrations/20261124000100) now return
// before their bump when their transition table is empty. TRUNCATE still bumps.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(recordListingChangesFunction());
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(recordListingChangesFunction({ skipNoRows: false }));
}
