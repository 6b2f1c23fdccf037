import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/open.js';
import { DEMO_DEFAULT_LISTINGS, DEMO_DEFAULT_SEED } from '../demo/generate.js';
import { seedDemo } from '../demo/seed.js';

// npm run db:seed [-- --seed <n>] [-- --listings <active listings>]
// Replaces the listings with the demo data set, on DATABASE_URL or else the embedded
// PostgreSQL (the one a running `npm start` serves, or one started just for this).
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { seed: { type: 'string' }, listings: { type: 'string' } },
    strict: true,
  });
  const seed = positiveInt(values.seed, 'seed') ?? DEMO_DEFAULT_SEED;
  const listings = positiveInt(values.listings, 'listings') ?? DEMO_DEFAULT_LISTINGS;

  const config = loadConfig();
  const database = await openDatabase(config, { role: 'cli' });
  try {
    const started = Date.now();
    const { active, total } = await seedDemo(database.db, { now: new Date(), seed, listings });
    const where = database.embedded ? `embedded PostgreSQL (${config.EMBEDDED_PG_DIR})` : redact(database.url);
    process.stdout.write(
      `Seeded ${active} active of ${total} demo listings (seed ${seed}) into ${where} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
  } finally {
    await database.close();
  }
}

function positiveInt(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`--${name} must be a positive integer`);
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
    process.exit(1);
  },
);
