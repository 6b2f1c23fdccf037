import type { Knex } from 'knex';
import type { ReadsAt } from '../db/read-replica.js';
import type { ApiCaches } from '../cache/api-caches.js';
import type { ListingFilter, Sort } from '../domain/search.js';
import type { ListingReadModel } from '../read-model/read-model.js';
import { countListings, findListingsPage, type PublicListingRow } from '../repositories/listings.js';
import type { ListingRows } from './listing-rows.js';
import { lastUpdatedAt } from './last-updated.js';

export interface SearchRequest {
  filter: ListingFilter;
  sort: Sort;
  page: number;
  perPage: number;
}

export interface SearchResult {
  rows: PublicListingRow[];
  // On a geo search answered by the read model: the distance of each row (rows[k] is at
  // distances[k]), kept beside the rows, which are shared and never modified. From SQL, each
  // row carries its own distance_km.
  distances?: number[];
  total: number; // exact
  lastUpdated: Date | null;
}

export interface ListingSearch {
  // One page of the listings matching a filter, as they stand at data version `version`.
  search(version: number, request: SearchRequest): Promise<SearchResult>;
}

type ListingIndex = NonNullable<ReturnType<ListingReadModel['at']>>;

// The listing search: from the in-memory read model when it holds exactly the version the
// request read, else from PostgreSQL; both give the same answer (test/api/read-model.test.ts
// checks them against each other). The total is cached per filter and version, so paging
// through a result counts once.
export function createListingSearch(deps: { db: Knex; reads?: ReadsAt; caches: Pick<ApiCaches, 'counts' | 'freshness'>; readModel?: ListingReadModel; rows: ListingRows }): ListingSearch {
  const at = (version: number) => deps.reads?.(version) ?? deps.db;
  const total = (version: number, filter: ListingFilter, count: () => Promise<number>) => deps.caches.counts.get(version, JSON.stringify(filter), count);

  // The exact total and the page's ids from memory, the rows by primary key. Null when a row
  // of the page is no longer what the index holds (the data moved on since the version was
  // read): the caller then asks SQL.
  async function pageFromIndex(index: ListingIndex, r: SearchRequest, matching: number): Promise<Pick<SearchResult, 'rows' | 'distances'> | null> {
    const found = index.page(r.filter, r.sort, (r.page - 1) * r.perPage, r.perPage, matching);
    const ids = found.rows.map((i) => index.id(i));
    const rows = await deps.rows.find(at(index.version), ids, r.filter.includeFlagged);
    if (rows.length !== ids.length) return null;
    return { rows, distances: found.distances };
  }

  return {
    async search(version, r) {
      const index = deps.readModel?.at(version) ?? null;
      if (index) {
        const updated = lastUpdatedAt(deps, version);
        const matching = await total(version, r.filter, async () => index.count(r.filter));
        const [page, lastUpdated] = await Promise.all([pageFromIndex(index, r, matching), updated]);
        if (page) return { ...page, total: matching, lastUpdated };
      }
      const [rows, matching, lastUpdated] = await Promise.all([
        findListingsPage(at(version), r.filter, { sort: r.sort, page: r.page, perPage: r.perPage }),
        total(version, r.filter, () => countListings(at(version), r.filter)),
        lastUpdatedAt(deps, version),
      ]);
      return { rows, total: matching, lastUpdated };
    },
  };
}
