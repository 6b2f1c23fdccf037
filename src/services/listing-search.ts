import type { Knex } from 'knex';
import { readAt, type ReadsAt } from '../db/read-replica.js';
import type { ApiCaches } from '../cache/api-caches.js';
import type { ListingFilter, Sort } from '../domain/search.js';
import type { ReadModel } from '../read-model/queries.js';
import { countListings, findListingsPage } from '../repositories/listings.js';
import { listingJsonOf, type ListingJson, type ListingRows } from './listing-rows.js';
import { lastUpdatedAt } from './last-updated.js';

export interface SearchRequest {
  filter: ListingFilter;
  sort: Sort;
  page: number;
  perPage: number;
}

export interface SearchResult {
  listings: ListingJson[];
  // On a geo search: the distance of each listing (listings[k] is at distances[k]), kept
  // beside the listings, which are shared and never modified.
  distances?: number[];
  total: number; // exact
  lastUpdated: Date | null;
}

export interface ListingSearch {
  // One page of the listings matching a filter, as they stand at data version `version`.
  search(version: number, request: SearchRequest): Promise<SearchResult>;
}

// The listing search: from the in-memory read model when it holds exactly the version the
// request read, else from PostgreSQL; both give the same answer (test/api/read-model.test.ts
// checks them against each other). The total is cached per filter and version, so paging
// through a result counts once.
export function createListingSearch(deps: { db: Knex; reads?: ReadsAt; caches: Pick<ApiCaches, 'counts' | 'freshness'>; readModel?: ReadModel; rows: ListingRows }): ListingSearch {
  const at = <T>(version: number, read: (db: Knex) => Promise<T>) => readAt(deps.reads, deps.db, version, read);
  const total = (version: number, filter: ListingFilter, count: () => Promise<number>) => deps.caches.counts.get(version, JSON.stringify(filter), count);

  // The exact total and the page's ids from the read model, the rows by primary key. Null when
  // the read model does not hold the version, or a row of the page is no longer what the index
  // holds (the data moved on since the version was read): the caller then asks SQL.
  async function fromReadModel(model: ReadModel, version: number, r: SearchRequest): Promise<SearchResult | null> {
    const key = JSON.stringify(r.filter);
    const known = deps.caches.counts.peek(version, key);
    const found = await model.query(version, { filter: r.filter, sort: r.sort, offset: (r.page - 1) * r.perPage, limit: r.perPage, total: known });
    if (!found) return null;
    if (known === undefined) void deps.caches.counts.get(version, key, async () => found.total);
    const [listings, lastUpdated] = await Promise.all([at(version, (db) => deps.rows.find(db, found.ids, r.filter.includeFlagged)), lastUpdatedAt(deps, version)]);
    if (listings.length !== found.ids.length) return null;
    return { listings, distances: found.distances, total: found.total, lastUpdated };
  }

  return {
    async search(version, r) {
      const fromIndex = deps.readModel ? await fromReadModel(deps.readModel, version, r) : null;
      if (fromIndex) return fromIndex;
      const [rows, matching, lastUpdated] = await Promise.all([
        at(version, (db) => findListingsPage(db, r.filter, { sort: r.sort, page: r.page, perPage: r.perPage })),
        total(version, r.filter, () => at(version, (db) => countListings(db, r.filter))),
        lastUpdatedAt(deps, version),
      ]);
      return { listings: rows.map(listingJsonOf), distances: r.filter.geo ? rows.map((row) => row.distance_km!) : undefined, total: matching, lastUpdated };
    },
  };
}
