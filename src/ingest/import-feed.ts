import path from 'node:path';
import type { Knex } from 'knex';
import { LOCK_SOURCE, LOCK_WRITE } from '../db/advisory-locks.js';
import { NATIVE_SOURCE, type ListingIdFn } from '../domain/listing.js';
import { within } from '../lib/within.js';
import type { Gazetteer } from '../reference/gazetteer.js';
import { loadGazetteer } from '../reference/load.js';
import { failRunUnlessCommitted, finishRun, insertRunningRun, markInterruptedRuns, reserveRun, type RunOutcome } from '../repositories/import-runs.js';
import { loadListingIds } from '../repositories/listing-ids.js';
import { decodeText, FILE_READERS, readNativePosts } from './adapters/index.js';
import { deduplicate, touchReranked } from './dedup/driver.js';
import { refreshPostcodeHabit } from './dedup/postcodes.js';
import { CommitOutcomeUnknownError, FeedParseError, IngestUsageError } from './errors.js';
import { refreshPriceOutliers, refreshStaleAndRerank } from './flags.js';
import { DEFAULT_MAX_INPUT_BYTES, type FeedInput, openInput } from './input.js';
import { acquireLock, runPatiently } from './locks.js';
import { type BatchEvent, externalIds, planBatch } from './plan.js';
import type { FeedEvent, FeedFormat, FeedMode, ImportCounts, ImportReport, ProgressEvent, Reject } from './types.js';
import { FEED_FORMATS } from './types.js';
import { applyLifecycle, createStaging, finishStaging, markSeen, refreshListingStatistics, registerSource, seenBefore, stageIds, stageListings, withdrawalPreview } from './writer.js';

export interface ImportOptions {
  source: string;
  format: FeedFormat;
  // The delivery: a file path, bytes or text, or a stream of bytes. Not used for format
  // 'native'.
  input?: FeedInput;
  // Treat the delivery as a delta even if it does not say so (a file that says it is a
  // delta is one whatever this says).
  delta?: boolean;
  allowMassWithdrawal?: boolean;
  // The most bytes read from the input (default 512 MB): past it, a FeedTooLargeError and
  // nothing changed.
  maxBytes?: number;
  // The clock of this import: timestamps, last_seen_at and the stale rule use it.
  now?: Date;
  gazetteer?: Gazetteer;
  // The keyed listing id function; by default loaded from the database's secret.
  listingIds?: ListingIdFn;
  onProgress?: (e: ProgressEvent) => void;
  // Every rejected record, as it is found (the report keeps only the first ones).
  onReject?: (r: Reject) => void;
  // How long to wait for another import (of any source) to finish. Default 10 minutes.
  lockTimeoutMs?: number;
  // Records normalized and staged at a time (default 2,000): a test crosses batches with a
  // small file.
  stageBatch?: number;
  // How long to keep asking a database that cannot be reached whether a COMMIT whose answer was
  // lost applied (default 60 s, COMMIT_CHECK_MS).
  commitCheckMs?: number;
}

const SOURCE_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
// The report and import_runs.rejects keep the first rejects; onReject (the CLI's rejects
// file) sees them all.
export const MAX_REPORTED_REJECTS = 10_000;
// Records normalized and staged at a time, unless ImportOptions.stageBatch says otherwise.
const BATCH = 2000;
const PROGRESS_EVERY = 5000;
// Asking whether a COMMIT whose answer was lost applied: for this long at most, once a second.
// An outside probe of stop 57 cut every connection as the COMMIT went: asked once, on a database
// still unreachable, the import said "nothing was changed" (exit 4) over a commit that applied.
export const COMMIT_CHECK_MS = 60_000;
const COMMIT_CHECK_EVERY_MS = 1000;

const zeroCounts = (): ImportCounts => ({
  read: 0, created: 0, updated: 0, unchanged: 0, reactivated: 0, deleted: 0, skipped: 0, rejected: 0, withdrawn: 0, merged: 0, separated: 0, flagged: 0,
});

// One import, in one transaction, in pipeline order: the delivery is read as a stream; its
// records are planned (plan.ts: normalized or rejected) and staged in batches as they come
// (memory does not grow with the file but for the external ids seen and the first rejects);
// once the file is read, the mode is known (a file may declare it after its records), the
// withdrawal guard decides, and the life cycle, deduplication and flags are written; the
// run's row (repositories/import-runs.ts) is finished with the data.
export async function importFeed(db: Knex, opts: ImportOptions): Promise<ImportReport> {
  const now = opts.now ?? new Date();
  const clock = startClock(now);
  const progress = opts.onProgress ?? (() => {});
  validateOptions(opts);
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_INPUT_BYTES;

  const fileName = opts.input && 'path' in opts.input ? path.basename(opts.input.path) : null;
  const lockTimeoutMs = Math.max(1, Math.floor(opts.lockTimeoutMs ?? 600_000));
  const bookkeeping = <T>(fn: (trx: Knex.Transaction) => Promise<T>) => runPatiently(db, lockTimeoutMs, progress, fn);
  // Runs of imports that died (killed, crashed) are closed first.
  await bookkeeping(markInterruptedRuns);
  const gazetteer = opts.gazetteer ?? (await loadGazetteer(db));
  // The one place where the importer gets its listing id function.
  const idOf = opts.listingIds ?? (await loadListingIds(db));

  let runId: number | null = null;
  let mode: FeedMode = opts.delta ? 'delta' : 'full';
  const rejects: Reject[] = [];
  let counts = zeroCounts();
  const outcome = (status: RunOutcome['status'], error?: string): RunOutcome => ({ status, mode, finishedAt: clock(), counts, rejects, error });

  // The withdrawal guard's refusal (its preview), or null: known before the COMMIT, so that a
  // commit whose answer was lost is reported as it was decided.
  let refused: Awaited<ReturnType<typeof withdrawalPreview>> | null = null;
  // Set as the transaction's work ends: from then on a failure may be its COMMIT's.
  let commitSent = false;
  const sendingCommit = (id: number) => {
    commitSent = true;
    progress({ phase: 'commit', runId: id });
  };
  const commitCheckMs = opts.commitCheckMs ?? COMMIT_CHECK_MS;
  const report = (): ImportReport => {
    const r: ImportReport = {
      source: opts.source,
      format: opts.format,
      mode,
      status: refused ? 'refused' : 'ok',
      run_id: runId!,
      started_at: now.toISOString(),
      finished_at: clock().toISOString(),
      counts,
      rejects,
    };
    if (refused) r.refusal = { live: refused.live, would_withdraw: refused.wouldWithdraw };
    return r;
  };
  try {
    await db.transaction(async (trx) => {
      await trx.raw(`SET LOCAL statement_timeout = 0`);
      await trx.raw(`SET LOCAL lock_timeout = ${lockTimeoutMs}`);
      // The run's lock first, then its row: a 'running' row always has a live owner.
      const id = await reserveRun(trx);
      await bookkeeping((b) => insertRunningRun(b, { id, source: opts.source, mode, fileName, startedAt: now }));
      runId = id;
      await acquireLock(trx, LOCK_SOURCE, opts.source, progress);

      // Read, plan, stage.
      await createStaging(trx);
      const declared = await stageFeed(trx, opts, { maxBytes, gazetteer, idOf, now, progress, counts, rejects });
      if (declared === 'delta') mode = 'delta';
      await finishStaging(trx);

      // Write. Deduplication and the flag rules touch listings of every source: the write
      // phases of all imports take turns.
      await acquireLock(trx, LOCK_WRITE, '*', progress);
      // An import that held the turn and died while this one waited is closed now, not by the
      // next import after this one (the regression probe).
      await bookkeeping(markInterruptedRuns);
      progress({ phase: 'write', step: 'listings' });
      // One rule for whatever withdraws, a snapshot by absence or a delta by deletion: a
      // truncated, half-generated or mistaken delivery must never empty a source.
      const preview = await withdrawalPreview(trx, opts.source, mode === 'full');
      if (!opts.allowMassWithdrawal && preview.wouldWithdraw * 2 > preview.live) {
        const what = mode === 'full' ? 'the snapshot' : 'the delta';
        await finishRun(trx, id, outcome('refused', `${what} would withdraw ${preview.wouldWithdraw} of ${preview.live} live listings (more than half); nothing was changed`));
        refused = preview;
        sendingCommit(id);
        return;
      }
      counts = { ...counts, ...(await writeStaged(trx, opts, mode === 'full', now, progress)) };

      // Finish: the run is recorded 'ok' in the same transaction as the data, so that the
      // freshness figures of the API never run ahead of what it serves.
      await finishRun(trx, id, outcome('ok'));
      sendingCommit(id);
    });

    const done = report();
    progress({ phase: 'done' });
    return done;
  } catch (e) {
    if (runId !== null) {
      const id = runId;
      const error = e instanceof FeedParseError ? e.message : `${(e as Error).name}: ${(e as Error).message}`;
      // The connection may have dropped once COMMIT was sent, the commit applied and its answer
      // lost: the run's row, finished in the same transaction, tells (an outside probe of stop
      // 56: "import failed, nothing was changed", the listings served, and the run then marked
      // failed over its 'ok').
      const failUnlessCommitted = () => bookkeeping((b) => failRunUnlessCommitted(b, id, outcome('failed', error)));
      // Before the COMMIT, asked once; after it, until the database answers (COMMIT_CHECK_MS).
      const status = commitSent ? await askUntilAnswered(failUnlessCommitted, commitCheckMs) : await failUnlessCommitted().catch(() => null);
      if (status === 'ok' || status === 'refused') {
        progress({ phase: 'done' });
        return { ...report(), commit_answer_lost: true };
      }
      if (status === undefined) {
        throw new CommitOutcomeUnknownError(`the import sent its COMMIT, the connection dropped before the answer (${error}), and the database could not be reached for ${Math.round(commitCheckMs / 1000)} s to tell whether it applied: import_runs row ${id} tells (ok: applied; failed or running: not); importing the same delivery again is safe either way`, id, e);
      }
    }
    throw e;
  }
}

// The write step, once the delivery is staged and allowed: the life cycle of the source's
// listings, then deduplication and the flags, which touch listings of every source.
async function writeStaged(
  trx: Knex.Transaction,
  opts: ImportOptions,
  full: boolean,
  now: Date,
  progress: (e: ProgressEvent) => void,
): Promise<Omit<ImportCounts, 'read' | 'rejected'>> {
  // No JIT compilation in this transaction: deduplication's candidate search runs once per
  // slice of 10,000 listings, and PostgreSQL compiled it each time (at 1,000,000 listings:
  // 2.2 s of compiling for 0.7 s of execution per 2,000 probes).
  await trx.raw(`SET LOCAL jit = off`);
  // The source becomes known (and public in the stats) with its first data, in the
  // same transaction: a failed first import leaves no trace but its run.
  await registerSource(trx, opts.source, opts.format);
  const life = await applyLifecycle(trx, opts.source, full, now);
  await refreshListingStatistics(trx, life.touched);
  // Whether the source writes one postcode per locality, from its listings as they now stand.
  const habit = await refreshPostcodeHabit(trx, opts.source);
  // The stale flag before deduplication, which decides again the groups of listings that
  // went or stopped being stale too.
  const stale = await refreshStaleAndRerank(trx, now);
  // price_outlier likewise (since stop 51): judged on every live listing, merged rows too, against
  // yardsticks of every live listing, so the verdict depends on the data alone, not on which
  // member of a group is public; a group's public listing is one that is no outlier when it has
  // one (compareCanonical), and no look-alike is flagged as the duplicate of an outlier.
  progress({ phase: 'write', step: 'flags' });
  const outliersChanged: string[] = [];
  const outliers = await refreshPriceOutliers(trx, now, outliersChanged);
  const reranked = stale.reranked + (await touchReranked(trx, outliersChanged));
  progress({ phase: 'write', step: 'deduplication' });
  const dd = await deduplicate(trx, life.touched + reranked + habit, life.formerCanonicals, now);
  // Counted: the listings this import flagged that are still flagged (deduplication may clear
  // a possible_duplicate it set in an earlier round).
  const candidates = [...new Set([...stale.newlyFlagged, ...outliers, ...dd.newlyFlagged])];
  const still = await trx.raw(`SELECT id FROM listings WHERE id = ANY (?::text[]) AND cardinality(flags) > 0`, [candidates]);
  const flaggedIds = new Set((still.rows as { id: string }[]).map((r) => r.id));
  return {
    created: life.created,
    updated: life.updated,
    unchanged: life.unchanged,
    reactivated: life.reactivated,
    deleted: life.deleted,
    skipped: life.skipped,
    withdrawn: life.withdrawn,
    merged: dd.merged,
    separated: dd.separated,
    flagged: flaggedIds.size,
  };
}

interface StageContext {
  maxBytes: number;
  gazetteer: Gazetteer;
  idOf: ListingIdFn;
  now: Date;
  progress: (e: ProgressEvent) => void;
  // Filled in as the records are read.
  counts: ImportCounts;
  rejects: Reject[];
}

// Reads the delivery and stages its records in batches. Returns the mode the file declares.
async function stageFeed(trx: Knex.Transaction, opts: ImportOptions, ctx: StageContext): Promise<FeedMode | null> {
  const { counts, rejects, progress } = ctx;
  let bytesRead = () => 0;
  let totalBytes: number | null = null;
  let events: AsyncIterable<FeedEvent>;
  if (opts.format === 'native') events = readNativePosts(trx);
  else {
    const input = await openInput(opts.input!, ctx.maxBytes);
    bytesRead = input.bytesRead;
    totalBytes = input.totalBytes;
    events = FILE_READERS[opts.format](decodeText(input.chunks));
  }

  const reject = (r: Reject) => {
    counts.rejected++;
    // Copies: a string sliced out of the text read would keep that whole piece in memory.
    const copy: Reject = { external_id: r.external_id === null ? null : own(r.external_id), position: own(r.position), reason: own(r.reason) };
    if (rejects.length < MAX_REPORTED_REJECTS) rejects.push(copy);
    opts.onReject?.(copy);
  };

  // The records of a batch wait here, in file order, until the batch is full; then the
  // external ids taken in earlier batches are looked up in the staging table of ids seen
  // (nothing of the kind grows in memory with the file), the batch is planned and staged, and
  // the ids it took are added to that table.
  let pending: BatchEvent[] = [];
  const flush = async () => {
    const batch = pending;
    pending = [];
    const earlier = await seenBefore(trx, externalIds(batch));
    const plan = planBatch(batch, earlier, { source: opts.source, gazetteer: ctx.gazetteer, now: ctx.now, listingId: ctx.idOf });
    await markSeen(trx, plan.taken);
    for (const r of plan.rejects) reject(r);
    await stageListings(trx, plan.listings);
    await stageIds(trx, 'keep', plan.keep);
    await stageIds(trx, 'gone', plan.gone);
  };

  let declared: FeedMode | null = null;
  for await (const e of events) {
    if (e.kind === 'mode') {
      declared = e.mode;
      continue;
    }
    counts.read++;
    if (counts.read % PROGRESS_EVERY === 0) progress({ phase: 'read', records: counts.read, bytes: bytesRead(), totalBytes });
    pending.push(e);
    if (pending.length >= (opts.stageBatch ?? BATCH)) await flush();
  }
  await flush();
  progress({ phase: 'parsed', records: counts.read, bytes: bytesRead() });
  return declared;
}

// A string of its own (not a slice of a larger one).
function own(s: string): string {
  return s.length < 13 ? s : Buffer.from(s, 'utf8').toString('utf8');
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
  if (opts.maxBytes !== undefined && !(Number.isSafeInteger(opts.maxBytes) && opts.maxBytes > 0)) {
    throw new IngestUsageError(`maxBytes must be a positive whole number of bytes, not ${String(opts.maxBytes)}`);
  }
  if (opts.stageBatch !== undefined && !(Number.isSafeInteger(opts.stageBatch) && opts.stageBatch > 0)) {
    throw new IngestUsageError(`stageBatch must be a positive whole number of records, not ${String(opts.stageBatch)}`);
  }
}

// Wall time elapsed since the start, added to the injected clock: finished_at stays
// consistent with started_at whatever clock a test injects.
function startClock(now: Date): () => Date {
  const t0 = performance.now();
  return () => new Date(now.getTime() + Math.round(performance.now() - t0));
}

// Asks until the database answers, at most `withinMs` (an ask that hangs, on a database that
// takes connections but does not answer, is given up with the rest): its answer (a run's status,
// or null), or undefined when it never answered.
async function askUntilAnswered(ask: () => Promise<string | null>, withinMs: number): Promise<string | null | undefined> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      return await within(ask(), Math.max(1, until - Date.now()));
    } catch {
      if (Date.now() + COMMIT_CHECK_EVERY_MS > until) return undefined;
      await new Promise((resolve) => setTimeout(resolve, COMMIT_CHECK_EVERY_MS));
    }
  }
}
