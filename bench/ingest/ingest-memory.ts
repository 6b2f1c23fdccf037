// Peak memory of the ingest CLI on big deliveries. Not part of the test run:
//   npm run bench:ingest-memory -- [--mb 50] [--formats csv,openimmo,json] [--endless-mb 1024] [--keep-files DIR] [--area] [--compiled] [--one-db]
// Generates a feed of about --mb megabytes in each format (distinct listings all over the
// country, realistic fields, one in a hundred rejected, no area unless --area), creates a scratch database on the machine's
// PostgreSQL (TEST_PG_URL or postgres://postgres@127.0.0.1:5432), a fresh one for each
// format (with --one-db, one for all: the files hold the same listings, so each format after
// the first is deduplicated against its twins of the formats before), and runs the CLI (node
// with tsx as its loader, what `npm run ingest` runs) under /usr/bin/time -v on each file:
// exit code, wall time, maximum resident set size. Then two hostile inputs: /dev/zero as the
// file, and an endless CSV of distinct rows on standard input (--endless-mb of it at most),
// which the default --max-bytes (512 MB) must stop. The files and the database are removed
// at the end (unless --keep-files).
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { scriptArgs } from '../../src/lib/script-args.js';
import knex from 'knex';
import { createDb, migrateLatest } from '../../src/db/knex.js';
import { projectRoot } from '../../src/lib/paths.js';
import { CSV_HEADER_LINE } from '../../test/ingest/helpers.js';

const args = scriptArgs({
  options: {
    mb: { type: 'string', default: '50' },
    formats: { type: 'string', default: 'csv,openimmo,json' },
    'endless-mb': { type: 'string', default: '1024' },
    'keep-files': { type: 'string' },
    // Give the listings an area (they are then deduplicated: on this data set PostgreSQL spends
    // minutes per 10,000 listings looking for candidates, which says nothing about memory).
    area: { type: 'boolean', default: false },
    // Run the compiled CLI (dist/src/cli/ingest.js, `npm run build` first), as the container
    // image does, rather than through tsx.
    compiled: { type: 'boolean', default: false },
    'one-db': { type: 'boolean', default: false },
  },
}, "Usage: npm run bench:ingest-memory -- [--mb 50] [--formats csv,openimmo,json] [--endless-mb 1024] [--keep-files DIR] [--area] [--compiled] [--one-db] (bench/README.md)");
const CLI = args.compiled ? ['dist/src/cli/ingest.js'] : ['--import', 'tsx', 'src/cli/ingest.ts'];
const TARGET = Number(args.mb) * 1024 * 1024;
const ENDLESS = Number(args['endless-mb']) * 1024 * 1024;
const BASE = (process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const NAME = `ingest_memory_bench_${process.pid}`;
let database = NAME;
const dir = args['keep-files'] ?? mkdtempSync(path.join(tmpdir(), 'ingest-memory-'));
mkdirSync(dir, { recursive: true });

// Communes with a plausible rent level, and their centres.
const communes = readFileSync(path.join(projectRoot, 'data', 'communes.csv'), 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((l) => l.split(','))
  .filter((f) => f.length > 3);
const header = readFileSync(path.join(projectRoot, 'data', 'communes.csv'), 'utf8').split('\n')[0].split(',');
const col = (name: string) => header.indexOf(name);
const places = communes.map((f) => ({ name: f[col('name')], lat: Number(f[col('lat')]), lng: Number(f[col('lng')]), km2: Number(f[col('area_km2')]) }));

let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);

interface Item {
  ref: string;
  sale: boolean;
  price: number;
  area: number;
  rooms: number;
  place: (typeof places)[number];
  lat: number;
  lng: number;
  title: string;
  bad: boolean;
}
// Communes drawn in proportion to their area: listings spread over the country as evenly as
// in import-100k, so that deduplication has the usual few candidates per listing.
const cumulative: number[] = [];
places.reduce((sum, p) => (cumulative.push(sum + p.km2), sum + p.km2), 0);
const pick = () => {
  const x = rand() * cumulative[cumulative.length - 1];
  return places[cumulative.findIndex((c) => c >= x)];
};

function item(i: number): Item {
  const place = pick();
  const sale = rand() < 0.25;
  // Anywhere in a disc of the commune's area around its centre (km to degrees at 49.6° N).
  const r = Math.sqrt(place.km2 / Math.PI) * Math.sqrt(rand());
  const a = rand() * 2 * Math.PI;
  const area = Math.round(25 + rand() * 150);
  return {
    ref: `MEM-${i}`,
    sale,
    area,
    rooms: Math.max(1, Math.round(area / 30)),
    price: Math.round(area * (sale ? 9000 : 30) * (0.4 + rand() * 1.6)),
    place,
    lat: place.lat + (r * Math.sin(a)) / 111.2,
    lng: place.lng + (r * Math.cos(a)) / 72.1,
    title: `${sale ? 'Maison' : 'Appartement'} ${Math.round(area)} m² à ${place.name}, lumineux, proche commerces`,
    // One record in a hundred has a price in CHF: it is rejected.
    bad: i % 100 === 99,
  };
}

const area = (x: Item) => (args.area ? x.area : null);
const csvLine = (x: Item) =>
  [x.ref, x.sale ? 'Vente' : 'Location', 'Appartement', x.title, x.bad ? `${x.price} CHF` : `${x.price} €`, String(area(x) ?? '').replace('.', ','), String(x.rooms), '',
    x.place.name, '', x.lat.toFixed(5), x.lng.toFixed(5), `https://img.example/${x.ref}/1.jpg|https://img.example/${x.ref}/2.jpg`, 'non', '01/11/2026 10:00',
    `https://agency.example/${x.ref}`].join(';');
const jsonItem = (x: Item) =>
  JSON.stringify({
    ref: x.ref, offer: x.sale ? 'sale' : 'rent', status: 'available', title: { fr: x.title, en: `Flat of ${x.area} m2 in ${x.place.name}` },
    price: { amount: x.price, currency: x.bad ? 'CHF' : 'EUR', period: 'month' }, surface_m2: area(x), rooms: x.rooms,
    address: { locality: x.place.name, country: 'LU' }, geo: { lat: x.lat, lon: x.lng },
    media: [{ type: 'photo', url: `https://img.example/${x.ref}/1.jpg` }, { type: 'video', url: `https://img.example/${x.ref}/v.mp4` }],
    students: false, published_at: '2026-11-01T08:00:00Z', link: `https://agency.example/${x.ref}`,
  });
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const xmlItem = (x: Item) => `    <immobilie>
      <objektkategorie><vermarktungsart KAUF="${x.sale}" MIETE_PACHT="${!x.sale}"/><objektart><wohnung wohnungtyp="ETAGE"/></objektart></objektkategorie>
      <geo><plz>1234</plz><ort>${esc(x.place.name)}</ort><geokoordinaten breitengrad="${x.lat.toFixed(5)}" laengengrad="${x.lng.toFixed(5)}"/><land iso_land="LUX"/></geo>
      <preise>${x.sale ? `<kaufpreis>${x.price}</kaufpreis>` : `<kaltmiete>${x.price}</kaltmiete>`}<waehrung iso_waehrung="${x.bad ? 'CHF' : 'EUR'}"/></preise>
      <flaechen>${args.area ? `<wohnflaeche>${x.area}</wohnflaeche>` : ''}<anzahl_zimmer>${x.rooms}</anzahl_zimmer></flaechen>
      <freitexte><objekttitel>${esc(x.title)}</objekttitel><objektbeschreibung>Bel appartement, cuisine équipée, cave, parking. Proche des transports et des écoles.</objektbeschreibung></freitexte>
      <anhaenge><anhang location="EXTERN" gruppe="BILD"><daten><pfad>https://img.example/${x.ref}/1.jpg</pfad></daten></anhang><anhang location="EXTERN" gruppe="GRUNDRISS"><daten><pfad>https://img.example/${x.ref}/plan.pdf</pfad></daten></anhang></anhaenge>
      <verwaltung_techn><objektnr_extern>${x.ref}</objektnr_extern><aktion aktionart="CHANGE"/><stand_vom>2026-11-19</stand_vom></verwaltung_techn>
    </immobilie>
`;

async function writeFeed(format: string): Promise<{ file: string; records: number }> {
  const ext = format === 'openimmo' ? 'xml' : format;
  const file = path.join(dir, `feed-${args.mb}mb.${ext}`);
  const out = createWriteStream(file);
  let bytes = 0;
  const put = async (s: string) => {
    bytes += Buffer.byteLength(s);
    if (!out.write(s)) await new Promise<void>((r) => out.once('drain', () => r()));
  };
  const open = { csv: `${CSV_HEADER_LINE}\n`, json: '{ "agency": "Memory Bench", "listings": [\n', openimmo: '<?xml version="1.0" encoding="UTF-8"?>\n<openimmo>\n  <anbieter>\n' }[format]!;
  // The mode after the listings, as a streaming reader must accept.
  const close = { csv: '', json: '\n], "mode": "full" }\n', openimmo: '  </anbieter>\n  <uebertragung art="OFFLINE" umfang="VOLL"/>\n</openimmo>\n' }[format]!;
  await put(open);
  let n = 0;
  seed = 42;
  while (bytes < TARGET - close.length) {
    const x = item(n);
    await put(format === 'csv' ? `${csvLine(x)}\n` : format === 'json' ? `${n > 0 ? ',\n' : ''}${jsonItem(x)}` : xmlItem(x));
    n++;
  }
  await put(close);
  await new Promise<void>((r) => out.end(r));
  return { file, records: n };
}

interface Measure {
  code: number | null;
  seconds: number;
  maxRssMb: number;
  stdout: string;
  stderr: string;
}

// The CLI under /usr/bin/time -v; stdin optionally fed by a producer until it stops reading.
function measure(cliArgs: string[], feed?: (w: NodeJS.WritableStream, stop: () => boolean) => Promise<number>): Promise<Measure & { fed: number }> {
  return new Promise((resolve) => {
    const child = spawn('/usr/bin/time', ['-v', process.execPath, ...CLI, ...cliArgs], {
      cwd: projectRoot,
      env: { ...process.env, DATABASE_URL: `${BASE}/${database}` },
      stdio: [feed ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let fed = 0;
    let exited = false;
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    if (feed) {
      child.stdin!.on('error', () => (exited = true));
      void feed(child.stdin!, () => exited).then((n) => {
        fed = n;
        child.stdin!.end();
      });
    }
    const t0 = performance.now();
    child.on('close', (code) => {
      exited = true;
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      resolve({ code, seconds: (performance.now() - t0) / 1000, maxRssMb: rss ? Number(rss[1]) / 1024 : NaN, stdout, stderr, fed });
    });
  });
}

const admin = knex({ client: 'pg', connection: `${BASE}/postgres`, pool: { min: 0, max: 1 } });
const created: string[] = [];
// A migrated scratch database, the one the CLI runs against from now on.
const useDatabase = async (name: string) => {
  await admin.raw(`CREATE DATABASE ??`, [name]);
  created.push(name);
  const db = createDb(`${BASE}/${name}`, { poolMax: 1 });
  await migrateLatest(db);
  await db.destroy();
  database = name;
};
const rows: string[] = [];
try {
  await useDatabase(NAME);
  for (const [i, format] of args.formats.split(',').entries()) {
    if (i > 0 && !args['one-db']) await useDatabase(`${NAME}_${format}`);
    const { file, records } = await writeFeed(format);
    const size = statSync(file).size;
    const m = await measure(['--source', `bench-${format}`, '--format', format, file, '--json']);
    const report = m.code === 0 ? JSON.parse(m.stdout.trim().split('\n').at(-1)!) : null;
    rows.push(
      `| ${format} | ${(size / 1024 / 1024).toFixed(1)} MB | ${records.toLocaleString('en')} | ${m.code} | ${m.seconds.toFixed(1)} s | **${m.maxRssMb.toFixed(0)} MB** | ${report ? `created ${report.created}, rejected ${report.rejected}` : m.stderr.split('\n').find((l) => l.startsWith('ingest:'))} |`,
    );
    console.log(rows.at(-1));
    if (!args['keep-files']) rmSync(file, { force: true });
  }

  const zero = await measure(['--source', 'bench-zero', '--format', 'csv', '/dev/zero']);
  rows.push(`| /dev/zero (csv) | endless | 0 | ${zero.code} | ${zero.seconds.toFixed(1)} s | **${zero.maxRssMb.toFixed(0)} MB** | ${zero.stderr.split('\n').find((l) => l.startsWith('ingest:'))} |`);
  console.log(rows.at(-1));

  // Distinct, valid rows on standard input, up to ENDLESS bytes: the default limit stops it.
  const endless = await measure(['--source', 'bench-endless', '--format', 'csv', '-'], async (w, stopped) => {
    let fed = 0;
    seed = 7;
    const put = (s: string) => {
      fed += s.length;
      return w.write(s);
    };
    put(`${CSV_HEADER_LINE}\n`);
    for (let i = 0; fed < ENDLESS && !stopped(); ) {
      let chunk = '';
      for (let k = 0; k < 500; k++, i++) chunk += `${csvLine(item(i))}\n`;
      if (!put(chunk)) {
        await new Promise<void>((r) => {
          const done = () => {
            w.off('drain', done);
            w.off('close', done);
            r();
          };
          w.once('drain', done).once('close', done);
        });
      }
    }
    return fed;
  });
  rows.push(
    `| stdin, ${(ENDLESS / 1024 / 1024).toFixed(0)} MB of distinct csv rows offered | ${(endless.fed / 1024 / 1024).toFixed(0)} MB written before the importer stopped reading | | ${endless.code} | ${endless.seconds.toFixed(1)} s | **${endless.maxRssMb.toFixed(0)} MB** | ${endless.stderr.split('\n').find((l) => l.startsWith('ingest:'))} |`,
  );
  console.log(rows.at(-1));
} finally {
  for (const name of created) await admin.raw(`DROP DATABASE IF EXISTS ?? WITH (FORCE)`, [name]);
  await admin.destroy();
  if (!args['keep-files']) rmSync(dir, { recursive: true, force: true });
}
console.log(`\n${args.compiled ? 'node dist/src/cli/ingest.js' : 'node --import tsx src/cli/ingest.ts'}\n| input | size | records | exit | wall | max RSS | outcome |\n|---|---|---|---|---|---|---|\n${rows.join('\n')}`);
