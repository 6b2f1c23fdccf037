import { Router } from 'express';
import type { Knex } from 'knex';
import { readAt, type ReadsAt } from '../../db/read-replica.js';
import type { ApiCaches } from '../../cache/api-caches.js';
import { cachedJson } from '../../cache/cached-body.js';
import { SEES_FLAGGED } from '../../domain/tiers.js';
import { cutText } from '../../lib/text.js';
import type { Gazetteer } from '../../reference/gazetteer.js';
import { findListingFate } from '../../repositories/changes.js';
import type { ListingRows } from '../../services/listing-rows.js';
import type { ListingSearch, SearchRequest } from '../../services/listing-search.js';
import { resolveCommuneParam } from '../commune-param.js';
import { dataVersion } from '../data-version.js';
import { ApiError } from '../errors.js';
import { writeListing, writeListingsPage } from '../present.js';
import { listingsQuery, listingsQueryShape, type ListingsQuery } from '../schemas/listings.js';
import { sendCachedBody } from '../send-cached-body.js';
import { validateQuery } from '../validate.js';

const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const noParams = listingsQueryShape.pick({});

// RFC 8288 links to the first, previous, next and last pages, keeping the other parameters
// (the query string without page and per_page is encoded once, not once per link).
export function linkHeader(base: string, query: Record<string, string>, page: number, perPage: number, total: number): string {
  const last = Math.max(1, Math.ceil(total / perPage));
  const kept: Record<string, string> = {};
  for (const k of Object.keys(query)) if (k !== 'page' && k !== 'per_page') kept[k] = query[k];
  const rest = new URLSearchParams(kept).toString();
  const prefix = `<${base}?${rest}${rest ? '&' : ''}page=`;
  const href = (p: number) => `${prefix}${p}&per_page=${perPage}>`;
  const links = [`${href(1)}; rel="first"`];
  if (page > 1) links.push(`${href(Math.min(page - 1, last))}; rel="prev"`);
  if (page < last) links.push(`${href(page + 1)}; rel="next"`);
  links.push(`${href(last)}; rel="last"`);
  return links.join(', ');
}

// The validated query as a search: the filter, and the defaults for what it leaves out.
export function searchRequest(q: ListingsQuery, opts: { gazetteer: Gazetteer; seesFlagged: boolean }): SearchRequest {
  const place = q.commune !== undefined ? resolveCommuneParam(opts.gazetteer, q.commune) : undefined;
  const geo = q.lat !== undefined && q.lng !== undefined && q.radius_km !== undefined ? { lat: q.lat, lng: q.lng, radiusKm: q.radius_km } : undefined;
  return {
    filter: {
      communes: place?.every?.communes ?? place?.communes,
      localities: place?.every?.localities,
      minPrice: q.min_price,
      maxPrice: q.max_price,
      minRooms: q.min_rooms,
      listingType: q.listing_type,
      source: q.source,
      studentOnly: q.student === true,
      geo,
      includeFlagged: opts.seesFlagged,
      flagged: q.flagged,
    },
    sort: q.sort ?? (geo ? 'distance' : '-createdAt'),
    page: q.page ?? 1,
    perPage: q.per_page ?? 20,
  };
}

// 404 for a listing id: what became of it when it was merged into another or withdrawn
// (merged_into, withdrawn_at), so that a client holding the id learns where it went.
async function listingNotFound(db: Knex, id: string, seesFlagged: boolean): Promise<ApiError> {
  const quoted = JSON.stringify(cutText(id, 64));
  const fate = ID_PATTERN.test(id) ? await findListingFate(db, id, seesFlagged) : null;
  if (fate?.status === 'merged' && fate.mergedInto) {
    return new ApiError({
      status: 404,
      code: 'not_found',
      detail: `Listing ${quoted} was merged into ${fate.mergedInto}, which lists the same property`,
      extensions: { merged_into: fate.mergedInto },
    });
  }
  if (fate?.status === 'inactive') {
    return new ApiError({
      status: 404,
      code: 'not_found',
      detail: `Listing ${quoted} was withdrawn by its source`,
      extensions: fate.removedAt ? { withdrawn_at: fate.removedAt.toISOString() } : {},
    });
  }
  return new ApiError({ status: 404, code: 'not_found', detail: `No active listing with id ${quoted}` });
}

export function listingsRouter(deps: { db: Knex; reads?: ReadsAt; search: ListingSearch; rows: ListingRows; gazetteer: Gazetteer; baseUrl: string; caches: ApiCaches }): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    const seesFlagged = SEES_FLAGGED[res.locals.apiKey!.tier];
    const known = res.locals.dataVersion;
    // The same request (same path and query, same kind of key) at the same version: the answer
    // and its Link header as they were sent before, without validating the query again.
    const urlKey = (seesFlagged ? 'f' : 'n') + req.url;
    const seen = known !== undefined ? deps.caches.pageUrls.peek(known, urlKey) : undefined;
    if (seen) {
      res.setHeader('Link', seen.link);
      sendCachedBody(req, res, seen.body);
      return;
    }
    const q = validateQuery(listingsQueryShape, req.query, listingsQuery);
    if (q.flagged !== undefined && !seesFlagged) {
      throw new ApiError({
        status: 403,
        code: 'forbidden_for_tier',
        detail: 'The flagged parameter needs a Pro or Enterprise key',
        errors: [{ param: 'flagged', message: 'is available to Pro and Enterprise keys only' }],
      });
    }
    const request = searchRequest(q, { gazetteer: deps.gazetteer, seesFlagged });
    // Answers are cached per data version (read with the key): exact, since the version moves
    // with every committed write.
    const version = await dataVersion(res, deps.db);
    const { filter, sort, page, perPage } = request;
    const body = await deps.caches.pages.get(version, JSON.stringify([filter, sort, page, perPage]), async () => {
      const found = await deps.search.search(version, request);
      return cachedJson(writeListingsPage(found, request, { baseUrl: deps.baseUrl, showFlags: seesFlagged }), { total: found.total });
    });
    const link = linkHeader(`${deps.baseUrl}/api/v1/listings`, req.query as Record<string, string>, page, perPage, body.total!);
    void deps.caches.pageUrls.get(version, urlKey, async () => ({ body, link }));
    res.setHeader('Link', link);
    sendCachedBody(req, res, body);
  });

  router.get('/:id', async (req, res) => {
    validateQuery(noParams, req.query);
    const id = req.params.id;
    const seesFlagged = SEES_FLAGGED[res.locals.apiKey!.tier];
    const version = await dataVersion(res, deps.db);
    const body = ID_PATTERN.test(id)
      ? await deps.caches.listings.get(version, `${seesFlagged}:${id}`, async () => {
          const [listing] = await readAt(deps.reads, deps.db, version, (db) => deps.rows.find(db, [id], seesFlagged));
          return listing ? cachedJson(writeListing(listing, { baseUrl: deps.baseUrl, showFlags: seesFlagged })) : null;
        })
      : null;
    if (!body) throw await listingNotFound(deps.db, id, seesFlagged);
    sendCachedBody(req, res, body);
  });

  return router;
}
