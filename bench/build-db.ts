import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import pg from 'pg';
import { createDb, migrateLatest } from '../src/db/knex.js';
import { listingIdSql } from '../src/domain/listing.js';
import { migrationsDir, projectRoot } from '../src/lib/paths.js';
import { loadListingIds, prepareListingIdSql } from '../src/repositories/listing-ids.js';
import { takeMarketSnapshot } from '../src/repositories/market-snapshots.js';
import { readCommunes, readDataCsv, readLocalities } from '../src/reference/csv.js';

// The benchmark database of one size: built once inside PostgreSQL (INSERT … SELECT over
// generate_series, with a deterministic hash per row and column instead of random(), so the
// same size and version always give the same rows), then reused while the migrations and
// this builder stay the same. Marked complete in bench_meta only after a successful build.

// Bump when the generated data changes, so existing benchmark databases are rebuilt.
const BUILDER_VERSION = 2;

const NATIONAL = { aptRent: 42.53, houseRent: 19.46, aptSale: 9391, houseSale: 6054 };
const NORTH = ['Clervaux', 'Wiltz', 'Vianden', 'Diekirch'];
const by = (cantons: string[], w: number) => Object.fromEntries(cantons.map((c) => [c, w]));
// The demo generator's agencies (src/demo/generate.ts): regional weights per canton.
const AGENCIES = [
  { name: 'immo-nord', display: 'Immo Nord', format: 'openimmo', urlPath: 'annonce', cantons: { ...by(NORTH, 5), Redange: 2, Mersch: 2 }, elsewhere: 0.3 },
  { name: 'moselle-immo', display: 'Moselle Immo', format: 'csv', urlPath: 'angebot', cantons: { Remich: 5, Grevenmacher: 5, Echternach: 3, Luxembourg: 1 }, elsewhere: 0.4 },
  { name: 'capital-homes', display: 'Capital Homes', format: 'json', urlPath: 'listings', cantons: { Luxembourg: 5, Capellen: 2.5, Esch: 1.2, Mersch: 1 }, elsewhere: 0.3 },
  { name: 'luxhome', display: 'LuxHome', format: 'csv', urlPath: 'bien', cantons: {} as Record<string, number>, elsewhere: 3 },
  { name: 'ardennes-immo', display: 'Ardennes Immo', format: 'openimmo', urlPath: 'offre', cantons: { ...by(NORTH, 4), Redange: 3 }, elsewhere: 0.2 },
];
// Share of native posts per type (private posters offer rooms and sublets far more often).
const NATIVE_SHARE = { RENT: 0.03, SALE: 0.01, FLATSHARE: 0.3, SUBLET: 0.3 };
const BIG_QUARTERS = ['Kirchberg', 'Gare', 'Belair', 'Limpertsberg', 'Bonnevoie-Nord / Verlorenkost', 'Bonnevoie-Sud', 'Gasperich'];

const migrationFiles = () => readdirSync(migrationsDir).filter((f) => /\.(ts|js)$/.test(f)).sort();

export function schemaHash(): string {
  const files = migrationFiles();
  const h = createHash('sha256').update(`builder ${BUILDER_VERSION}\n`);
  for (const f of files) h.update(f + '\n').update(readFileSync(path.join(migrationsDir, f)));
  return h.digest('hex').slice(0, 10);
}

// A hash of the code the server runs (src/ and migrations/), to tell whether two results
// files measured the same code (the working tree is shared and changes between runs).
export function codeFingerprint(): string {
  const h = createHash('sha256');
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|js|json)$/.test(e.name)) h.update(p).update(readFileSync(p));
    }
  };
  walk(path.join(projectRoot, 'src'));
  walk(migrationsDir);
  return h.digest('hex').slice(0, 10);
}

export interface BenchDb {
  name: string;
  url: string;
  reused: boolean;
  buildSeconds: number;
  rows: number;
}

const withDb = (baseUrl: string, name: string) => `${baseUrl.replace(/\/+$/, '')}/${name}`;

export async function ensureBenchDb(opts: { baseUrl: string; listings: number; rebuild: boolean; log: (m: string) => void }): Promise<BenchDb> {
  const name = `listings_bench_${opts.listings}_${schemaHash()}`;
  const url = withDb(opts.baseUrl, name);
  const admin = new pg.Client({ connectionString: withDb(opts.baseUrl, 'postgres') });
  await admin.connect();
  try {
    const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (exists && !opts.rebuild) {
      const meta = await readMeta(url);
      if (meta) {
        opts.log(`reusing ${name} (built ${meta.built_at} in ${meta.build_seconds} s)`);
        return { name, url, reused: true, buildSeconds: meta.build_seconds, rows: meta.rows };
      }
      opts.log(`${name} exists but is incomplete: rebuilding`);
    }
    // Older builds of the same size (another schema version) only take disk space.
    const sameSize = new RegExp(`^listings_bench_${opts.listings}_[0-9a-f]+$`);
    const stale = (await admin.query(`SELECT datname FROM pg_database`)).rows.map((r: { datname: string }) => r.datname);
    for (const datname of stale.filter((d) => sameSize.test(d) && d !== name)) {
      // One in use is another worktree's benchmark, running now: left alone.
      const users = (await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [datname])).rows[0].n as number;
      if (users > 0) {
        opts.log(`keeping ${datname} (another schema version, in use)`);
        continue;
      }
      opts.log(`dropping ${datname} (another schema version)`);
      await admin.query(`DROP DATABASE "${datname}" WITH (FORCE)`);
    }
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }

  opts.log(`building ${name}: ${opts.listings.toLocaleString('en')} listings`);
  const started = Date.now();
  const db = createDb(url, { poolMax: 1, statementTimeoutMs: 0 });
  try {
    await migrateLatest(db);
    await db.raw('CREATE TABLE bench_meta (key text PRIMARY KEY, value jsonb NOT NULL)');
    await db.transaction((trx) => load(trx, opts.listings, opts.log));
    let t = Date.now();
    await db.raw('VACUUM (ANALYZE)');
    opts.log(`  VACUUM (ANALYZE): ${((Date.now() - t) / 1000).toFixed(1)} s`);
    t = Date.now();
    await checkIds(db);
    const buildSeconds = Math.round((Date.now() - started) / 100) / 10;
    await db('bench_meta').insert({
      key: 'complete',
      value: JSON.stringify({ rows: opts.listings, build_seconds: buildSeconds, built_at: new Date().toISOString(), builder: BUILDER_VERSION, migrations: migrationFiles() }),
    });
    opts.log(`built ${name} in ${buildSeconds} s`);
    return { name, url, reused: false, buildSeconds, rows: opts.listings };
  } finally {
    await db.destroy();
  }
}

// A year of daily market snapshots (GET /api/v1/market/history), added to a benchmark
// database that has fewer than 300 days (run.ts, after ensureBenchDb; not part of the build,
// so databases built before it are reused): yesterday's taken by the service's own code over
// the listings (its time is logged: what a daily snapshot costs at this size), the 364 days
// before it copies of it with figures deflated by 3.5 % a year and counts thinned by up to
// 20 %, the size of a year of daily operation. The server takes today's at start.
export async function ensureMarketHistory(url: string, log: (m: string) => void): Promise<void> {
  const db = createDb(url, { poolMax: 1, statementTimeoutMs: 0 });
  try {
    const days = Number((await db.raw(`SELECT count(*) AS n FROM market_snapshot_days`)).rows[0].n);
    if (days >= 300) return;
    await db.raw(`DELETE FROM market_snapshot_days`);
    await marketHistory(db, log);
  } finally {
    await db.destroy();
  }
}

async function marketHistory(db: Knex, log: (m: string) => void): Promise<void> {
  const DAY = 86_400_000;
  const base = new Date(Date.now() - DAY).toISOString().slice(0, 10);
  let t = Date.now();
  const taken = await takeMarketSnapshot(db, { day: base, takenAt: new Date(Date.now() - DAY) });
  log(`  market snapshot of ${base} (the service's code): ${((Date.now() - t) / 1000).toFixed(1)} s (${taken.rows.toLocaleString('en')} rows)`);
  t = Date.now();
  await db.transaction(async (trx) => {
    await trx.raw(
      `INSERT INTO market_snapshot_days (day, taken_at, data_version, kind)
       SELECT d::date, d + interval '3 hours', NULL, 'demo_backfill' FROM generate_series(?::date - 364, ?::date - 1, interval '1 day') d`,
      [base, base],
    );
    const f = `power(1.035, -((?::date - d.day) / 365.0))`;
    const res = await trx.raw(
      `INSERT INTO market_snapshots (day, commune, listing_type, rooms, listings, listings_with_area, avg_price, p25_price, median_price, p75_price,
                                     avg_per_m2, p25_per_m2, median_per_m2, p75_per_m2)
       SELECT d.day, s.commune, s.listing_type, s.rooms,
              greatest(1, round(s.listings * (1 - 0.2 * (?::date - d.day) / 365.0)))::int,
              round(s.listings_with_area * (1 - 0.2 * (?::date - d.day) / 365.0))::int,
              round(s.avg_price * ${f}), round(s.p25_price * ${f}), round(s.median_price * ${f}), round(s.p75_price * ${f}),
              round(s.avg_per_m2 * ${f}, 2), round(s.p25_per_m2 * ${f}, 2), round(s.median_per_m2 * ${f}, 2), round(s.p75_per_m2 * ${f}, 2)
         FROM market_snapshot_days d JOIN market_snapshots s ON s.day = ?::date
        WHERE d.day < ?::date`,
      [base, base, ...Array(8).fill(base), base, base],
    );
    log(`  market history, 364 more days: ${((Date.now() - t) / 1000).toFixed(1)} s (${res.rowCount.toLocaleString('en')} rows)`);
  });
  await db.raw('VACUUM (ANALYZE) market_snapshots');
}

// The server migrates its database at start-up: a migration added since the build would
// change the benchmark database under its name. Then it is marked incomplete (rebuilt next run).
export async function checkSchemaUnchanged(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const built = ((await c.query(`SELECT value FROM bench_meta WHERE key = 'complete'`)).rows[0]?.value?.migrations ?? []) as string[];
    const applied = (await c.query('SELECT name FROM knex_migrations ORDER BY name')).rows.map((r: { name: string }) => r.name);
    if (applied.join() !== [...built].sort().join()) {
      await c.query(`DELETE FROM bench_meta WHERE key = 'complete'`);
      throw new Error('the migrations changed since this benchmark database was built (the server applied new ones): run again to rebuild it');
    }
  } finally {
    await c.end();
  }
}

async function readMeta(url: string): Promise<{ rows: number; build_seconds: number; built_at: string } | null> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const t = await c.query(`SELECT to_regclass('bench_meta') AS t`);
    if (!t.rows[0].t) return null;
    const r = await c.query(`SELECT value FROM bench_meta WHERE key = 'complete'`);
    return r.rows[0]?.value ?? null;
  } finally {
    await c.end();
  }
}

// The ids computed in SQL must be the importer's own: the keyed id of (source, external_id)
// under this database's secret.
async function checkIds(db: Knex): Promise<void> {
  const listingId = await loadListingIds(db);
  const rows = (await db('listings').select('id', 'source', 'external_id').orderBy('id').limit(5)) as { id: string; source: string; external_id: string }[];
  for (const r of rows) {
    if (listingId(r.source, r.external_id) !== r.id) throw new Error(`listing id mismatch for ${r.source}/${r.external_id}`);
  }
}

interface Spot {
  id: number;
  commune: string;
  locality: string | null;
  lat: number;
  lng: number;
  jitter_m: number;
  apt_rent: number;
  house_rent: number;
  apt_sale: number;
  house_sale: number;
  cls: 'city' | 'rural' | 'town';
  agency_th: number[]; // cumulative agency weights, starting at 0 (for width_bucket)
  cum_lo: number;
}

// Where listings sit: every locality (quarters in Luxembourg City), weighted by the
// commune's population and the locality's weight within it, with the reference prices.
function spots(): Spot[] {
  const communes = readCommunes();
  const localities = readLocalities();
  const num = (s: string | undefined) => (s === undefined || s === '' ? undefined : Number(s));
  const rents = new Map(readDataCsv('rents.csv').map((r) => [r.commune, r]));
  const quarters = new Map(readDataCsv('rents_luxembourg_city_quartiers.csv').map((r) => [r.quartier, r]));
  const totalPop = communes.reduce((s, c) => s + (c.population ?? 0), 0);
  const out: Omit<Spot, 'id' | 'cum_lo'>[] = [];
  const weights: number[] = [];
  for (const c of communes) {
    const r = rents.get(c.name);
    const aptRent = num(r?.apt_rent_avg_eur_m2_month) ?? NATIONAL.aptRent;
    const base = {
      commune: c.name,
      apt_rent: aptRent,
      house_rent: num(r?.house_rent_avg_eur_m2_month) ?? NATIONAL.houseRent * Math.min(1.3, Math.max(0.75, aptRent / NATIONAL.aptRent)),
      apt_sale: num(r?.apt_sale_advertised_avg_eur_m2) ?? NATIONAL.aptSale,
      house_sale: num(r?.house_sale_advertised_avg_eur_m2) ?? NATIONAL.houseSale,
      cls: c.name === 'Luxembourg' ? ('city' as const) : (c.population ?? 0) < 6000 ? ('rural' as const) : ('town' as const),
    };
    const agencyW = AGENCIES.map((a) => (a.cantons as Record<string, number>)[c.canton] ?? a.elsewhere);
    const agencyTotal = agencyW.reduce((a, b) => a + b, 0);
    const agency_th = agencyW.map((_, i) => agencyW.slice(0, i).reduce((a, b) => a + b, 0) / agencyTotal);
    const own =
      c.name === 'Luxembourg'
        ? localities.filter((l) => l.commune === c.name && l.kind === 'quartier_luxembourg_city')
        : localities.filter((l) => l.commune === c.name);
    const list = own.map((l) => {
      const q = c.name === 'Luxembourg' ? quarters.get(l.locality) : undefined;
      const main = l.locality === c.name;
      return {
        spot: {
          ...base,
          locality: main ? null : l.locality,
          lat: l.lat ?? c.lat,
          lng: l.lng ?? c.lng,
          jitter_m: l.lat === null ? 900 : c.name === 'Luxembourg' ? 350 : 400,
          apt_rent: num(q?.apt_rent_avg_eur_m2_month) ?? base.apt_rent,
          apt_sale: num(q?.apt_sale_advertised_avg_eur_m2) ?? base.apt_sale,
          house_sale: num(q?.house_sale_advertised_avg_eur_m2) ?? base.house_sale,
          agency_th,
        },
        w: c.name === 'Luxembourg' ? (BIG_QUARTERS.includes(l.locality) ? 2 : 1) : main ? 3 : 1,
      };
    });
    if (list.length === 0) list.push({ spot: { ...base, locality: null, lat: c.lat, lng: c.lng, jitter_m: 800, agency_th }, w: 1 });
    const wTotal = list.reduce((s, x) => s + x.w, 0);
    for (const x of list) {
      out.push(x.spot);
      weights.push(((c.population ?? 0) / totalPop) * (x.w / wTotal));
    }
  }
  const total = weights.reduce((a, b) => a + b, 0);
  let cum = 0;
  return out.map((s, i) => {
    const spot = { ...s, id: i + 1, cum_lo: cum };
    cum += weights[i] / total;
    return spot;
  });
}

// A SQL CASE picking from weighted choices with the uniform draw `r`.
function pick(r: string, choices: [string, number][]): string {
  const total = choices.reduce((s, [, w]) => s + w, 0);
  let cum = 0;
  const whens = choices.slice(0, -1).map(([v, w]) => `WHEN ${r} < ${(cum += w) / total} THEN ${v}`);
  return `CASE ${whens.join(' ')} ELSE ${choices[choices.length - 1][0]} END`;
}

const KIND_WEIGHTS: Record<string, Record<string, [string, number][]>> = {
  RENT: {
    city: [["'studio'", 26], ["'apt1'", 34], ["'apt2'", 27], ["'apt3'", 11], ["'house'", 6]],
    town: [["'studio'", 18], ["'apt1'", 34], ["'apt2'", 27], ["'apt3'", 11], ["'house'", 6]],
    rural: [["'studio'", 18], ["'apt1'", 34], ["'apt2'", 27], ["'apt3'", 11], ["'house'", 18]],
  },
  SALE: {
    city: [["'studio'", 6], ["'apt1'", 20], ["'apt2'", 27], ["'apt3'", 14], ["'house'", 12]],
    town: [["'studio'", 6], ["'apt1'", 20], ["'apt2'", 27], ["'apt3'", 14], ["'house'", 33]],
    rural: [["'studio'", 6], ["'apt1'", 20], ["'apt2'", 27], ["'apt3'", 14], ["'house'", 60]],
  },
};
const SUBLET_KINDS: [string, number][] = [["'studio'", 50], ["'apt1'", 35], ["'apt2'", 15]];
const KIND_AREA: Record<string, [number, number]> = { studio: [25, 40], apt1: [40, 65], apt2: [62, 95], apt3: [88, 135], house: [120, 260], room: [9, 25] };

function kindSql(r: string): string {
  const arms = (['RENT', 'SALE'] as const).flatMap((t) =>
    (['city', 'town', 'rural'] as const).map((c) => `WHEN listing_type = '${t}' AND cls = '${c}' THEN ${pick(r, KIND_WEIGHTS[t][c])}`),
  );
  return `CASE ${arms.join(' ')} WHEN listing_type = 'SUBLET' THEN ${pick(r, SUBLET_KINDS)} ELSE 'room' END`;
}

// Per row n and column k, a uniform draw in [0, 1): deterministic and plan-independent.
const R = (k: number) => `pg_temp.r(n, ${k})`;
// A standard normal draw (Box-Muller) from columns k and k+1.
const Z = (k: number) => `(sqrt(-2 * ln(1 - ${R(k)})) * cos(2 * pi() * ${R(k + 1)}))`;

async function load(trx: Knex.Transaction, n: number, log: (m: string) => void): Promise<void> {
  const step = async (label: string, sql: string, bindings: readonly Knex.RawBinding[] = []) => {
    const t = Date.now();
    const res = await trx.raw(sql, bindings);
    log(`  ${label}: ${((Date.now() - t) / 1000).toFixed(1)} s${res.rowCount ? ` (${res.rowCount.toLocaleString('en')} rows)` : ''}`);
  };
  await trx.raw(`SET LOCAL maintenance_work_mem = '512MB'`);
  await trx.raw(`SET LOCAL work_mem = '64MB'`);
  await trx.raw('SET LOCAL jit = off'); // compiling these wide expressions takes longer than running them
  await trx.raw(`
    CREATE FUNCTION pg_temp.r(n bigint, k int) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
    $$ SELECT ((hashint8extended(n, k) >> 11) & 9007199254740991)::float8 / 9007199254740992 $$`);
  // Listing ids are computed in SQL with this database's own key (listingIdSql).
  await prepareListingIdSql(trx);

  // The anchor "now": the latest import of every agency finished at anchor - 1 h.
  const anchor = new Date(Math.floor(Date.now() / 3600_000) * 3600_000);
  await trx('sources').insert([
    ...AGENCIES.map((a) => ({ name: a.name, display_name: a.display, format: a.format })),
    { name: 'native', display_name: 'Posted on this service', format: 'native' },
  ]);
  const runs = AGENCIES.flatMap((a, i) =>
    [2, 1, 0].map((daysAgo) => {
      const finished = new Date(anchor.getTime() - daysAgo * 86_400_000 - 3600_000 - i * 240_000);
      return {
        source: a.name,
        mode: 'full',
        status: 'ok',
        file_name: `${a.name}-${finished.toISOString().slice(0, 10)}.${a.format === 'openimmo' ? 'xml' : a.format}`,
        started_at: new Date(finished.getTime() - 60_000),
        finished_at: finished,
        counts: JSON.stringify({ received: 0, created: 0, updated: 0, unchanged: 0, removed: 0, merged: 0, rejected: 0 }),
        rejects: '[]',
      };
    }),
  );
  await trx('import_runs').insert(runs);

  await trx.raw(`
    CREATE TEMP TABLE bench_spots (id int PRIMARY KEY, commune text, locality text, lat float8, lng float8, jitter_m float8,
      apt_rent float8, house_rent float8, apt_sale float8, house_sale float8, cls text, agency_th float8[], cum_lo float8) ON COMMIT DROP`);
  const all = spots();
  for (let i = 0; i < all.length; i += 500) await trx('bench_spots').insert(all.slice(i, i + 500));

  // Secondary indexes are dropped during the load and rebuilt from their own definitions
  // (as the migrations made them): much faster than maintaining them row by row.
  const indexes = (
    await trx.raw(`
      SELECT indexname, indexdef FROM pg_indexes
      WHERE schemaname = current_schema() AND tablename = 'listings'
        AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'listings'::regclass)`)
  ).rows as { indexname: string; indexdef: string }[];
  for (const ix of indexes) await trx.raw(`DROP INDEX "${ix.indexname}"`);

  const mergedN = Math.round(n * 0.02);
  const mainN = n - mergedN;
  const agencyNames = `ARRAY[${AGENCIES.map((a) => `'${a.name}'`).join(',')}]`;
  const agencyPaths = `ARRAY[${AGENCIES.map((a) => `'${a.urlPath}'`).join(',')}]`;
  const area = Object.entries(KIND_AREA)
    .map(([k, [lo, hi]]) => `WHEN '${k}' THEN round(${lo} + ${hi - lo} * (${R(5)} + ${R(6)}) / 2)`)
    .join(' ');
  const externalId = (src: string, num: string) => `CASE ${src}
      WHEN 'immo-nord' THEN 'IN-' || lpad(${num}::text, 7, '0')
      WHEN 'moselle-immo' THEN 'MI' || ${num}
      WHEN 'capital-homes' THEN 'ch-' || lpad(to_hex((${num}::bigint * 2654435761) % 4294967296), 8, '0')
      WHEN 'luxhome' THEN 'LH' || (100000 + ${num})
      WHEN 'ardennes-immo' THEN 'ARD-2026-' || lpad(${num}::text, 7, '0')
      ELSE 'np_' || lpad(${num}::text, 7, '0') END`;
  const title = `CASE lang
      WHEN 'fr' THEN (CASE listing_type WHEN 'SALE' THEN 'À vendre : ' WHEN 'SUBLET' THEN 'Sous-location : ' ELSE '' END) ||
        (CASE kind WHEN 'room' THEN 'Chambre en colocation' WHEN 'studio' THEN 'Studio meublé' WHEN 'house' THEN 'Maison ' || (rooms_true - 1) || ' chambres'
          ELSE 'Appartement ' || (rooms_true - 1) || ' chambre' || CASE WHEN rooms_true > 2 THEN 's' ELSE '' END END) || ' à ' || place
      WHEN 'en' THEN (CASE listing_type WHEN 'SALE' THEN 'For sale: ' WHEN 'SUBLET' THEN 'Sublet: ' ELSE '' END) ||
        (CASE kind WHEN 'room' THEN 'Room in shared flat' WHEN 'studio' THEN 'Bright studio' WHEN 'house' THEN (rooms_true - 1) || '-bedroom house'
          ELSE 'Modern ' || (rooms_true - 1) || '-bedroom apartment' END) || ' in ' || place
      ELSE (CASE listing_type WHEN 'SALE' THEN 'Zu verkaufen: ' WHEN 'SUBLET' THEN 'Untermiete: ' ELSE '' END) ||
        (CASE kind WHEN 'room' THEN 'WG-Zimmer' WHEN 'studio' THEN 'Modernes Studio' WHEN 'house' THEN 'Einfamilienhaus'
          ELSE 'Helle ' || rooms_true || '-Zimmer-Wohnung' END) || ' in ' || place END`;
  const nativeShare = `CASE listing_type ${Object.entries(NATIVE_SHARE).map(([t, s]) => `WHEN '${t}' THEN ${s}`).join(' ')} END`;

  await step(
    'listings',
    `
    WITH th AS (SELECT array_agg(cum_lo ORDER BY id) AS th FROM bench_spots),
    g AS (
      SELECT n, s.*,
        ${pick(R(2), [["'RENT'", 60], ["'SALE'", 25], ["'FLATSHARE'", 8], ["'SUBLET'", 7]])} AS listing_type,
        CASE WHEN ${R(3)} < 0.05 THEN 'inactive' ELSE 'active' END AS status
      FROM generate_series(1, ?::int) n CROSS JOIN th JOIN bench_spots s ON s.id = width_bucket(${R(1)}, th.th)
    ),
    k AS (
      SELECT g.*, ${kindSql(R(4))} AS kind,
        CASE WHEN ${R(7)} < ${nativeShare} THEN 'native'
             ELSE (${agencyNames})[width_bucket((${R(7)} - ${nativeShare}) / (1 - ${nativeShare}), agency_th)] END AS source,
        ${pick(R(8), [["'fr'", 5], ["'en'", 3], ["'de'", 2]])} AS lang,
        CASE WHEN status = 'active' THEN ${pick(R(9), [["'{price_outlier}'", 1.5], ["'{stale}'", 0.7], ["'{possible_duplicate}'", 0.6], ["'{possible_duplicate,stale}'", 0.2], ["'{}'", 97]])}
             ELSE '{}' END::text[] AS flags,
        anchor - (180 * 86400 - 10800) * power(${R(10)}, 1.25) * interval '1 second' - interval '3 hours' AS created_at
      FROM g CROSS JOIN (SELECT ?::timestamptz AS anchor) an
    ),
    a AS (
      SELECT k.*, CASE kind ${area} END AS area_true,
        ${externalId('source', 'n')} AS external_id,
        coalesce(locality, commune) AS place
      FROM k
    ),
    p AS (
      SELECT a.*,
        CASE kind WHEN 'studio' THEN 1 WHEN 'room' THEN 1 WHEN 'apt1' THEN 2 WHEN 'apt2' THEN 3 WHEN 'apt3' THEN 4
          ELSE 5 + floor((area_true - 120) / 45)::int END AS rooms_true,
        (CASE
          WHEN listing_type = 'FLATSHARE' THEN round((600 + 500 * least(1, greatest(0,
              0.5 * (area_true - 9) / 16 + 0.3 * least(1, greatest(0, (apt_rent - 18) / 36)) + 0.2 * ${R(11)}))) / 10) * 10
          WHEN listing_type = 'SALE' THEN round((CASE kind WHEN 'house' THEN house_sale ELSE apt_sale END) * area_true * exp(0.14 * ${Z(12)}) / 1000) * 1000
          ELSE round((CASE kind WHEN 'house' THEN house_rent ELSE apt_rent END) * area_true
                 * (CASE kind WHEN 'house' THEN 1 ELSE power(area_true / 62, -0.18) END)
                 * (CASE listing_type WHEN 'SUBLET' THEN 1 + 0.12 * ${R(14)} ELSE 1 END)
                 * exp(0.12 * ${Z(12)}) / 10) * 10
        END) * (CASE WHEN 'price_outlier' = ANY (flags) THEN (CASE WHEN ${R(15)} < 0.5 THEN 0.3 ELSE 3.2 END) ELSE 1 END) AS price,
        ${R(16)} < 0.11 AS no_coords, ${R(17)} < 0.10 AS no_area, floor(${R(18)} * 7)::int AS n_images,
        created_at + (anchor - created_at) * (CASE WHEN ${R(19)} < 0.4 THEN 0 ELSE ${R(20)} END) AS touched_at,
        created_at + (anchor - created_at) * (0.2 + 0.8 * ${R(21)}) AS removed_at_if
      FROM a CROSS JOIN (SELECT ?::timestamptz AS anchor) an
    )
    INSERT INTO listings (id, source, external_id, title, price_eur, area_m2, rooms, commune, locality, lat, lng, listing_type,
      accepts_students, images, source_url, status, merged_into, flags, created_at, updated_at, first_seen_at, last_seen_at, removed_at)
    SELECT
      ${listingIdSql('source', 'external_id')},
      source, external_id, ${title}, greatest(1, price)::int,
      CASE WHEN no_area THEN NULL ELSE area_true END,
      CASE WHEN ${R(22)} < (CASE WHEN no_area THEN 0.3 ELSE 0.05 END) THEN NULL ELSE rooms_true END,
      commune, locality,
      CASE WHEN no_coords THEN NULL ELSE round((lat + jitter_m * ${Z(23)} / 2 / 111320)::numeric, 6) END,
      CASE WHEN no_coords THEN NULL ELSE round((lng + jitter_m * ${Z(25)} / 2 / (111320 * cos(radians(lat))))::numeric, 6) END,
      listing_type,
      ${R(27)} < (CASE listing_type WHEN 'FLATSHARE' THEN 0.3 ELSE 0.05 END),
      CASE WHEN n_images = 0 THEN '[]'::jsonb
           ELSE (SELECT jsonb_agg(format('https://img.%s.example/%s/%s.jpg', source, lower(external_id), i)) FROM generate_series(1, n_images) i) END,
      CASE WHEN source = 'native' THEN NULL
           ELSE format('https://www.%s.example/%s/%s', source, (${agencyPaths})[array_position(${agencyNames}, source)], external_id) END,
      status, NULL, flags, created_at,
      CASE WHEN status = 'inactive' THEN removed_at_if ELSE touched_at END,
      created_at,
      CASE WHEN status = 'inactive' THEN removed_at_if
           WHEN 'stale' = ANY (flags) THEN greatest(created_at, anchor - interval '15 days' - ${R(28)} * interval '30 days')
           WHEN source = 'native' THEN anchor - ${R(28)} * interval '90 minutes'
           ELSE anchor - interval '1 hour' END,
      CASE WHEN status = 'inactive' THEN removed_at_if END
    FROM p CROSS JOIN (SELECT ?::timestamptz AS anchor) an`,
    [mainN, anchor, anchor, anchor],
  );

  // Sure duplicates: copies of clean active agency listings seen through another agency,
  // merged into them (hidden everywhere, pointing at the public one), as the importer does.
  await step(
    'merged copies',
    `
    WITH t AS (
      SELECT l.*, row_number() OVER (ORDER BY hashtext(l.source || '/' || l.external_id), l.id) AS m
      FROM listings l WHERE l.status = 'active' AND cardinality(l.flags) = 0 AND l.source <> 'native'
      ORDER BY hashtext(l.source || '/' || l.external_id), l.id LIMIT ?::int
    ),
    c AS (
      SELECT t.*, (${agencyNames})[1 + (array_position(${agencyNames}, t.source) + (hashtext(t.source || '/' || t.external_id || 'src') & 3)) % 5] AS copy_source,
        (?::int + m) AS num
      FROM t
    ),
    e AS (SELECT c.*, ${externalId('copy_source', 'num')} AS copy_external_id FROM c)
    INSERT INTO listings (id, source, external_id, title, price_eur, area_m2, rooms, commune, locality, lat, lng, listing_type,
      accepts_students, images, source_url, status, merged_into, flags, created_at, updated_at, first_seen_at, last_seen_at, removed_at)
    SELECT
      ${listingIdSql('copy_source', 'copy_external_id')},
      copy_source, copy_external_id, title, round(price_eur * (0.98 + 0.05 * pg_temp.r(num, 40)))::int, area_m2, rooms, commune, locality,
      CASE WHEN lat IS NULL THEN NULL ELSE round((lat + 0.0004 * (pg_temp.r(num, 41) - 0.5))::numeric, 6) END,
      CASE WHEN lat IS NULL THEN NULL ELSE round((lng + 0.0006 * (pg_temp.r(num, 42) - 0.5))::numeric, 6) END,
      listing_type, accepts_students, '[]'::jsonb,
      format('https://www.%s.example/%s/%s', copy_source, (${agencyPaths})[array_position(${agencyNames}, copy_source)], copy_external_id),
      'merged', id, '{}', created_at, updated_at, created_at, last_seen_at, NULL
    FROM e`,
    [mergedN, n],
  );

  await step(
    'native posts',
    `
    INSERT INTO native_posts (id, account_email, title, price_eur, area_m2, rooms, commune_text, lat, lng, listing_type,
      accepts_students, images, status, created_at, updated_at)
    SELECT external_id, 'poster' || (hashtext(external_id) & 4095) || '@example.lu', title, price_eur, area_m2, rooms, commune, lat, lng,
      listing_type, accepts_students, images, CASE status WHEN 'active' THEN 'published' ELSE 'withdrawn' END, created_at, updated_at
    FROM listings WHERE source = 'native'`,
  );

  const t = Date.now();
  for (const ix of indexes) await trx.raw(ix.indexdef);
  log(`  ${indexes.length} secondary indexes rebuilt: ${((Date.now() - t) / 1000).toFixed(1)} s`);
}
