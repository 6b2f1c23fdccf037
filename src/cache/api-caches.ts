import { VersionedCache } from './versioned-cache.js';
import { cachedBodyWeight, type CachedBody } from './cached-body.js';

// The answers the API may reuse while the data version stays the same (one set per app),
// kept serialized (and compressed on demand). Bounded so the caches stay within ~30 MB (pages
// are cheap to recompute with the listings read model; a body shared by `pages` and `pageUrls`
// is counted in both). The page caches were 16 MB each until the read model's rows by type
// (about 5 MB at 1,000,000 listings) came: 12 MB each keeps a worker's peak where it was.
export interface ApiCaches {
  pages: VersionedCache<CachedBody>;
  // A page answer by the request's own path and query (and whether the key sees flags): a
  // repeated request skips validation and the page's Link header is computed once.
  pageUrls: VersionedCache<{ body: CachedBody; link: string }>;
  listings: VersionedCache<CachedBody | null>;
  counts: VersionedCache<number>;
  market: VersionedCache<CachedBody>;
  // Keyed by the snapshots' version (src/repositories/market-snapshots.ts), not the data's.
  marketHistory: VersionedCache<CachedBody>;
  stats: VersionedCache<CachedBody>;
  freshness: VersionedCache<Date | null>;
}

export function createApiCaches(): ApiCaches {
  const MB = 1024 * 1024;
  return {
    pages: new VersionedCache<CachedBody>(5_000, cachedBodyWeight, 12 * MB),
    // Weighed with the body it keeps alive: the pages cache may have let go of it already.
    pageUrls: new VersionedCache<{ body: CachedBody; link: string }>(5_000, (e) => cachedBodyWeight(e.body) + 2 * e.link.length + 200, 12 * MB),
    listings: new VersionedCache<CachedBody | null>(20_000, (b) => (b ? cachedBodyWeight(b) : 1), 12 * MB),
    counts: new VersionedCache<number>(10_000),
    market: new VersionedCache<CachedBody>(500, cachedBodyWeight, 4 * MB),
    marketHistory: new VersionedCache<CachedBody>(2_000, cachedBodyWeight, 4 * MB),
    stats: new VersionedCache<CachedBody>(4),
    freshness: new VersionedCache<Date | null>(4),
  };
}
