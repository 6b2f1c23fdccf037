import { createWriteStream, type WriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { pino } from 'pino';
import { loadConfig } from '../config.js';
import { unavailableCause } from '../db/errors.js';
import { createDb } from '../db/knex.js';
import { watchLiveness } from '../db/liveness.js';
import { runningServer } from '../db/open.js';
import {
  CommitOutcomeUnknownError,
  DEFAULT_MAX_INPUT_BYTES,
  FeedParseError,
  FeedTooLargeError,
  formatReport,
  importFeed,
  IngestUsageError,
  type ImportReport,
  type ProgressEvent,
} from '../ingest/index.js';
import { FEED_FORMATS, type FeedFormat } from '../ingest/types.js';
import { takeAfterImport } from '../services/market-snapshots.js';
import { escapeControlCharacters } from '../lib/text.js';
import { controlCharacterInArguments } from './args.js';

const USAGE = `Usage:
  npm run ingest -- --source NAME --format openimmo|csv|json FILE|- [--delta] [--allow-mass-withdrawal] [--max-bytes N] [--rejects FILE.ndjson] [--json]
  npm run ingest -- --source native --format native [--allow-mass-withdrawal] [--rejects FILE.ndjson] [--json]

FILE "-" reads standard input. --max-bytes: the most bytes read (default 512MB; a number,
or with a unit: 800MB, 2GB).

Exit codes: 0 done (even with rejected records), 1 the file could not be read or parsed
(nothing changed), 2 usage error, 3 refused by the withdrawal guard (nothing changed),
4 any other failure (database unreachable...; nothing changed), 5 the input is larger than
--max-bytes (nothing changed), 6 the outcome is unknown (the import sent its COMMIT, and the
database could not be asked whether it applied: import_runs tells; importing again is safe).`;

const EXIT = { ok: 0, unreadable: 1, usage: 2, refused: 3, failed: 4, tooLarge: 5, unknown: 6 } as const;

// Without a terminal, a line every so many records.
const PROGRESS_LINE_RECORDS = 100_000;

async function main(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        source: { type: 'string' },
        format: { type: 'string' },
        delta: { type: 'boolean', default: false },
        'allow-mass-withdrawal': { type: 'boolean', default: false },
        rejects: { type: 'string' },
        'max-bytes': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    return usage((e as Error).message);
  }
  const { values: v, positionals } = args;
  if (v.help) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const control = controlCharacterInArguments(v, positionals);
  if (control) return usage(control);
  if (!v.source) return usage('--source is required');
  if (!v.format) return usage('--format is required');
  if (!(FEED_FORMATS as readonly string[]).includes(v.format)) return usage(`unknown --format "${v.format}" (expected ${FEED_FORMATS.join(', ')})`);
  const format = v.format as FeedFormat;
  if (format === 'native' && positionals.length > 0) return usage('--format native reads the native posts from the database: give no FILE');
  if (format !== 'native' && positionals.length !== 1) return usage(positionals.length === 0 ? 'FILE is required' : 'give exactly one FILE');
  let maxBytes = DEFAULT_MAX_INPUT_BYTES;
  if (v['max-bytes'] !== undefined) {
    const parsed = parseBytes(v['max-bytes']);
    if (parsed === null) return usage(`--max-bytes "${v['max-bytes']}" is not a size: give a number of bytes, or one with a unit (800MB, 2GB)`);
    maxBytes = parsed;
  }

  let config;
  try {
    config = loadConfig();
  } catch (e) {
    return usage((e as Error).message);
  }
  // DATABASE_URL, or else the embedded PostgreSQL of a running `npm start`.
  const url = config.DATABASE_URL ?? runningServer(config)?.url;
  if (!url) {
    return usage(
      'DATABASE_URL is not set (and no `npm start` is running on the embedded PostgreSQL): set it to the PostgreSQL database to import into (e.g. postgres://user@host:5432/listings)',
    );
  }

  // Every reject goes to the file as it is found (the report keeps the first 10,000).
  let rejectsFile: WriteStream | null = null;
  if (v.rejects) {
    try {
      rejectsFile = await openRejects(v.rejects);
    } catch (e) {
      return usage(`cannot write the rejects file ${v.rejects}: ${(e as Error).message}`);
    }
  }
  // knex's own warnings silenced: a connection it could not open was printed with its stack
  // before the command's one line saying so (exit 4; an outside probe).
  // An import whose host or network is gone is ended by PostgreSQL within minutes (TCP
  // keepalive probes from the server), so the locks other imports wait for are not held for
  // hours. Not a limit on idle time: a live import may wait for its input as long as it takes
  // (an outside probe: a limit of 10 idle minutes cut an import from a paused pipe).
  const db = createDb(url, { poolMax: 2, serverKeepalive: true, logger: pino({ enabled: false }) });
  const ui = progressUi(v.json);
  // The import's statements have no time bound (statement_timeout 0): a database that stopped
  // answering is found by asking it on another connection (src/db/liveness.ts).
  // Once the import has sent its COMMIT, a database that stops answering leaves its outcome
  // unknown, not "not committed" (an outside probe of stop 57); the run is named. The watch then
  // gives up after 8 unanswered asks (80 s refused, 160 s frozen), longer than the import asks
  // whether its COMMIT applied (60 s: COMMIT_CHECK_MS), or it cut that short (its re-check: exit 6
  // for a database back at 30 s).
  let committingRun: number | null = null;
  const onDead = (what: string) => {
    ui.stop();
    const error = `the database stopped answering: ${what}`;
    if (committingRun !== null) {
      process.stderr.write(`ingest: ${v.source}: the import's outcome is unknown: it sent its COMMIT, then ${error}. Its run, import_runs row ${committingRun}, tells once the database answers (ok: applied; failed or running: not); importing the same file again is safe either way.\n`);
      if (v.json) process.stdout.write(`${JSON.stringify({ source: v.source, status: 'unknown', run_id: committingRun, error })}\n`);
      process.exit(EXIT.unknown);
    }
    process.stderr.write(`ingest: ${v.source}: import abandoned, ${error}. Its transaction is not committed unless the commit had reached the server; run the import again once the database answers.\n`);
    if (v.json) process.stdout.write(`${JSON.stringify({ source: v.source, status: 'failed', error })}\n`);
    process.exit(EXIT.failed);
  };
  let stopWatch = watchLiveness(url, onDead);
  try {
    const file = positionals[0];
    const report = await importFeed(db, {
      source: v.source,
      format,
      input: format === 'native' ? undefined : file === '-' ? { stream: process.stdin } : { path: file },
      delta: v.delta,
      allowMassWithdrawal: v['allow-mass-withdrawal'],
      maxBytes,
      onProgress: (e) => {
        if (e.phase === 'commit') {
          committingRun = e.runId;
          void stopWatch();
          stopWatch = watchLiveness(url, onDead, { misses: 8 });
        }
        ui.onProgress(e);
      },
      onReject: rejectsFile ? (r) => rejectsFile.write(`${JSON.stringify(r)}\n`) : undefined,
    });
    ui.stop();
    if (report.commit_answer_lost) {
      process.stderr.write(`ingest: ${v.source}: the connection dropped as the import committed; its run says the commit was applied, so the import is done as reported below.\n`);
    }
    // The day's market snapshot follows the data (the running server would take it within
    // its next check otherwise). The import is committed whatever happens here.
    if (report.status === 'ok') {
      await takeAfterImport(db, new Date()).catch((e: Error) =>
        process.stderr.write(`ingest: ${v.source}: imported, but the market snapshot failed (the server retakes it): ${e.message}\n`),
      );
    }
    if (v.json) process.stdout.write(`${JSON.stringify(jsonReport(report))}\n`);
    else process.stdout.write(`${formatReport(report)}\n`);
    return report.status === 'refused' ? EXIT.refused : EXIT.ok;
  } catch (e) {
    ui.stop();
    if (e instanceof FeedTooLargeError) {
      process.stderr.write(`ingest: ${v.source}: the file could not be imported: ${escapeControlCharacters(e.message)}. Nothing was changed. Raise --max-bytes if the delivery is really that large.\n`);
      if (v.json) process.stdout.write(`${JSON.stringify({ source: v.source, status: 'failed', error: e.message })}\n`);
      return EXIT.tooLarge;
    }
    if (e instanceof FeedParseError) {
      process.stderr.write(`ingest: ${v.source}: the file could not be imported: ${escapeControlCharacters(e.message)}. Nothing was changed.\n`);
      if (v.json) process.stdout.write(`${JSON.stringify({ source: v.source, status: 'failed', error: e.message })}\n`);
      return EXIT.unreadable;
    }
    if (e instanceof IngestUsageError) return usage(e.message);
    if (e instanceof CommitOutcomeUnknownError) {
      process.stderr.write(`ingest: ${v.source}: the import's outcome is unknown: ${escapeControlCharacters(e.message)}\n`);
      if (v.json) process.stdout.write(`${JSON.stringify({ source: v.source, status: 'unknown', run_id: e.runId, error: e.message })}\n`);
      return EXIT.unknown;
    }
    // A database that takes the connection but does not answer: knex's words are for developers
    // ("Timeout acquiring a connection. The pool is probably full...": the regression probe).
    const cause = unavailableCause(e);
    const error = cause === 'pool_timeout' ? 'the database did not answer: no connection was ready within 5 s' : cause === 'no_answer' ? 'the database did not answer a statement in time' : (e as Error).message;
    process.stderr.write(`ingest: ${v.source}: import failed, nothing was changed: ${escapeControlCharacters(error)}\n`);
    if (v.json) process.stdout.write(`${JSON.stringify({ source: v.source, status: 'failed', error })}\n`);
    return EXIT.failed;
  } finally {
    await stopWatch();
    await db.destroy();
    if (rejectsFile) await closeRejects(rejectsFile);
    // Standard input may still be open (a delivery cut short by an error).
    if (positionals[0] === '-') process.stdin.destroy();
  }
}

// "536870912", "512MB", "512 MiB", "2g": bytes, in binary units.
function parseBytes(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?\s*$/i.exec(text);
  if (!m) return null;
  const unit = (m[2] ?? 'b').toLowerCase()[0];
  const n = Math.floor(Number(m[1]) * { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[unit as 'b' | 'k' | 'm' | 'g']);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

function jsonReport(r: ImportReport) {
  return { source: r.source, format: r.format, mode: r.mode, status: r.status, run_id: r.run_id, ...r.counts, refusal: r.refusal, rejects: r.rejects };
}

function usage(message: string): number {
  process.stderr.write(`ingest: ${message}\n\n${USAGE}\n`);
  return EXIT.usage;
}

async function openRejects(file: string): Promise<WriteStream> {
  const out = createWriteStream(file, { encoding: 'utf8' });
  await new Promise<void>((resolve, reject) => {
    out.once('open', () => resolve());
    out.once('error', reject);
  });
  return out;
}

async function closeRejects(out: WriteStream): Promise<void> {
  await new Promise<void>((resolve) => {
    out.once('error', () => resolve());
    out.end(() => resolve());
  });
}

// Progress on stderr so that stdout carries only the report (and --json's last line).
function progressUi(quiet: boolean) {
  const tty = process.stderr.isTTY && process.stdout.isTTY;
  let bar: cliProgress.SingleBar | null = null;
  let lastSaid = 0;
  const say = (s: string) => {
    if (!quiet || !tty) process.stderr.write(`${s}\n`);
  };
  const mb = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MB`;
  return {
    onProgress(e: ProgressEvent) {
      switch (e.phase) {
        case 'read':
          // A bar over the bytes of the file when its size is known, on a terminal.
          if (tty && e.totalBytes !== null && e.totalBytes > 0) {
            if (!bar) {
              bar = new cliProgress.SingleBar(
                { format: 'reading [{bar}] {percentage}% | {records} records', stream: process.stderr },
                cliProgress.Presets.shades_classic,
              );
              bar.start(e.totalBytes, 0, { records: 0 });
            }
            bar.update(e.bytes, { records: e.records });
          } else if (e.records - lastSaid >= PROGRESS_LINE_RECORDS) {
            lastSaid = e.records;
            say(`read ${e.records} records (${mb(e.bytes)})`);
          }
          break;
        case 'parsed':
          if (bar) {
            bar.stop();
            bar = null;
          }
          say(`read ${e.records} records`);
          break;
        case 'waiting-for-lock':
          say(e.source === '*' ? 'another import is writing; waiting for it to finish...' : `another import of "${e.source}" is running; waiting for it to finish...`);
          break;
        case 'write':
          say(`writing: ${e.step}`);
          break;
        case 'done':
          break;
      }
    },
    stop() {
      bar?.stop();
      bar = null;
    },
  };
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`ingest: ${(e as Error).stack ?? e}\n`);
    process.exitCode = EXIT.failed;
  },
);
