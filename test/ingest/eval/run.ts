// npm run eval:dedup [-- --sets hand,second,third,tenth,eleventh,first,first-large,dir:FOLDER] [--properties 3300] [--seed 13]
//                    [--third-properties 3400] [--tenth-properties 3400] [--eleventh-properties 3400] [--first-large 3400] [--no-api] [--out test-output/dedup-eval]
//
// The independent evaluation of cross-source deduplication (issue 13). For each set it
// writes the feed files, imports them with the real importer into two scratch databases
// (one per import order), and prints what happened to the properties: see metrics.ts for
// the figures and README.md beside this file for the sets.
//
// Scratch databases live on TEST_PG_URL (default postgres://postgres@127.0.0.1:5432): one
// migrated template, then two clones per set, all dropped at the end.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { scriptArgs } from '../../../src/lib/script-args.js';
import knex, { type Knex } from 'knex';
import { createDb, migrateLatest } from '../../../src/db/knex.js';
import { AGENCIES as FIRST_AGENCIES, generateSet } from '../dedup-set.js';
import { gazetteer } from '../helpers.js';
import type { FeedFile } from './feed-writers.js';
import { folderSet } from './folder-set.js';
import { formatDifficulty, measureDifficulty } from './difficulty.js';
import { caseReport, evaluate, formatTable, type EvalInput, type EvalResult } from './harness.js';
import { HAND_CASES, handSet } from './hand-cases.js';
import { meetsTargets, TARGETS } from './metrics.js';
import { generateSecondSet } from './second-set.js';
import { generateThirdSet } from './third-set.js';
import { generateTenthSet } from './tenth-set.js';
import { generateEleventhSet } from './eleventh-set.js';

const args = scriptArgs({
  options: {
    sets: { type: 'string', default: 'hand,second,third,tenth,eleventh,first,first-large' },
    properties: { type: 'string', default: '3300' },
    seed: { type: 'string', default: '13' },
    'first-large': { type: 'string', default: '3400' },
    'third-properties': { type: 'string', default: '3400' },
    'tenth-properties': { type: 'string', default: '3400' },
    'eleventh-properties': { type: 'string', default: '3400' },
    'no-api': { type: 'boolean', default: false },
    out: { type: 'string', default: 'test-output/dedup-eval' },
  },
}, "Usage: npm run eval:dedup -- [--sets hand,second,third,tenth,eleventh,first,first-large,dir:FOLDER] [--properties 3300] [--seed 13] [--first-large N] [--third-properties N] [--tenth-properties N] [--eleventh-properties N] [--no-api] [--out FILE] (test/ingest/eval/README.md)");

const PG_BASE = (process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const admin = () => knex({ client: 'pg', connection: `${PG_BASE}/postgres`, pool: { min: 0, max: 1 } });
const created: string[] = [];
const open: Knex[] = [];

async function createDatabase(template?: string): Promise<{ name: string; db: Knex }> {
  const name = `dedup_eval_${randomBytes(5).toString('hex')}`;
  const a = admin();
  try {
    await a.raw(template ? `CREATE DATABASE ?? TEMPLATE ??` : `CREATE DATABASE ??`, template ? [name, template] : [name]);
  } finally {
    await a.destroy();
  }
  created.push(name);
  const db = createDb(`${PG_BASE}/${name}`, { poolMax: 4, statementTimeoutMs: 600_000 });
  open.push(db);
  return { name, db };
}

async function cleanup(): Promise<void> {
  await Promise.allSettled(open.map((d) => d.destroy()));
  const a = admin();
  try {
    for (const name of created) await a.raw(`DROP DATABASE IF EXISTS ?? WITH (FORCE)`, [name]);
  } finally {
    await a.destroy();
  }
}

function writeFeeds(dir: string, feeds: FeedFile[]): EvalInput['feeds'] {
  mkdirSync(dir, { recursive: true });
  return feeds.map((f) => {
    const file = path.join(dir, f.fileName);
    writeFileSync(file, f.text);
    return { source: f.source, format: f.format, input: { path: file } };
  });
}

function firstSetFeeds(properties: number): { feeds: FeedFile[]; truth: Map<string, string> } {
  const set = generateSet(gazetteer(), { properties, seed: 20261122 });
  const feeds = FIRST_AGENCIES.map((source) => ({
    source, format: 'json' as const, fileName: `${source}.json`, text: JSON.stringify(set.feeds.get(source)), records: set.feeds.get(source)!.listings.length,
  }));
  return { feeds, truth: set.truth };
}

async function main(): Promise<void> {
  const gz = gazetteer();
  const sets = args.sets!.split(',').map((s) => s.trim()).filter(Boolean);
  const properties = Number(args.properties);
  const seed = Number(args.seed);
  const out = path.resolve(args.out!);
  mkdirSync(out, { recursive: true });

  const tpl = await createDatabase();
  await migrateLatest(tpl.db);
  await tpl.db.destroy();
  open.splice(open.indexOf(tpl.db), 1);

  const results: EvalResult[] = [];
  const report: string[] = [];
  for (const which of sets) {
    let input: EvalInput;
    let extra: string[] = [];
    if (which === 'hand') {
      const h = handSet();
      input = { name: `hand-made (${HAND_CASES.length} cases)`, feeds: writeFeeds(path.join(out, 'hand'), h.feeds), truth: h.truth };
    } else if (which === 'second') {
      const s = generateSecondSet(gz, { properties, seed });
      input = { name: `second set (${s.properties}, seed ${seed})`, feeds: writeFeeds(path.join(out, 'second'), s.feeds), truth: s.truth };
      extra = Object.entries(s.notes).map(([k, v]) => `  ${k}: ${v}`);
    } else if (which === 'third') {
      const s = generateThirdSet({ properties: Number(args['third-properties']), seed });
      input = { name: `third set (${s.properties}, seed ${seed})`, feeds: writeFeeds(path.join(out, 'third'), s.feeds), truth: s.truth };
      extra = Object.entries(s.notes).map(([k, v]) => `  ${k}: ${v}`);
    } else if (which === 'tenth') {
      const s = generateTenthSet({ properties: Number(args['tenth-properties']), seed });
      input = { name: `tenth set (${s.properties}, seed ${seed})`, feeds: writeFeeds(path.join(out, 'tenth'), s.feeds), truth: s.truth };
      extra = Object.entries(s.notes).map(([k, v]) => `  ${k}: ${v}`);
    } else if (which === 'eleventh') {
      const s = generateEleventhSet({ properties: Number(args['eleventh-properties']), seed });
      input = { name: `eleventh set (${s.properties}, seed ${seed})`, feeds: writeFeeds(path.join(out, 'eleventh'), s.feeds), truth: s.truth };
      extra = Object.entries(s.notes).map(([k, v]) => `  ${k}: ${v}`);
    } else if (which === 'first' || which === 'first-large') {
      const n = which === 'first' ? 700 : Number(args['first-large']);
      const s = firstSetFeeds(n);
      input = { name: `first set (${n})`, feeds: writeFeeds(path.join(out, which), s.feeds), truth: s.truth };
    } else if (which.startsWith('dir:')) {
      const s = folderSet(which.slice(4));
      input = { name: `folder ${which.slice(4)}`, feeds: writeFeeds(path.join(out, path.basename(which.slice(4))), s.feeds), truth: s.truth };
    } else {
      throw new Error(`unknown set "${which}" (expected hand, second, third, tenth, eleventh, first, first-large, dir:FOLDER)`);
    }
    process.stderr.write(`${input.name}: importing ${input.truth.size} listings in two orders...\n`);
    const [a, b] = await Promise.all([createDatabase(tpl.name), createDatabase(tpl.name)]);
    const r = await evaluate(input, { forward: a.db, reverse: b.db }, gz, { checkApi: !args['no-api'] });
    results.push(r);
    report.push(`## ${r.name}`);
    if (extra.length) report.push('set:', ...extra);
    report.push(...formatDifficulty(await measureDifficulty(a.db, input.truth)));
    const misses = meetsTargets(r.metrics);
    report.push(`targets (recall >= ${TARGETS.recall}, lost <= ${100 * TARGETS.lostShare} %, Free visibility >= ${100 * TARGETS.freeVisibility} %): ${misses.length ? `MISSED: ${misses.join('; ')}` : 'met'}`);
    if (r.orderDifferences) report.push(`import order changes ${r.orderDifferences} listings, e.g.:`, ...r.orderDifferenceSample.map((x) => `  ${x}`));
    if (r.rejects.length) report.push(`rejected records (${r.rejects.length}):`, ...r.rejects.slice(0, 20).map((x) => `  ${x}`));
    if (which === 'hand') {
      const cr = caseReport(HAND_CASES, r.states);
      report.push(`cases failed: ${cr.failed.length ? cr.failed.join(', ') : 'none'}`, ...cr.lines);
    }
    report.push('');
    await Promise.all([a.db.destroy(), b.db.destroy()]);
    open.splice(open.indexOf(a.db), 1);
    open.splice(open.indexOf(b.db), 1);
  }

  const table = formatTable(results);
  const text = `${table}\n\n${report.join('\n')}`;
  console.log(text);
  writeFileSync(path.join(out, 'report.md'), `# Deduplication evaluation\n\n${text}\n`);
  writeFileSync(
    path.join(out, 'results.json'),
    JSON.stringify(results.map(({ states: _states, ...r }) => r), null, 2),
  );
  process.stderr.write(`report written to ${path.relative(process.cwd(), path.join(out, 'report.md'))}\n`);
}

let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) process.exit(130);
  interrupted = true;
  void cleanup().finally(() => process.exit(130));
});

main()
  .then(cleanup)
  .catch(async (e) => {
    console.error(e);
    await cleanup();
    process.exitCode = 1;
  });
