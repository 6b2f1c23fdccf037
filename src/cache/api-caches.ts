import { VersionedCache } from './versioned-cache.js';
import type { MarketRecord } from '../repositories/market.js';
import type { Stats } from '../repositories/stats.js';

// The answers the API may reuse while the data version stays the same (one set per app).
export interface ApiCaches {
  counts: VersionedCache<number>;
  market: VersionedCache<MarketRecord[]>;
  stats: VersionedCache<Stats>;
  freshness: VersionedCache<Date | null>;
}

export function createApiCaches(): ApiCaches {
  return {
    counts: new VersionedCache<number>(10_000),
    market: new VersionedCache<MarketRecord[]>(500),
    stats: new VersionedCache<Stats>(4),
    freshness: new VersionedCache<Date | null>(4),
  };
}
