import type { ListingFilter, Sort } from '../domain/search.js';
import type { ListingIndex } from './listing-index.js';

// What the listing search asks of the read model, whether it runs on the request thread
// (ListingReadModel, read-model.ts) or on a thread of its own (ReadModelThread, thread.ts).

export interface ReadModelStatus {
  version: number | null;
  listings: number;
  bytes: number;
  builds: number;
  // Queries the index answered.
  served: number;
  lastBuildMs: number | null;
  lastError: string | null;
}

// One page of a filter: rows [offset, offset + limit) in `sort` order. `total`: the filter's
// count when the caller knows it already (then it is not counted again).
export interface IndexQuery {
  filter: ListingFilter;
  sort: Sort;
  offset: number;
  limit: number;
  total?: number;
}

// The exact count and the page's listing ids (with their distances on a geo search).
export interface IndexAnswer {
  total: number;
  ids: string[];
  distances?: number[];
}

export interface ReadModel {
  // The answer at exactly `version`, or null when the read model does not hold that version
  // (the caller then asks SQL); a newer version schedules a rebuild.
  query(version: number, q: IndexQuery): Promise<IndexAnswer | null>;
  // The data moved on to `version` (a notification): schedules a rebuild.
  seen(version: number): void;
  // Starts the first load now (server start-up), without waiting for a request.
  warm(): void;
  // Resolves once an index at `version` or newer is loaded (tests and the benchmark).
  ready(version?: number): Promise<unknown>;
  info(): ReadModelStatus;
  close(): Promise<void>;
}

export function answerQuery(index: ListingIndex, q: IndexQuery): IndexAnswer {
  const total = q.total ?? index.count(q.filter);
  const found = index.page(q.filter, q.sort, q.offset, q.limit, total);
  const ids = found.rows.map((i) => index.id(i));
  return found.distances ? { total, ids, distances: found.distances } : { total, ids };
}
