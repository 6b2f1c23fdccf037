import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { controlCharacterInArguments, UsageError } from './args.js';
import { openDatabase } from '../db/open.js';
import { DEMO_DEFAULT_LISTINGS, DEMO_DEFAULT_SEED } from '../demo/generate.js';
import { seedDemo } from '../demo/seed.js';

// npm run db:seed [-- --seed <n>] [-- --listings <properties on offer>] [-- --feeds-dir DIR]
// Replaces the listings with the demo data set, on DATABASE_URL or else the embedded
// PostgreSQL (the one a running `npm start` serves, or one started just for this): the
// demo agencies' feed files and native posts, generated, then imported through the
// importer (the code path of `npm run ingest`). --feeds-dir keeps the generated files, to
// look at or to import again by hand with `npm run ingest`.
const USAGE = 'Usage: npm run db:seed [-- --seed N] [--listings N] [--feeds-dir DIR]';

function options() {
  let values;
  try {
    ({ values } = parseArgs({
      options: { seed: { type: 'string' }, listings: { type: 'string' }, 'feeds-dir': { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  // --help or -h: the usage, exit 0, as `npm run ingest` (an outside probe of stop 61: exit 2).
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const control = controlCharacterInArguments(values, []);
  if (control) throw new UsageError(control);
  return {
    seed: positiveInt(values.seed, 'seed') ?? DEMO_DEFAULT_SEED,
    listings: positiveInt(values.listings, 'listings') ?? DEMO_DEFAULT_LISTINGS,
    feedsDir: values['feeds-dir'],
  };
}

async function main(): Promise<void> {
  // A usage error exits 2, as `npm run keys` and `npm run ingest` do (an outside probe: 1).
  const { seed, listings, feedsDir } = options();

  const config = loadConfig();
  const database = await openDatabase(config, { role: 'cli' });
  try {
    const started = Date.now();
    const out = (s: string) => process.stdout.write(s + '\n');
    out(`${'delivery (UTC)'.padEnd(18)} ${'source'.padEnd(14)} ${'format'.padEnd(8)} ${'read'.padStart(5)} ${'created'.padStart(7)} ${'updated'.padStart(7)} ${'withdrawn'.padStart(9)} ${'merged'.padStart(6)} ${'flagged'.padStart(7)} ${'rejected'.padStart(8)}`);
    const { active, total, reports } = await seedDemo(database.db, {
      now: new Date(),
      seed,
      listings,
      feedsDir,
      onStep: (step, r) => {
        const c = r.counts;
        const when = step.at.toISOString().slice(0, 16).replace('T', ' ');
        out(
          `${when.padEnd(18)} ${step.source.padEnd(14)} ${step.format.padEnd(8)} ${String(c.read).padStart(5)} ${String(c.created).padStart(7)} ${String(c.updated).padStart(7)} ${String(c.withdrawn).padStart(9)} ${String(c.merged).padStart(6)} ${String(c.flagged).padStart(7)} ${String(c.rejected).padStart(8)}`,
        );
      },
    });
    const rejected = reports.reduce((s, r) => s + r.counts.rejected, 0);
    const where = database.embedded ? `embedded PostgreSQL (${config.EMBEDDED_PG_DIR})` : redact(database.url);
    out(
      `Seeded ${active} active of ${total} demo listings (seed ${seed}; ${reports.length} imports, ${rejected} records rejected) into ${where} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    if (feedsDir) out(`The feed files are in ${feedsDir}`);
  } finally {
    await database.close();
  }
}

function positiveInt(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`--${name} must be a positive integer`);
  return Number(v);
}

// The summary names the database but never its password.
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'DATABASE_URL';
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    if (err instanceof UsageError) {
      process.stderr.write(`${USAGE}\n`);
      process.exit(2);
    }
    process.exit(1);
  },
);
