// npx tsx test/ingest/eval/diagnose.ts --set second|third|tenth|eleventh|first|hand|dir:FOLDER [--seed 13] [--properties 3300] [--db NAME]
//                                      [--out test-output/dedup-eval/diagnose-<set>.json]
//
// Why multi-listed properties were missed (and which merges were wrong): imports one set
// with the real importer into a scratch database (kept, so that it can be queried again
// with --db), then, for every candidate pair a rule could look at (same type, same commune
// or both located within 1 km, price within 8 %, area within 8 m2 or missing), what
// classifyPair says and what the driver decided. Prints the misses by blocking reason and
// writes every pair (true and false) with its features, so that a loosening can be costed
// on the false pairs of the same class before it is tried. Reads only the importer's
// output and the truth, never how a set was generated.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import knex from 'knex';
import { createDb, migrateLatest } from '../../../src/db/knex.js';
import { NODE_COLS } from '../../../src/ingest/dedup/candidates.js';
import { loadPlaces } from '../../../src/ingest/dedup/driver.js';
import { classifyPair, type DedupNode } from '../../../src/ingest/dedup/rule.js';
import { haversineKm } from '../../../src/domain/geo.js';
import { AGENCIES as FIRST_AGENCIES, generateSet } from '../dedup-set.js';
import { gazetteer } from '../helpers.js';
import type { FeedFile } from './feed-writers.js';
import { importAll } from './harness.js';
import { folderSet } from './folder-set.js';
import { handSet } from './hand-cases.js';
import { generateSecondSet } from './second-set.js';
import { generateEleventhSet } from './eleventh-set.js';
import { generateTenthSet } from './tenth-set.js';
import { generateThirdSet } from './third-set.js';

const { values: args } = parseArgs({
  options: {
    set: { type: 'string', default: 'second' },
    seed: { type: 'string', default: '13' },
    properties: { type: 'string', default: '3300' },
    db: { type: 'string' },
    out: { type: 'string' },
  },
});
const PG = (process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');

function feedsOf(set: string): { feeds: FeedFile[]; truth: Map<string, string> } {
  const gz = gazetteer();
  if (set === 'second') {
    const s = generateSecondSet(gz, { properties: Number(args.properties), seed: Number(args.seed) });
    return { feeds: s.feeds, truth: s.truth };
  }
  if (set === 'hand') return handSet();
  if (set === 'third') {
    const s = generateThirdSet({ properties: Number(args.properties), seed: Number(args.seed) });
    return { feeds: s.feeds, truth: s.truth };
  }
  if (set === 'tenth') {
    const s = generateTenthSet({ properties: Number(args.properties), seed: Number(args.seed) });
    return { feeds: s.feeds, truth: s.truth };
  }
  if (set === 'eleventh') {
    const s = generateEleventhSet({ properties: Number(args.properties), seed: Number(args.seed) });
    return { feeds: s.feeds, truth: s.truth };
  }
  if (set.startsWith('dir:')) return folderSet(set.slice(4));
  const s = generateSet(gz, { properties: Number(args.properties), seed: 20261122 });
  const feeds = FIRST_AGENCIES.map((source) => ({
    source, format: 'json' as const, fileName: `${source}.json`, text: JSON.stringify(s.feeds.get(source)), records: s.feeds.get(source)!.listings.length,
  }));
  return { feeds, truth: s.truth };
}

async function main(): Promise<void> {
  const { feeds, truth } = feedsOf(args.set!);
  let name = args.db;
  if (!name) {
    name = `dedup_diag_${randomBytes(4).toString('hex')}`;
    const a = knex({ client: 'pg', connection: `${PG}/postgres`, pool: { min: 0, max: 1 } });
    await a.raw(`CREATE DATABASE ??`, [name]);
    await a.destroy();
  }
  const db = createDb(`${PG}/${name}`, { poolMax: 4, statementTimeoutMs: 600_000 });
  if (!args.db) {
    await migrateLatest(db);
    const dir = path.resolve('test-output/dedup-eval/diagnose', args.set!);
    mkdirSync(dir, { recursive: true });
    const written = feeds.map((f) => {
      const file = path.join(dir, f.fileName);
      writeFileSync(file, f.text);
      return { source: f.source, format: f.format, input: { path: file } };
    });
    await importAll(db, written, gazetteer());
  }
  process.stderr.write(`database ${name} (drop it when done)\n`);

  const rows = (
    // The columns the driver reads (NODE_COLS), so that classifyPair sees what it sees.
    await db.raw(`SELECT ${NODE_COLS('l')}, l.external_id FROM listings l WHERE l.status IN ('active', 'merged')`)
  ).rows as (DedupNode & { external_id: string; status: string; merged_into: string | null })[];
  const stored = new Map(
    ((await db.raw(`SELECT a, b, kind FROM listing_dedup_pairs`)).rows as { a: string; b: string; kind: string }[]).map((r) => [`${r.a}|${r.b}`, r.kind]),
  );
  const places = await loadPlaces(db);
  const prop = new Map(rows.map((r) => [r.id, truth.get(`${r.source}\u0000${r.external_id}`)!]));
  const group = (r: { id: string; merged_into: string | null }) => r.merged_into ?? r.id;

  const pairs: Record<string, unknown>[] = [];
  const byCommune = new Map<string, typeof rows>();
  for (const r of rows) byCommune.set(r.commune, [...(byCommune.get(r.commune) ?? []), r]);
  const seen = new Set<string>();
  const consider = (a: (typeof rows)[number], b: (typeof rows)[number]) => {
    if (a.source === b.source || a.listing_type !== b.listing_type) return;
    const k = a.id < b.id ? `${a.id}|${b.id}` : `${b.id}|${a.id}`;
    if (seen.has(k)) return;
    const same = prop.get(a.id) === prop.get(b.id);
    const dp = Math.abs(a.price_eur - b.price_eur) / Math.max(a.price_eur, b.price_eur);
    const da = a.area_m2 && b.area_m2 ? Math.abs(a.area_m2 - b.area_m2) : null;
    if (!same && (dp > 0.08 || (da !== null && da > 8))) return;
    seen.add(k);
    const km = a.located && b.located ? haversineKm(a.lat!, a.lng!, b.lat!, b.lng!) : null;
    const v = classifyPair(a, b, places);
    pairs.push({
      same, together: group(a) === group(b), type: a.listing_type, a: a.id, b: b.id, srcA: a.source, srcB: b.source,
      communeA: a.commune, communeB: b.commune, locA: a.locality, locB: b.locality, locatedA: a.located, locatedB: b.located,
      hasCoordA: a.lat !== null, hasCoordB: b.lat !== null, m: km === null ? null : Math.round(km * 1000),
      areaA: a.area_m2, areaB: b.area_m2, da, roomsA: a.rooms, roomsB: b.rooms, priceA: a.price_eur, priceB: b.price_eur, dp: Math.round(dp * 10000) / 10000,
      verdict: v.match, contradiction: v.contradiction, reason: v.reason, stored: stored.get(k) ?? null,
    });
  };
  for (const list of byCommune.values()) for (let i = 0; i < list.length; i++) for (let j = i + 1; j < list.length; j++) consider(list[i], list[j]);
  // True pairs across communes too.
  const byProp = new Map<string, typeof rows>();
  for (const r of rows) byProp.set(prop.get(r.id)!, [...(byProp.get(prop.get(r.id)!) ?? []), r]);
  for (const list of byProp.values()) for (let i = 0; i < list.length; i++) for (let j = i + 1; j < list.length; j++) consider(list[i], list[j]);

  // Misses: a true pair in two groups; why, by the verdict of the pair and the driver's.
  const why = (p: Record<string, unknown>) =>
    p.verdict === null
      ? `${p.contradiction ? 'BLOCK' : 'weak'}: ${String(p.reason).replace(/\(.*\)/, '').trim()}${p.contradiction ? '' : ` ${String(p.reason).match(/\((.*)\)/)?.[1] ?? ''}`}`
      : `${p.verdict} by rule (${p.reason}); driver: ${p.stored ?? 'not stored (no candidate / dropped)'}`;
  const tally = (list: Record<string, unknown>[]) => {
    const h = new Map<string, number>();
    for (const p of list) h.set(why(p), (h.get(why(p)) ?? 0) + 1);
    return [...h].sort((x, y) => y[1] - x[1]);
  };
  const missed = pairs.filter((p) => p.same && !p.together);
  const wrong = pairs.filter((p) => !p.same && p.together);
  const missedProps = new Set(missed.map((p) => prop.get(p.a as string)));
  console.log(`multi-listed: ${[...byProp.values()].filter((l) => l.length > 1).length}, missed properties: ${missedProps.size}, missed true pairs: ${missed.length}, wrong pairs: ${wrong.length}`);
  console.log(`\nmissed true pairs by reason:`);
  for (const [k, n] of tally(missed)) console.log(`  ${String(n).padStart(4)}  ${k}`);
  console.log(`\nwrong pairs (together, different properties) by the rule's verdict on them:`);
  for (const [k, n] of tally(wrong)) console.log(`  ${String(n).padStart(4)}  ${k}`);
  const out = path.resolve(args.out ?? `test-output/dedup-eval/diagnose-${args.set}.json`);
  mkdirSync(path.dirname(out), { recursive: true });
  const nodes = rows.map((r) => ({
    id: r.id, source: r.source, ext: r.external_id, prop: prop.get(r.id), type: r.listing_type, commune: r.commune, locality: r.locality, postcode: r.postcode, lat: r.lat, lng: r.lng, located: r.located,
    area: r.area_m2, rooms: r.rooms, price: r.price_eur, images: Number(r.image_count), url: r.has_source_url, created: r.created_at, group: group(r),
  }));
  writeFileSync(out, JSON.stringify({ nodes, pairs }));
  process.stderr.write(`${pairs.length} pairs written to ${path.relative(process.cwd(), out)}\n`);
  await db.destroy();
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
