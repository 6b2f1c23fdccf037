// Measures an import of 100,000 records into a database that already holds 1,000,000
// listings. Not part of the test run:
//   npm run bench:import -- [--keep] [--base] [--existing 1000000] [--records 100000]
// Builds the database `listings_ingest_bench` on the machine's PostgreSQL (TEST_PG_URL or
// postgres://postgres@127.0.0.1:5432), migrated, then filled by one generate_series INSERT
// (20 sources, listings spread over the country by commune area), VACUUM ANALYZE, flags
// decided (with --base, the database so built is kept as `listings_ingest_bench_base_<N>` and
// later runs copy it instead of building it again: a file copy, not five minutes of inserts);
// writes a JSON feed of which 15 % are copies (with feed noise) of listings
// already there, imports it, imports it again unchanged, and drops the database (unless --keep).
import { writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { scriptArgs } from '../../src/lib/script-args.js';
import knex, { type Knex } from 'knex';
import { createDb, migrateLatest } from '../../src/db/knex.js';
import { importFeed, refreshPriceOutliers, refreshStaleFlags, type ProgressEvent } from '../../src/ingest/index.js';
import { loadGazetteer } from '../../src/reference/load.js';
import { rng } from '../../test/ingest/dedup-set.js';

const args = scriptArgs({
  options: { keep: { type: 'boolean', default: false }, base: { type: 'boolean', default: false }, existing: { type: 'string', default: '1000000' }, records: { type: 'string', default: '100000' } },
}, "Usage: npm run bench:import -- [--keep] [--base] [--existing 1000000] [--records 100000] (bench/README.md)");
const EXISTING = Number(args.existing);
const RECORDS = Number(args.records);
const BASE = (process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const NAME = 'listings_ingest_bench';

const t0 = performance.now();
const lap = (label: string) => console.log(`${((performance.now() - t0) / 1000).toFixed(1).padStart(7)} s  ${label}`);

async function buildExisting(build: Knex): Promise<void> {
  await migrateLatest(build);
  lap('migrated');

  await build.raw(`INSERT INTO sources (name, format) SELECT 'bench-src-' || i, 'json' FROM generate_series(0, 19) i`);
  // Spread evenly over the country (each commune gets listings in proportion to its area,
  // placed uniformly in a disc of that area around its centre): 1,000,000 listings are
  // already four times the country's dwellings, and piling a fifth of them into the capital
  // would only measure an impossible density. 85 % have coordinates; sizes, rooms and
  // prices vary as in real feeds.
  await build.raw(
    `WITH c AS (SELECT name, lat, lng, sqrt(coalesce(area_km2, 20) / pi()) AS radius_km,
                       sum(coalesce(area_km2, 20)) OVER (ORDER BY name) / sum(coalesce(area_km2, 20)) OVER () AS cum
                  FROM communes),
          g AS (SELECT g, random() AS r0, random() AS r1, random() AS r2, random() AS r3, random() AS r4, random() AS r5, random() AS r6
                  FROM generate_series(1, ?) g),
          x AS (SELECT g.*, 20 + 230 * r1 * r1 AS area,
                       CASE WHEN r2 < 0.75 THEN 'RENT' WHEN r2 < 0.95 THEN 'SALE' WHEN r2 < 0.98 THEN 'FLATSHARE' ELSE 'SUBLET' END AS type,
                       (SELECT name FROM c WHERE c.cum >= g.r0 ORDER BY c.cum LIMIT 1) AS commune
                  FROM g)
     INSERT INTO listings (id, source, external_id, title, price_eur, area_m2, rooms, commune, locality, lat, lng, listing_type,
                           accepts_students, images, source_url, status, flags, created_at, updated_at, first_seen_at, last_seen_at, content_hash)
     SELECT 'bench_' || x.g, 'bench-src-' || (x.g % 20), 'X' || x.g, 'Flat ' || x.g,
            greatest(100, round(x.area * CASE WHEN x.type = 'SALE' THEN 9000 ELSE 28 END * (0.6 + x.r3 * 0.8)))::int,
            round(x.area::numeric, 1)::float8, greatest(1, round(x.area / 28))::int, c.name, NULL,
            CASE WHEN x.r4 < 0.85 THEN c.lat + c.radius_km * sqrt(x.r5) * cos(2 * pi() * x.r6) / 111.2 END,
            CASE WHEN x.r4 < 0.85 THEN c.lng + c.radius_km * sqrt(x.r5) * sin(2 * pi() * x.r6) / 72.2 END,
            x.type, x.r5 < 0.1, '["https://img.example/1.jpg"]'::jsonb, 'https://agency.example/' || x.g,
            CASE WHEN x.r6 < 0.05 THEN 'inactive' ELSE 'active' END, '{}', now() - (x.r1 * interval '60 days'), now(), now(), now(), md5(x.g::text)
       FROM x JOIN c ON c.name = x.commune`,
    [EXISTING],
  );
  lap(`inserted ${EXISTING.toLocaleString('en')} listings`);
  await build.raw(`VACUUM ANALYZE listings`);
  lap('vacuum analyze');
  // As if these listings had come through the importer: their flags are already decided.
  await refreshPriceOutliers(build, new Date());
  await refreshStaleFlags(build, new Date());
  lap('flags of the existing listings');
}

const admin = knex({ client: 'pg', connection: `${BASE}/postgres`, pool: { min: 0, max: 1 } });
await admin.raw(`DROP DATABASE IF EXISTS ?? WITH (FORCE)`, [NAME]);
const BASE_NAME = `${NAME}_base_${EXISTING}`;
const haveBase = args.base && (await admin.raw(`SELECT 1 FROM pg_database WHERE datname = ?`, [BASE_NAME])).rows.length > 0;
if (haveBase) {
  await admin.raw(`CREATE DATABASE ?? TEMPLATE ??`, [NAME, BASE_NAME]);
  lap(`copied ${BASE_NAME}`);
} else {
  await admin.raw(`CREATE DATABASE ??`, [NAME]);
  const build = createDb(`${BASE}/${NAME}`, { poolMax: 4, statementTimeoutMs: 3_600_000 });
  try {
    await buildExisting(build);
  } finally {
    await build.destroy();
  }
  if (args.base) {
    await admin.raw(`DROP DATABASE IF EXISTS ?? WITH (FORCE)`, [BASE_NAME]);
    await admin.raw(`CREATE DATABASE ?? TEMPLATE ??`, [BASE_NAME, NAME]);
    lap(`kept as ${BASE_NAME}`);
  }
}
const db = createDb(`${BASE}/${NAME}`, { poolMax: 4, statementTimeoutMs: 3_600_000 });
try {
  // A base kept before a migration appeared gets it here (a copy is not rebuilt for it).
  if (haveBase) await migrateLatest(db);
  // The feed: 85 % new flats, 15 % copies of listings already there (another agency's
  // version of the same flat: price within 1 %, coordinates a few tens of metres off).
  const rand = rng(42);
  const communes = (await db('communes').select('name', 'lat', 'lng', 'area_km2')) as { name: string; lat: number; lng: number; area_km2: number | null }[];
  const totalArea = communes.reduce((t, c) => t + (c.area_km2 ?? 20), 0);
  const pickCommune = () => {
    let r = rand() * totalArea;
    for (const c of communes) if ((r -= c.area_km2 ?? 20) <= 0) return c;
    return communes[communes.length - 1];
  };
  const inDisc = (c: { lat: number; lng: number; area_km2: number | null }) => {
    const km = Math.sqrt((c.area_km2 ?? 20) / Math.PI) * Math.sqrt(rand());
    const th = rand() * 2 * Math.PI;
    return { lat: c.lat + (km * Math.cos(th)) / 111.2, lon: c.lng + (km * Math.sin(th)) / 72.2 };
  };
  const copies = (
    await db.raw(`SELECT commune, lat, lng, area_m2, rooms, price_eur, listing_type FROM listings
                   WHERE status = 'active' AND lat IS NOT NULL ORDER BY md5(id) LIMIT ?`, [Math.round(RECORDS * 0.15)])
  ).rows as { commune: string; lat: number; lng: number; area_m2: number; rooms: number; price_eur: number; listing_type: string }[];
  const offer: Record<string, string> = { RENT: 'rent', SALE: 'sale', FLATSHARE: 'flatshare', SUBLET: 'sublet' };
  const listings = Array.from({ length: RECORDS }, (_, i) => {
    const copy = i < copies.length ? copies[i] : null;
    const c = copy ? null : pickCommune();
    const u = rand();
    const area = copy ? copy.area_m2 : Math.round((20 + 230 * u * u) * 2) / 2;
    const type = copy ? offer[copy.listing_type] : rand() < 0.8 ? 'rent' : 'sale';
    const price = copy ? Math.round(copy.price_eur * (1 + (rand() - 0.5) * 0.02)) : Math.round(area * (type === 'sale' ? 9000 : 28) * (0.6 + rand() * 0.8));
    return {
      ref: `BA-${i}`, offer: type, status: 'available', title: { fr: `Appartement ${i}` },
      price: { amount: price, currency: 'EUR', period: 'month' }, surface_m2: area,
      rooms: copy ? copy.rooms : Math.max(1, Math.round(area / 28)),
      address: { locality: copy ? copy.commune : c!.name, country: 'LU' },
      geo: copy ? { lat: copy.lat + (rand() - 0.5) * 0.0005, lon: copy.lng + (rand() - 0.5) * 0.0007 } : rand() < 0.85 ? inDisc(c!) : null,
      media: [{ type: 'photo', url: `https://img.bench-agency.example/${i}.jpg` }], students: false,
      published_at: '2026-11-01T08:00:00Z', link: `https://bench-agency.example/${i}`,
    };
  });
  const file = path.join(tmpdir(), `bench-agency-${process.pid}.json`);
  writeFileSync(file, JSON.stringify({ mode: 'full', listings }));
  lap(`wrote a feed of ${RECORDS.toLocaleString('en')} records (${copies.length.toLocaleString('en')} copies of existing listings)`);

  const gazetteer = await loadGazetteer(db);
  for (const label of ['first import', 're-import, unchanged']) {
    const start = performance.now();
    const onProgress = (e: ProgressEvent) => {
      if (e.phase === 'write' || e.phase === 'parsed') console.log(`           ${((performance.now() - start) / 1000).toFixed(1).padStart(6)} s  ${e.phase}${'step' in e ? `: ${e.step}` : ''}`);
    };
    const r = await importFeed(db, { source: 'bench-agency', format: 'json', input: { path: file }, gazetteer, onProgress });
    lap(`${label}: ${((performance.now() - start) / 1000).toFixed(1)} s ${JSON.stringify(r.counts)}`);
  }
  rmSync(file, { force: true });
  const [{ n }] = (await db.raw(`SELECT count(*)::int AS n FROM listings`)).rows as { n: number }[];
  lap(`listings now: ${n.toLocaleString('en')}`);
} finally {
  await db.destroy();
  if (!args.keep) await admin.raw(`DROP DATABASE IF EXISTS ?? WITH (FORCE)`, [NAME]);
  await admin.destroy();
}
