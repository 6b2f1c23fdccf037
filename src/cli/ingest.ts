import { createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { loadConfig } from '../config.js';
import { createDb } from '../db/knex.js';
import { runningServer } from '../db/open.js';
import { FeedParseError, formatReport, importFeed, IngestUsageError, type ImportReport, type ProgressEvent } from '../ingest/index.js';
import { FEED_FORMATS, type FeedFormat } from '../ingest/types.js';

const USAGE = `Usage:
  npm run ingest -- --source NAME --format openimmo|csv|json FILE [--delta] [--allow-mass-withdrawal] [--rejects FILE.ndjson] [--json]
  npm run ingest -- --source native --format native [--allow-mass-withdrawal] [--rejects FILE.ndjson] [--json]

Exit codes: 0 done (even with rejected records), 1 the file could not be read or parsed
(nothing changed), 2 usage error, 3 refused by the withdrawal guard (nothing changed),
4 any other failure (database unreachable...; nothing changed).`;

const EXIT = { ok: 0, unreadable: 1, usage: 2, refused: 3, failed: 4 } as const;

// A bar only pays off on a terminal and for a file big enough to take a while.
const PROGRESS_BAR_MIN_RECORDS = 5000;

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
  if (!v.source) return usage('--source is required');
  if (!v.format) return usage('--format is required');
  if (!(FEED_FORMATS as readonly string[]).includes(v.format)) return usage(`unknown --format "${v.format}" (expected ${FEED_FORMATS.join(', ')})`);
  const format = v.format as FeedFormat;
  if (format === 'native' && positionals.length > 0) return usage('--format native reads the native posts from the database: give no FILE');
  if (format !== 'native' && positionals.length !== 1) return usage(positionals.length === 0 ? 'FILE is required' : 'give exactly one FILE');

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

  const db = createDb(url, { poolMax: 2 });
  const ui = progressUi(v.json);
  try {
    const report = await importFeed(db, {
      source: v.source,
      format,
      input: format === 'native' ? undefined : { path: positionals[0] },
      delta: v.delta,
      allowMassWithdrawal: v['allow-mass-withdrawal'],
      onProgress: ui.onProgress,
    });
    ui.stop();
    if (v.rejects) await writeRejects(v.rejects, report);
    if (v.json) process.stdout.write(`${JSON.stringify(jsonReport(report))}\n`);
    else process.stdout.write(`${formatReport(report)}\n`);
    return report.status === 'refused' ? EXIT.refused : EXIT.ok;
  } catch (e) {
    ui.stop();
    if (e instanceof FeedParseError) {
      process.stderr.write(`ingest: ${v.source}: the file could not be imported: ${e.message}. Nothing was changed.\n`);
      if (v.json) process.stdout.write(`${JSON.stringify({ source: v.source, status: 'failed', error: e.message })}\n`);
      return EXIT.unreadable;
    }
    if (e instanceof IngestUsageError) return usage(e.message);
    process.stderr.write(`ingest: ${v.source}: import failed, nothing was changed: ${(e as Error).message}\n`);
    if (v.json) process.stdout.write(`${JSON.stringify({ source: v.source, status: 'failed', error: (e as Error).message })}\n`);
    return EXIT.failed;
  } finally {
    await db.destroy();
  }
}

function jsonReport(r: ImportReport) {
  return { source: r.source, format: r.format, mode: r.mode, status: r.status, run_id: r.run_id, ...r.counts, refusal: r.refusal, rejects: r.rejects };
}

function usage(message: string): number {
  process.stderr.write(`ingest: ${message}\n\n${USAGE}\n`);
  return EXIT.usage;
}

async function writeRejects(file: string, report: ImportReport): Promise<void> {
  const out = createWriteStream(file, { encoding: 'utf8' });
  for (const r of report.rejects) out.write(`${JSON.stringify(r)}\n`);
  await new Promise<void>((resolve, reject) => {
    out.on('error', reject);
    out.end(resolve);
  });
}

// Progress on stderr so that stdout carries only the report (and --json's last line).
function progressUi(quiet: boolean) {
  const tty = process.stderr.isTTY && process.stdout.isTTY;
  let bar: cliProgress.SingleBar | null = null;
  const say = (s: string) => {
    if (!quiet || !tty) process.stderr.write(`${s}\n`);
  };
  return {
    onProgress(e: ProgressEvent) {
      switch (e.phase) {
        case 'parsed':
          say(`read ${e.records} records`);
          if (tty && e.records > PROGRESS_BAR_MIN_RECORDS) {
            bar = new cliProgress.SingleBar({ format: 'normalizing [{bar}] {value}/{total}', stream: process.stderr }, cliProgress.Presets.shades_classic);
            bar.start(e.records, 0);
          }
          break;
        case 'normalize':
          bar?.update(e.done);
          break;
        case 'waiting-for-lock':
          say(e.source === '*' ? 'another import is writing; waiting for it to finish...' : `another import of "${e.source}" is running; waiting for it to finish...`);
          break;
        case 'write':
          if (bar) {
            bar.stop();
            bar = null;
          }
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
