import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { utcDay } from '../domain/market.js';
import { importFeed, type ImportReport } from '../ingest/index.js';
import { loadGazetteer } from '../reference/load.js';
import { hasListings } from '../repositories/listings.js';
import { deleteAllSnapshots, demoHistoryLoaded, takeMarketSnapshot } from '../repositories/market-snapshots.js';
import type { NativePostRow } from '../repositories/native-posts.js';
import { generateDemoData, type DemoStep } from './generate.js';
import { backfillDemoMarketHistory } from './history.js';

const BATCH = 500;

export interface SeedOptions {
  now: Date;
  seed?: number;
  listings?: number;
  // Keep the generated feed files in this folder (default: a temporary folder, removed after).
  feedsDir?: string;
  onStep?: (step: DemoStep, report: ImportReport) => void;
}

export interface SeedResult {
  active: number;
  total: number;
  // One per import, in import order.
  reports: ImportReport[];
}

// Replaces every listing, native post, import run and source with the demo data set, made
// the way real data arrives: the generated feed files of the demo agencies and the native
// posts go through the importer (importFeed, the code path of `npm run ingest`), oldest
// delivery first, each with the clock of its delivery. Accounts, API keys and the reference
// tables are left alone, so running it twice gives the same result. The market snapshots are
// replaced by the demo's history (src/demo/history.ts) and today's snapshot. Each import is its
// own transaction (as in production): a reader during the seeding sees it progress.
export async function seedDemo(db: Knex, opts: SeedOptions): Promise<SeedResult> {
  const data = generateDemoData(opts);
  // The history first: until the new one is written, at the end, the data set reads as not
  // loaded to its end (demoHistoryLoaded), and a first start interrupted meanwhile loads it again.
  await deleteAllSnapshots(db);

  await db.transaction(async (trx) => {
    await trx('import_runs').del();
    // One statement removes both ends of every merged_into reference (and, by cascade, the
    // deduplicator's stored pairs).
    await trx('listings').del();
    await trx('native_posts').del();
    await trx('sources').del();
    await trx('sources').insert(data.sources);
  });

  const dir = opts.feedsDir ?? (await mkdtemp(path.join(os.tmpdir(), 'lux-demo-feeds-')));
  const reports: ImportReport[] = [];
  try {
    if (opts.feedsDir) await mkdir(dir, { recursive: true });
    for (const step of data.steps) if (step.kind === 'feed') await writeFile(path.join(dir, step.fileName), step.bytes);
    const gazetteer = await loadGazetteer(db);
    // The demo's snapshots are complete by construction; with a small `listings` a source
    // may lose most of its few listings between two deliveries, which the guard would refuse.
    const common = { gazetteer, allowMassWithdrawal: true };
    for (const step of data.steps) {
      let report: ImportReport;
      if (step.kind === 'native') {
        await replaceNativePosts(db, step.posts);
        report = await importFeed(db, { ...common, source: step.source, format: 'native', now: step.at });
      } else {
        report = await importFeed(db, { ...common, source: step.source, format: step.format, input: { path: path.join(dir, step.fileName) }, now: step.at });
      }
      if (report.status !== 'ok') throw new Error(`demo import of ${step.source} was refused: ${JSON.stringify(report.refusal)}`);
      reports.push(report);
      opts.onStep?.(step, report);
    }
  } finally {
    if (!opts.feedsDir) await rm(dir, { recursive: true, force: true });
  }
  // Fresh statistics, so the first queries on the new data get sensible plans.
  await db.raw('ANALYZE listings');
  // The market history: a backfilled year (src/demo/history.ts), then today's live snapshot.
  await backfillDemoMarketHistory(db, { now: opts.now });
  await takeMarketSnapshot(db, { day: utcDay(opts.now), takenAt: opts.now });

  const [row] = (
    await db.raw(`SELECT count(*) FILTER (WHERE status = 'active')::int AS active, count(*)::int AS total FROM listings`)
  ).rows as { active: number; total: number }[];
  return { active: row.active, total: row.total, reports };
}

// The embedded mode's start (src/server.ts): the demo data set loaded unless it was loaded to
// its end before. A first start stopped while it loaded (Ctrl-C) left part of it, which later
// starts kept for good (an outside probe: 148 listings of one agency, every one stale, and a
// Free key saw none); it is loaded again, whole. 'kept': loaded before; 'loaded': the first
// time; 'reloaded': after an interrupted load.
// `feedsDir`: where the feed files are written while they load, emptied before and removed
// after; a load stopped midway leaves them there, not in the system's temporary folder (the
// regression probe of stop 44: 7.8 MB in /tmp a stopped load), until the next load.
export async function loadDemoUnlessLoaded(db: Knex, opts: SeedOptions & { log: (what: string) => void }): Promise<{ outcome: 'kept' } | { outcome: 'loaded' | 'reloaded'; active: number }> {
  if (await demoHistoryLoaded(db)) return { outcome: 'kept' };
  const partial = await hasListings(db);
  opts.log(partial ? 'the demo data set was not loaded to its end (a load stopped midway): loading it again' : 'first start: loading the demo data set');
  if (opts.feedsDir) await rm(opts.feedsDir, { recursive: true, force: true });
  try {
    const seeded = await seedDemo(db, opts);
    return { outcome: partial ? 'reloaded' : 'loaded', active: seeded.active };
  } finally {
    if (opts.feedsDir) await rm(opts.feedsDir, { recursive: true, force: true });
  }
}

// The posts as they stand at the time of a native import.
async function replaceNativePosts(db: Knex, posts: NativePostRow[]): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('native_posts').del();
    // jsonb columns get JSON text: node-postgres would send a JS array as a PostgreSQL array.
    const rows = posts.map((p) => ({ ...p, images: JSON.stringify(p.images) }));
    for (let i = 0; i < rows.length; i += BATCH) await trx('native_posts').insert(rows.slice(i, i + BATCH));
  });
}
