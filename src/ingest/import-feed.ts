import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import { NATIVE_SOURCE, type ListingIdFn } from '../domain/listing.js';
import type { Gazetteer } from '../reference/gazetteer.js';
import { loadGazetteer } from '../reference/load.js';
import { loadListingIds } from '../repositories/listing-ids.js';
import { FILE_ADAPTERS, readNativePosts } from './adapters/index.js';
import { deduplicate } from './dedup-store.js';
import { FeedParseError, IngestUsageError } from './errors.js';
import { refreshPriceOutliers, refreshStaleFlags } from './flags.js';
import { normalizeRecord } from './normalize.js';
import type { FeedFormat, FeedMode, ImportCounts, ImportReport, NormalizedListing, ParsedFeed, ProgressEvent, Reject } from './types.js';
import { FEED_FORMATS } from './types.js';
import { applyLifecycle, stageBatch, stageIdSets, withdrawalPreview } from './writer.js';

export interface ImportOptions {
  source: string;
  format: FeedFormat;
  // The delivery: a file path, or its bytes. Not used for format 'native'.
  input?: { path: string } | Buffer | { text: string };
  // Treat the delivery as a delta even if it does not say so (a file that says it is a
  // delta is one whatever this says).
  delta?: boolean;
  allowMassWithdrawal?: boolean;
  // The clock of this import: timestamps, last_seen_at and the stale rule use it.
  now?: Date;
  gazetteer?: Gazetteer;
  // The keyed listing id function; by default loaded from the database's secret.
  listingIds?: ListingIdFn;
  onProgress?: (e: ProgressEvent) => void;
  // How long to wait for another import (of any source) to finish. Default 10 minutes.
  lockTimeoutMs?: number;
}

const SOURCE_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
// import_runs.rejects keeps the first ones; the report and the rejects file have them all.
const MAX_STORED_REJECTS = 10_000;
// Advisory lock namespaces (first key of the two-key form).
const LOCK_SOURCE = 7301;
const LOCK_WRITE = 7302;

export async function importFeed(db: Knex, opts: ImportOptions): Promise<ImportReport> {
  const now = opts.now ?? new Date();
  const clock = startClock(now);
  const progress = opts.onProgress ?? (() => {});
  validateOptions(opts);

  const fileName = opts.input && 'path' in opts.input ? path.basename(opts.input.path) : null;
  const lockTimeoutMs = Math.max(1, Math.floor(opts.lockTimeoutMs ?? 600_000));
  const bookkeeping = (fn: (trx: Knex.Transaction) => Promise<void>) => runPatiently(db, lockTimeoutMs, progress, fn);
  let run!: { id: number };
  await bookkeeping(async (trx) => {
    await trx.raw(`INSERT INTO sources (name, format) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, [opts.source, opts.format]);
    [run] = (
      await trx.raw(
        `INSERT INTO import_runs (source, mode, status, file_name, started_at) VALUES (?, ?, 'running', ?, ?) RETURNING id`,
        [opts.source, opts.delta ? 'delta' : 'full', fileName, now],
      )
    ).rows as { id: number }[];
  });

  let mode: FeedMode = opts.delta ? 'delta' : 'full';
  const rejects: Reject[] = [];
  let counts: ImportCounts = { read: 0, created: 0, updated: 0, unchanged: 0, reactivated: 0, withdrawn: 0, merged: 0, flagged: 0, rejected: 0 };
  const finishFailed = (status: 'failed' | 'refused', error: string) =>
    bookkeeping(async (trx) => {
      await trx.raw(
        `UPDATE import_runs SET status = ?, mode = ?, finished_at = ?, counts = ?::jsonb, rejects = ?::jsonb, error = ? WHERE id = ?`,
        [status, mode, clock(), JSON.stringify(counts), JSON.stringify(rejects.slice(0, MAX_STORED_REJECTS)), error, run.id],
      );
    });

  try {
    const feed = await readFeed(db, opts);
    if (feed.mode === 'delta' || opts.delta) mode = 'delta';
    progress({ phase: 'parsed', records: feed.records.length });
    rejects.push(...feed.rejects);
    const gazetteer = opts.gazetteer ?? (await loadGazetteer(db));
    const idOf = opts.listingIds ?? (await loadListingIds(db));

    const listings: NormalizedListing[] = [];
    const keep: string[] = [];
    const gone: string[] = [];
    const seen = new Map<string, string>();
    feed.records.forEach((r, i) => {
      if (i % 2000 === 0) progress({ phase: 'normalize', done: i, total: feed.records.length });
      if (r.externalId) {
        const first = seen.get(r.externalId);
        if (first) {
          rejects.push({ external_id: r.externalId, position: r.position, reason: `external id appears again (first at ${first}); only the first is imported` });
          return;
        }
        seen.set(r.externalId, r.position);
      }
      if (r.action !== 'upsert') {
        if (!r.externalId) rejects.push({ external_id: null, position: r.position, reason: `no external id: cannot ${r.action === 'delete' ? 'delete' : 'withdraw'} an unnamed listing` });
        else gone.push(idOf(opts.source, r.externalId));
        return;
      }
      const n = normalizeRecord(r, { source: opts.source, gazetteer, now, listingId: idOf });
      if (n.ok) {
        listings.push(n.listing);
        keep.push(n.listing.id);
      } else {
        rejects.push({ external_id: r.externalId, position: r.position, reason: n.reason });
        if (r.externalId) keep.push(idOf(opts.source, r.externalId));
      }
    });
    progress({ phase: 'normalize', done: feed.records.length, total: feed.records.length });
    counts.read = feed.records.length + feed.rejects.length;
    counts.rejected = rejects.length;
    for (const r of feed.rejects) if (r.external_id) keep.push(idOf(opts.source, r.external_id));

    const outcome = await db.transaction(async (trx) => {
      await trx.raw(`SET LOCAL statement_timeout = 0`);
      await trx.raw(`SET LOCAL lock_timeout = ${lockTimeoutMs}`);
      await acquireLocks(trx, opts.source, progress);

      progress({ phase: 'write', step: 'staging' });
      await stageBatch(trx, listings);
      await stageIdSets(trx, keep, gone);
      const preview = await withdrawalPreview(trx, opts.source, mode === 'full');
      // A truncated or half-generated snapshot must never empty a source.
      if (mode === 'full' && !opts.allowMassWithdrawal && preview.wouldWithdraw * 2 > preview.live) {
        return { refused: preview };
      }
      progress({ phase: 'write', step: 'listings' });
      const life = await applyLifecycle(trx, opts.source, mode === 'full', now);
      progress({ phase: 'write', step: 'deduplication' });
      const dd = await deduplicate(trx, life.touched, life.formerCanonicals, now);
      progress({ phase: 'write', step: 'flags' });
      const flaggedIds = new Set(dd.newlyFlagged);
      for (const id of await refreshPriceOutliers(trx, now)) flaggedIds.add(id);
      for (const id of await refreshStaleFlags(trx, now)) flaggedIds.add(id);
      counts = {
        ...counts,
        created: life.created,
        updated: life.updated,
        unchanged: life.unchanged,
        reactivated: life.reactivated,
        withdrawn: life.withdrawn,
        merged: dd.merged,
        flagged: flaggedIds.size,
      };
      // The run is recorded 'ok' in the same transaction as the data: the freshness figures
      // of the API never run ahead of what it serves.
      await trx.raw(
        `UPDATE import_runs SET status = 'ok', mode = ?, finished_at = ?, counts = ?::jsonb, rejects = ?::jsonb WHERE id = ?`,
        [mode, clock(), JSON.stringify(counts), JSON.stringify(rejects.slice(0, MAX_STORED_REJECTS)), run.id],
      );
      return { refused: null };
    });

    const report: ImportReport = {
      source: opts.source,
      format: opts.format,
      mode,
      status: outcome.refused ? 'refused' : 'ok',
      run_id: run.id,
      started_at: now.toISOString(),
      finished_at: clock().toISOString(),
      counts,
      rejects,
    };
    if (outcome.refused) {
      report.refusal = { live: outcome.refused.live, would_withdraw: outcome.refused.wouldWithdraw };
      await finishFailed(
        'refused',
        `the snapshot would withdraw ${outcome.refused.wouldWithdraw} of ${outcome.refused.live} live listings (more than half); nothing was changed`,
      );
    }
    progress({ phase: 'done' });
    return report;
  } catch (e) {
    await finishFailed('failed', e instanceof FeedParseError ? e.message : `${(e as Error).name}: ${(e as Error).message}`).catch(() => {});
    throw e;
  }
}

function validateOptions(opts: ImportOptions): void {
  if (!(FEED_FORMATS as readonly string[]).includes(opts.format)) {
    throw new IngestUsageError(`unknown format "${opts.format}" (expected ${FEED_FORMATS.join(', ')})`);
  }
  if (!SOURCE_NAME.test(opts.source)) {
    throw new IngestUsageError(`invalid source name "${opts.source}": lower-case letters, digits, '.', '_' and '-' only`);
  }
  if (opts.format === 'native' && opts.source !== NATIVE_SOURCE) throw new IngestUsageError(`format native is for source "${NATIVE_SOURCE}" only`);
  if (opts.format !== 'native' && opts.source === NATIVE_SOURCE) throw new IngestUsageError(`source "${NATIVE_SOURCE}" is imported with format native only`);
  if (opts.format !== 'native' && !opts.input) throw new IngestUsageError('no input file given');
  if (opts.format === 'native' && opts.delta) throw new IngestUsageError('native posts are always imported as a full snapshot');
}

async function readFeed(db: Knex, opts: ImportOptions): Promise<ParsedFeed> {
  if (opts.format === 'native') return readNativePosts(db);
  const input = opts.input!;
  let bytes: Buffer | string;
  if (Buffer.isBuffer(input)) bytes = input;
  else if ('text' in input) bytes = input.text;
  else {
    try {
      bytes = await readFile(input.path);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new FeedParseError(`cannot read ${input.path}: ${err.code === 'ENOENT' ? 'no such file' : err.code === 'EISDIR' ? 'it is a directory' : err.message}`);
    }
  }
  return FILE_ADAPTERS[opts.format](bytes);
}

// One import of a source at a time (the second one waits, and says so), and the write
// phases of imports of different sources one after the other: deduplication and the flag
// rules touch listings of every source, and serialising them rules out deadlocks between
// two imports. Both are transaction-level advisory locks, released at commit or rollback;
// the API's reads take no lock that these could block.
async function acquireLocks(trx: Knex.Transaction, source: string, progress: (e: ProgressEvent) => void): Promise<void> {
  const tryLock = async (ns: number, key: string) =>
    ((await trx.raw(`SELECT pg_try_advisory_xact_lock(?, hashtext(?)) AS ok`, [ns, key])).rows[0] as { ok: boolean }).ok;
  if (!(await tryLock(LOCK_SOURCE, source))) {
    progress({ phase: 'waiting-for-lock', source });
    await trx.raw(`SELECT pg_advisory_xact_lock(?, hashtext(?))`, [LOCK_SOURCE, source]);
  }
  if (!(await tryLock(LOCK_WRITE, '*'))) {
    progress({ phase: 'waiting-for-lock', source: '*' });
    await trx.raw(`SELECT pg_advisory_xact_lock(?, hashtext(?))`, [LOCK_WRITE, '*']);
  }
}

// The small writes around an import (the run's row, the source's row) go through the same
// rows as other writers (import_runs, and whatever triggers other parts of the service hang
// on it), so they may have to wait for another import's commit. They wait up to the lock
// timeout, not the connection's statement timeout, and say that they are waiting.
async function runPatiently(
  db: Knex,
  lockTimeoutMs: number,
  progress: (e: ProgressEvent) => void,
  fn: (trx: Knex.Transaction) => Promise<void>,
): Promise<void> {
  const attempt = (timeoutMs: number) =>
    db.transaction(async (trx) => {
      await trx.raw(`SET LOCAL statement_timeout = 0`);
      await trx.raw(`SET LOCAL lock_timeout = ${timeoutMs}`);
      await fn(trx);
    });
  try {
    await attempt(Math.min(1000, lockTimeoutMs));
  } catch (e) {
    // 55P03 lock_not_available: someone else holds the rows; wait for them in earnest.
    if ((e as { code?: string }).code !== '55P03' || lockTimeoutMs <= 1000) throw e;
    progress({ phase: 'waiting-for-lock', source: '*' });
    await attempt(lockTimeoutMs);
  }
}

// Wall time elapsed since the start, added to the injected clock: finished_at stays
// consistent with started_at whatever clock a test injects.
function startClock(now: Date): () => Date {
  const t0 = performance.now();
  return () => new Date(now.getTime() + Math.round(performance.now() - t0));
}
