import type { Knex } from 'knex';
import { generateDemoData } from './generate.js';

const BATCH = 500;

// Replaces every listing, native post, import run and source with the demo data set, in
// one transaction: readers see the old data or the new, never a mix. Accounts, API keys
// and the reference tables are left alone, so running it twice gives the same result.
export async function seedDemo(
  db: Knex,
  opts: { now: Date; seed?: number; listings?: number },
): Promise<{ active: number; total: number }> {
  const data = generateDemoData(opts);
  // Targets before the listings merged into them (merged_into is a foreign key).
  const listings = [...data.listings.filter((l) => l.status !== 'merged'), ...data.listings.filter((l) => l.status === 'merged')];

  await db.transaction(async (trx) => {
    await trx('import_runs').del();
    // One statement removes both ends of every merged_into reference.
    await trx('listings').del();
    await trx('native_posts').del();
    await trx('sources').del();

    await insertBatches(trx, 'sources', data.sources);
    // jsonb columns get JSON text: node-postgres would send a JS array as a PostgreSQL array.
    await insertBatches(trx, 'native_posts', data.nativePosts.map((p) => ({ ...p, images: JSON.stringify(p.images) })));
    await insertBatches(trx, 'listings', listings.map((l) => ({ ...l, images: JSON.stringify(l.images) })));
    await insertBatches(
      trx,
      'import_runs',
      data.importRuns.map((r) => ({ ...r, counts: JSON.stringify(r.counts), rejects: JSON.stringify(r.rejects) })),
    );
  });
  // Fresh statistics, so the first queries on the new data get sensible plans.
  await db.raw('ANALYZE listings');

  return { active: data.listings.filter((l) => l.status === 'active').length, total: data.listings.length };
}

async function insertBatches(trx: Knex.Transaction, table: string, rows: object[]): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) await trx(table).insert(rows.slice(i, i + BATCH));
}
