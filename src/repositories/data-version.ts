import type { Knex } from 'knex';

// The version of the public data (migrations/20261122003000_data_version.ts): one indexed single-row
// read, taken before any cached answer is used.
export async function currentDataVersion(db: Knex): Promise<number> {
  const row = await db('data_state').select('version').first();
  return Number(row?.version ?? 0);
}
