import { VersionedCache } from './versioned-cache.js';
import type { ApiListing } from '../http/present.js';
import type { MarketRecord } from '../repositories/market.js';
import type { PublicListingRow } from '../repositories/listings.js';
import type { Stats } from '../repositories/stats.js';

export interface ListingsBody {
  data: ApiListing[];
  meta: { total: number; page: number; per_page: number; sort: string; last_updated: string | null };
}

// The answers the API may reuse while the data version stays the same (one set per app).
// Bounded so that the whole cache stays within a few tens of MB.
export interface ApiCaches {
  pages: VersionedCache<ListingsBody>;
  listings: VersionedCache<PublicListingRow | null>;
  counts: VersionedCache<number>;
  market: VersionedCache<MarketRecord[]>;
  stats: VersionedCache<Stats>;
  freshness: VersionedCache<Date | null>;
}

export function createApiCaches(): ApiCaches {
  return {
    // Weighed by listings held: at most 20,000 listing objects (about 20 MB).
    pages: new VersionedCache<ListingsBody>(5_000, (b) => Math.max(1, b.data.length), 20_000),
    listings: new VersionedCache<PublicListingRow | null>(10_000),
    counts: new VersionedCache<number>(10_000),
    market: new VersionedCache<MarketRecord[]>(500),
    stats: new VersionedCache<Stats>(4),
    freshness: new VersionedCache<Date | null>(4),
  };
}
