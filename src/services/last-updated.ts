import type { Knex } from 'knex';
import { readAt, type ReadsAt } from '../db/read-replica.js';
import type { ApiCaches } from '../cache/api-caches.js';
import { lastUpdated } from '../repositories/freshness.js';

// meta.last_updated at a data version: read once per version, shared by every answer.
// `reads`: where reads at a version may go (src/db/read-replica.ts); by default the database.
export function lastUpdatedAt(deps: { db: Knex; reads?: ReadsAt; caches: Pick<ApiCaches, 'freshness'> }, version: number): Promise<Date | null> {
  return deps.caches.freshness.get(version, 'last_updated', () => readAt(deps.reads, deps.db, version, (db) => lastUpdated(db)));
}
