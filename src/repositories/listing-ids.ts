import type { Knex } from 'knex';
import { hmacSha256Pads, LISTING_ID_KEY_TABLE_SQL, listingIdFunction, type ListingIdFn } from '../domain/listing.js';

// The secret that keys listing ids (src/domain/listing.ts) lives in the database, made once by
// migrations/20261123000200_keyed_listing_ids.ts: every importer, instance and restart computes
// the same ids with no setting to manage, and a copy of the database keeps its ids. It is read
// here and handed on as a function or a temporary table of one transaction; never logged,
// never served.
export const LISTING_ID_SECRET = 'listing_ids';

async function readSecret(db: Knex | Knex.Transaction): Promise<Buffer> {
  const row = (await db('service_secrets').select('value').where({ name: LISTING_ID_SECRET }).first()) as { value: Buffer } | undefined;
  if (!row) throw new Error('the listing id secret is missing from service_secrets: run the migrations (npm run db:migrate)');
  return row.value;
}

// Loaded once per import (or per test set-up) and passed to whoever computes ids.
export async function loadListingIds(db: Knex | Knex.Transaction): Promise<ListingIdFn> {
  return listingIdFunction(await readSecret(db));
}

// For statements that compute ids in SQL (listingIdSql): the padded key in a temporary table
// that disappears when the transaction ends.
export async function prepareListingIdSql(trx: Knex.Transaction): Promise<void> {
  const { inner, outer } = hmacSha256Pads(await readSecret(trx));
  await trx.raw(LISTING_ID_KEY_TABLE_SQL);
  await trx.raw(`INSERT INTO listing_id_key (inner_pad, outer_pad) VALUES (?, ?)`, [inner, outer]);
}
