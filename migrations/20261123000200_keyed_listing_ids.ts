import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { hmacSha256Pads, LISTING_ID_KEY_TABLE_SQL, listingIdSql } from '../src/domain/listing.js';

// Listing ids keyed by a secret of the service (issue 10, item 1). They were sha256(source NUL
// external_id): sources are public and external ids often sequential, so anyone could compute
// ids and read every listing's page, flagged ones included. Now they are an HMAC under a
// random secret made here, kept in service_secrets, and every existing id is re-keyed.
//
// Every id changes once, here: links to the old ids stop working (a redirect from them would
// hand back what the change takes away). References follow: listings.merged_into and
// listing_dedup_pairs (a, b; a < b is kept by swapping where the new order differs).
// One pass computes the old -> new map in SQL, one UPDATE rewrites the table (see rekey for
// what makes that fast at 1,000,000 listings).
const SECRET_NAME = 'listing_ids';
const UNKEYED_ID_SQL = `'lst_' || left(encode(sha256(convert_to(source, 'UTF8') || '\\x00'::bytea || convert_to(external_id, 'UTF8')), 'hex'), 20)`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`SET LOCAL statement_timeout = 0`);
  await knex.schema.createTable('service_secrets', (t) => {
    t.text('name').primary();
    t.binary('value').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`ALTER TABLE service_secrets ADD CONSTRAINT service_secrets_length_check CHECK (length(value) BETWEEN 32 AND 64)`);
  await knex('service_secrets').insert({ name: SECRET_NAME, value: randomBytes(32) }).onConflict('name').ignore();
  const { value } = (await knex('service_secrets').select('value').where({ name: SECRET_NAME }).first()) as { value: Buffer };

  const { inner, outer } = hmacSha256Pads(value);
  await knex.raw(LISTING_ID_KEY_TABLE_SQL);
  await knex.raw(`INSERT INTO listing_id_key (inner_pad, outer_pad) VALUES (?, ?)`, [inner, outer]);
  await rekey(knex, listingIdSql('source', 'external_id'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`SET LOCAL statement_timeout = 0`);
  await rekey(knex, UNKEYED_ID_SQL);
  await knex.schema.dropTable('service_secrets');
}

// The foreign keys that point at listings.id, which the re-keying rewrites.
const REFERENCES = ['listing_dedup_pairs.listing_dedup_pairs_a_foreign', 'listing_dedup_pairs.listing_dedup_pairs_b_foreign', 'listings.listings_merged_into_foreign'];

async function rekey(knex: Knex, newIdSql: string): Promise<void> {
  const [{ n }] = (await knex.raw(`SELECT count(*)::int AS n FROM listings`)).rows as { n: number }[];
  if (n === 0) return;
  await knex.raw(`SET LOCAL work_mem = '256MB'`);
  await knex.raw(`SET LOCAL maintenance_work_mem = '256MB'`);
  await knex.raw(`CREATE TEMP TABLE listing_id_map (old_id text NOT NULL, old_merged text, new_id text NOT NULL) ON COMMIT DROP`);
  await knex.raw(`INSERT INTO listing_id_map SELECT id, merged_into, ${newIdSql} FROM listings`);
  await knex.raw(`ANALYZE listing_id_map`);
  await knex.raw(`CREATE TEMP TABLE listing_pairs_old ON COMMIT DROP AS SELECT * FROM listing_dedup_pairs`);
  await knex.raw(`DELETE FROM listing_dedup_pairs`);

  // Rewriting every row is cheaper without the foreign keys that point at listings.id
  // (checked once afterwards instead of twice per row) and without the secondary indexes
  // (rebuilt once each, from their own definitions, instead of a random insertion per row).
  // At 1,000,000 listings (bench/rekey-ids.ts, a busy 2-core machine): 66 s in all, of which
  // the map 2 s, the UPDATE 15 s, the 16 indexes 40 s, the foreign keys 3.5 s.
  const fks = (
    await knex.raw(
      `SELECT conrelid::regclass::text AS tbl, conname, pg_get_constraintdef(oid) AS def
         FROM pg_constraint WHERE contype = 'f' AND confrelid = 'listings'::regclass ORDER BY conname`,
    )
  ).rows as { tbl: string; conname: string; def: string }[];
  const unknown = fks.map((f) => `${f.tbl}.${f.conname}`).filter((f) => !REFERENCES.includes(f));
  if (unknown.length > 0) throw new Error(`re-keying listing ids: references not handled: ${unknown.join(', ')}`);
  const indexes = (
    await knex.raw(
      `SELECT i.indexname, i.indexdef FROM pg_indexes i
        WHERE i.schemaname = current_schema() AND i.tablename = 'listings'
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = format('%I.%I', i.schemaname, i.indexname)::regclass)`,
    )
  ).rows as { indexname: string; indexdef: string }[];
  for (const f of fks) await knex.raw(`ALTER TABLE ?? DROP CONSTRAINT ??`, [f.tbl, f.conname]);
  for (const i of indexes) await knex.raw(`DROP INDEX ??`, [i.indexname]);

  await knex.raw(`
    UPDATE listings l SET id = m.new_id, merged_into = t.new_id
      FROM listing_id_map m LEFT JOIN listing_id_map t ON t.old_id = m.old_merged
     WHERE l.id = m.old_id`);
  await knex.raw(`
    INSERT INTO listing_dedup_pairs (a, b, kind, score)
    SELECT least(ma.new_id, mb.new_id), greatest(ma.new_id, mb.new_id), p.kind, p.score
      FROM listing_pairs_old p
      JOIN listing_id_map ma ON ma.old_id = p.a
      JOIN listing_id_map mb ON mb.old_id = p.b`);

  for (const i of indexes) await knex.raw(i.indexdef);
  for (const f of fks) await knex.raw(`ALTER TABLE ?? ADD CONSTRAINT ?? ${f.def}`, [f.tbl, f.conname]);
  await knex.raw(`ANALYZE listings`);
}
