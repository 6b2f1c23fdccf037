import type { Knex } from 'knex';

// Resolves when the database answers a trivial query (the readiness check).
export async function pingDatabase(db: Knex): Promise<void> {
  await db.raw('SELECT 1');
}
