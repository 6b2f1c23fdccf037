// Times the migration that re-keys listing ids (migrations/20261123000200_keyed_listing_ids.ts)
// on a database of N listings with the old, unkeyed ids. Not part of the test run:
//   npx tsx bench/rekey-ids.ts [--listings 1000000] [--keep]
// Builds `listings_rekey_bench` on BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432),
// migrated without that migration, fills it in SQL (10 % merged duplicates, 5 % of listings in
// dedup pairs), runs the migration, checks the result and drops the database (unless --keep).
import { parseArgs } from 'node:util';
import knex from 'knex';
import { createDb, migrateLatest, migrationConfig } from '../src/db/knex.js';
import { loadListingIds } from '../src/repositories/listing-ids.js';

const { values: args } = parseArgs({ options: { listings: { type: 'string', default: '1000000' }, keep: { type: 'boolean', default: false } } });
const N = Number(args.listings);
const BASE = (process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const NAME = 'listings_rekey_bench';
const MIGRATION = '20261123000200_keyed_listing_ids.ts';
const UNKEYED = (s: string, e: string) => `'lst_' || left(encode(sha256(convert_to(${s}, 'UTF8') || '\\x00'::bytea || convert_to(${e}, 'UTF8')), 'hex'), 20)`;

const t0 = performance.now();
const lap = (label: string) => console.log(`${((performance.now() - t0) / 1000).toFixed(1).padStart(7)} s  ${label}`);

const admin = knex({ client: 'pg', connection: `${BASE}/postgres`, pool: { min: 0, max: 1 } });
await admin.raw(`DROP DATABASE IF EXISTS ?? WITH (FORCE)`, [NAME]);
await admin.raw(`CREATE DATABASE ??`, [NAME]);
const db = createDb(`${BASE}/${NAME}`, { poolMax: 2, statementTimeoutMs: 0 });
try {
  await migrateLatest(db);
  await db.migrate.down({ ...migrationConfig, name: MIGRATION });
  lap('migrated, without the keyed-ids migration');
  await db.raw(`INSERT INTO sources (name, format) SELECT 'bench-src-' || i, 'json' FROM generate_series(0, 19) i`);
  // Every tenth listing is a duplicate merged into the one before it; every fifth pairs with
  // the one two further on.
  await db.raw(
    `WITH c AS (SELECT array_agg(name ORDER BY name) AS names FROM communes)
     INSERT INTO listings (id, source, external_id, title, price_eur, area_m2, rooms, commune, lat, lng, listing_type,
                           status, merged_into, created_at, updated_at, first_seen_at, last_seen_at)
     SELECT ${UNKEYED(`'bench-src-' || (g % 20)`, `'X' || g`)}, 'bench-src-' || (g % 20), 'X' || g, 'Flat ' || g,
            500 + (g % 3000), 20 + (g % 200), 1 + (g % 6), c.names[1 + (g % array_length(c.names, 1))],
            49.5 + (g % 5000) / 10000.0, 6.0 + (g % 3000) / 10000.0, 'RENT',
            CASE WHEN g % 10 = 0 THEN 'merged' ELSE 'active' END,
            CASE WHEN g % 10 = 0 THEN ${UNKEYED(`'bench-src-' || ((g - 1) % 20)`, `'X' || (g - 1)`)} END,
            now(), now(), now(), now()
       FROM generate_series(1, ?) g CROSS JOIN c
      ORDER BY g % 10 = 0, g`,
    [N],
  );
  await db.raw(
    `INSERT INTO listing_dedup_pairs (a, b, kind, score)
     SELECT least(x, y), greatest(x, y), 'possible', 0.5
       FROM (SELECT ${UNKEYED(`'bench-src-' || (g % 20)`, `'X' || g`)} AS x, ${UNKEYED(`'bench-src-' || ((g + 2) % 20)`, `'X' || (g + 2)`)} AS y
               FROM generate_series(1, ? - 2) g WHERE g % 5 = 1) p`,
    [N],
  );
  await db.raw('VACUUM (ANALYZE)');
  const count = async (sql: string) => Number((await db.raw(sql)).rows[0].n);
  const merged = await count(`SELECT count(*) AS n FROM listings WHERE merged_into IS NOT NULL`);
  const pairs = await count(`SELECT count(*) AS n FROM listing_dedup_pairs`);
  lap(`filled: ${N.toLocaleString('en')} listings, ${merged.toLocaleString('en')} merged, ${pairs.toLocaleString('en')} pairs`);

  const started = performance.now();
  await db.migrate.up({ ...migrationConfig, name: MIGRATION });
  const seconds = (performance.now() - started) / 1000;
  lap(`migration: ${seconds.toFixed(1)} s`);

  const listingId = await loadListingIds(db);
  const sample = (await db('listings').select('id', 'source', 'external_id').orderByRaw('random()').limit(1000)) as { id: string; source: string; external_id: string }[];
  if (sample.some((r) => r.id !== listingId(r.source, r.external_id))) throw new Error('an id was not re-keyed');
  const dangling = await count(`SELECT count(*) AS n FROM listings d LEFT JOIN listings c ON c.id = d.merged_into WHERE d.merged_into IS NOT NULL AND c.id IS NULL`);
  if (dangling > 0 || (await count(`SELECT count(*) AS n FROM listings WHERE merged_into IS NOT NULL`)) !== merged) throw new Error('merged_into lost');
  if ((await count(`SELECT count(*) AS n FROM listing_dedup_pairs`)) !== pairs) throw new Error('pairs lost');
  lap('checked: ids keyed, references intact');
} finally {
  await db.destroy();
  if (!args.keep) await admin.raw(`DROP DATABASE IF EXISTS ?? WITH (FORCE)`, [NAME]);
  await admin.destroy();
}
