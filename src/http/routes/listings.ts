import { Router } from 'express';
import type { Knex } from 'knex';
import { SEES_FLAGGED } from '../../domain/tiers.js';
import type { Gazetteer } from '../../reference/gazetteer.js';
import { lastUpdated, iso } from '../../repositories/freshness.js';
import type { ApiCaches } from '../../cache/api-caches.js';
import { currentDataVersion } from '../../repositories/data-version.js';
import type { ListingFilter, Sort } from '../../domain/search.js';
import { countListings, findActiveListing, findActiveListingsByIds, findListingsPage, type PublicListingRow } from '../../repositories/listings.js';
import type { ListingIndex } from '../../read-model/listing-index.js';
import type { ListingReadModel } from '../../read-model/read-model.js';
import { resolveCommuneParam } from '../commune-param.js';
import { ApiError } from '../errors.js';
import { cachedBody } from '../../cache/cached-body.js';
import { sendCachedBody } from '../send-cached-body.js';
import { presentListing, type ApiListing } from '../present.js';
import { listingsQuery, listingsQueryShape } from '../schemas/listings.js';
import { validateQuery } from '../validate.js';

const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

interface ListingsPageBody {
  data: ApiListing[];
  meta: { total: number; page: number; per_page: number; sort: string; last_updated: string | null };
}

// RFC 8288 links to the first, previous, next and last pages, keeping the other parameters.
export function linkHeader(base: string, query: Record<string, string>, page: number, perPage: number, total: number): string {
  const last = Math.max(1, Math.ceil(total / perPage));
  const href = (p: number) => {
    const qs = new URLSearchParams({ ...query, page: String(p), per_page: String(perPage) });
    return `<${base}?${qs.toString()}>`;
  };
  const links = [`${href(1)}; rel="first"`];
  if (page > 1) links.push(`${href(Math.min(page - 1, last))}; rel="prev"`);
  if (page < last) links.push(`${href(page + 1)}; rel="next"`);
  links.push(`${href(last)}; rel="last"`);
  return links.join(', ');
}

// A page through the read model: the exact total and the page's ids from memory, the rows
// by primary key. Null when a row of the page is no longer what the index holds (the data
// moved on since the version was read): the caller then asks SQL.
async function pageFromIndex(
  db: Knex,
  index: ListingIndex,
  filter: ListingFilter,
  opts: { sort: Sort; page: number; perPage: number; total: number },
): Promise<PublicListingRow[] | null> {
  const found = index.page(filter, opts.sort, (opts.page - 1) * opts.perPage, opts.perPage, opts.total);
  const ids = found.rows.map((i) => index.id(i));
  const rows = await findActiveListingsByIds(db, ids, filter.includeFlagged);
  if (rows.length !== ids.length) return null;
  if (found.distances) rows.forEach((r, k) => (r.distance_km = found.distances![k]));
  return rows;
}

export function listingsRouter(deps: { db: Knex; gazetteer: Gazetteer; baseUrl: string; caches: ApiCaches; readModel?: ListingReadModel }): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    const q = validateQuery(listingsQueryShape, req.query, listingsQuery);
    const seesFlagged = SEES_FLAGGED[res.locals.apiKey!.tier];
    if (q.flagged !== undefined && !seesFlagged) {
      throw new ApiError({
        status: 403,
        code: 'forbidden_for_tier',
        detail: 'The flagged parameter needs a Pro or Enterprise key',
        errors: [{ param: 'flagged', message: 'is available to Pro and Enterprise keys only' }],
      });
    }
    const place = q.commune !== undefined ? resolveCommuneParam(deps.gazetteer, q.commune) : undefined;
    const geo = q.lat !== undefined && q.lng !== undefined && q.radius_km !== undefined ? { lat: q.lat, lng: q.lng, radiusKm: q.radius_km } : undefined;
    const filter: ListingFilter = {
      communes: place?.communes,
      locality: place?.locality,
      minPrice: q.min_price,
      maxPrice: q.max_price,
      minRooms: q.min_rooms,
      listingType: q.listing_type,
      source: q.source,
      studentOnly: q.student === true,
      geo,
      includeFlagged: seesFlagged,
      flagged: q.flagged,
    };
    const page = q.page ?? 1;
    const perPage = q.per_page ?? 20;
    const sort = q.sort ?? (geo ? 'distance' : '-createdAt');
    // Answers are cached per data version (read with the key): exact, since the version moves
    // with every committed write. The total is cached per filter, so paging counts once.
    const version = res.locals.dataVersion ?? (await currentDataVersion(deps.db));
    const body = await deps.caches.pages.get(version, JSON.stringify([filter, sort, page, perPage]), async () => {
      // The read model, when it holds exactly this version; else PostgreSQL.
      const index = deps.readModel?.at(version) ?? null;
      const countKey = JSON.stringify(filter);
      let rows: PublicListingRow[] | null = null;
      let total = 0;
      let updated: Date | null = null;
      if (index) {
        const updatedP = deps.caches.freshness.get(version, 'last_updated', () => lastUpdated(deps.db));
        total = await deps.caches.counts.get(version, countKey, async () => index.count(filter));
        [rows, updated] = await Promise.all([pageFromIndex(deps.db, index, filter, { sort, page, perPage, total }), updatedP]);
      }
      if (!rows) {
        [rows, total, updated] = await Promise.all([
          findListingsPage(deps.db, filter, { sort, page, perPage }),
          deps.caches.counts.get(version, countKey, () => countListings(deps.db, filter)),
          deps.caches.freshness.get(version, 'last_updated', () => lastUpdated(deps.db)),
        ]);
      }
      const payload: ListingsPageBody = {
        data: rows.map((r) => presentListing(r, { baseUrl: deps.baseUrl, showFlags: seesFlagged })),
        meta: { total, page, per_page: perPage, sort, last_updated: iso(updated) },
      };
      return cachedBody(payload, { total });
    });
    res.setHeader('Link', linkHeader(`${deps.baseUrl}/api/v1/listings`, req.query as Record<string, string>, page, perPage, body.total!));
    sendCachedBody(req, res, body);
  });

  router.get('/:id', async (req, res) => {
    validateQuery(listingsQueryShape.pick({}), req.query);
    const id = req.params.id;
    const seesFlagged = SEES_FLAGGED[res.locals.apiKey!.tier];
    const version = res.locals.dataVersion ?? (await currentDataVersion(deps.db));
    const body = ID_PATTERN.test(id)
      ? await deps.caches.listings.get(version, `${seesFlagged}:${id}`, async () => {
          const row = await findActiveListing(deps.db, id, seesFlagged);
          return row ? cachedBody(presentListing(row, { baseUrl: deps.baseUrl, showFlags: seesFlagged })) : null;
        })
      : null;
    if (!body) throw new ApiError({ status: 404, code: 'not_found', detail: `No active listing with id ${JSON.stringify(id.slice(0, 64))}` });
    sendCachedBody(req, res, body);
  });

  return router;
}
