import type { Knex } from 'knex';
import type { ApiCaches } from '../cache/api-caches.js';
import { lastUpdated } from '../repositories/freshness.js';

// meta.last_updated at a data version: read once per version, shared by every answer.
export function lastUpdatedAt(deps: { db: Knex; caches: Pick<ApiCaches, 'freshness'> }, version: number): Promise<Date | null> {
  return deps.caches.freshness.get(version, 'last_updated', () => lastUpdated(deps.db));
}
