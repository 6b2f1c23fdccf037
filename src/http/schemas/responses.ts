import { z } from 'zod';
import { FLAGS, LISTING_TYPES } from '../../domain/listing.js';
import { SORTS } from '../../domain/search.js';

// The shapes of every response: the handlers are typed against them and the OpenAPI
// document is generated from them (the `id` of each becomes a components/schemas entry).

export const timestamp = z.string().meta({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds', example: '2026-11-21T09:15:02.123Z' });

export const listingSchema = z
  .object({
    id: z.string().meta({ description: 'Opaque id, stable for a (source, external_id) across re-imports', example: 'lst_3f9a0c1d2e4b5a6c7d8e' }),
    url: z.string().meta({ format: 'uri', description: 'The listing’s public page on this service' }),
    source: z.string().meta({ description: 'Feed name, or native for posts made on the service', example: 'capital-homes' }),
    external_id: z.string().meta({ description: 'Identifier of the listing in its source feed', example: 'CH-1042' }),
    title: z.string(),
    price_eur: z.int().meta({ description: 'Monthly rent in EUR for RENT, SUBLET and FLATSHARE; asking price for SALE', example: 1850 }),
    area_m2: z.number().nullable().meta({ description: 'Area in square metres; null when the source did not give it', example: 74 }),
    rooms: z.int().nullable().meta({ example: 3 }),
    commune: z.string().meta({ description: 'One of the 100 communes, official name', example: 'Sanem' }),
    locality: z.string().nullable().meta({ description: 'Village or quarter when known', example: 'Belvaux' }),
    lat: z.number().nullable().meta({ example: 49.5127 }),
    lng: z.number().nullable().meta({ example: 5.9301 }),
    listing_type: z.enum(LISTING_TYPES),
    accepts_students: z.boolean(),
    images: z.array(z.string().meta({ format: 'uri' })),
    source_url: z.string().nullable().meta({ description: "The origin page at the agency; null for native posts and for an agency's listing whose feed gives no link" }),
    created_at: timestamp,
    updated_at: timestamp,
    flags: z.array(z.enum(FLAGS)).optional().meta({ description: 'Pro and Enterprise keys only; empty when clean' }),
    distance_km: z.number().optional().meta({ description: 'Geo searches only: great-circle distance from the centre, 3 decimals' }),
  })
  .meta({ id: 'Listing' });

export const listingsPageSchema = z
  .object({
    data: z.array(listingSchema),
    meta: z.object({
      total: z.int().meta({ description: 'Number of listings matching the request (exact)' }),
      page: z.int(),
      per_page: z.int(),
      // The values of the sort parameter (src/http/schemas/listings.ts): the one asked for, or the default.
      sort: z.enum(SORTS).meta({ description: 'The sort used: the sort parameter, or its default (distance for a geo search, else -createdAt)' }),
      last_updated: timestamp.nullable().meta({ description: 'Freshness of the data: the latest successful import or native post change' }),
    }),
  })
  .meta({ id: 'ListingsPage' });

const cursorDoc = {
  description: 'Opaque position in the changes feed: pass it back as since. Keep it as it is (it is not a number or a date).',
  example: 'Mi40MjEuLi43YThiOTBhNg',
};

export const changeSchema = z
  .union([
    z
      .object({
        op: z.literal('upsert'),
        id: z.string(),
        listing: listingSchema.meta({ description: 'The listing as GET /listings/{id} shows it to this key now' }),
      })
      .meta({ id: 'ChangeUpsert' }),
    z
      .object({
        op: z.literal('delete'),
        id: z.string(),
        reason: z.enum(['withdrawn', 'merged', 'hidden']).meta({
          description:
            'withdrawn: no longer listed by its source; merged: a duplicate of another listing (merged_into), which the feed carries; hidden: flagged, and this tier does not see flagged listings (it comes back as an upsert when the flag goes)',
        }),
        merged_into: z.string().optional().meta({ description: 'reason merged only: the id of the listing it was merged into' }),
      })
      .meta({ id: 'ChangeDelete' }),
  ])
  .meta({ id: 'Change', description: 'A listing that became visible or changed (upsert), or is no longer visible to this key (delete)' });

export const changesPageSchema = z
  .object({
    data: z.array(changeSchema).meta({ description: 'In the order of the feed; a listing appears at most once a page, in its latest state' }),
    meta: z.object({
      next_cursor: z.string().meta(cursorDoc),
      has_more: z.boolean().meta({ description: 'true: ask again at once with next_cursor; false: you are up to date, store next_cursor for the next run' }),
      last_updated: timestamp.nullable().meta({ description: 'Freshness of the data: the latest successful import or native post change' }),
    }),
  })
  .meta({ id: 'ChangesPage' });

export const statsSchema = z
  .object({
    total_active: z.int(),
    flagged: z.int().meta({ description: 'How many of the active listings are flagged' }),
    by_source: z.array(z.object({ source: z.string(), active: z.int() })),
    by_commune: z.array(z.object({ commune: z.string(), active: z.int() })),
    last_updated: timestamp.nullable(),
    sources: z.array(
      z.object({
        source: z.string(),
        last_import_at: timestamp.nullable(),
        status: z.enum(['ok', 'failed', 'refused', 'never']).meta({ description: 'Outcome of the latest import' }),
      }),
    ),
  })
  .meta({ id: 'Stats' });

export const communesSchema = z
  .object({
    data: z.array(
      z.object({
        lau2: z.string(),
        name: z.string(),
        name_lb: z.string(),
        name_de: z.string(),
        canton: z.string(),
        canton_iso: z.string(),
        lat: z.number(),
        lng: z.number(),
        population: z.int().nullable(),
        localities: z.array(z.object({ name: z.string(), kind: z.enum(['locality', 'quarter']) })),
      }),
    ),
    meta: z.object({ total: z.int() }),
  })
  .meta({ id: 'Communes' });

export const ERROR_CODES = [
  'invalid_parameter',
  'unknown_parameter',
  'unauthorized',
  'invalid_key',
  'forbidden_for_tier',
  'not_found',
  'invalid_cursor',
  'method_not_allowed',
  'quota_exceeded',
  'rate_limited',
  'unavailable',
  'internal',
] as const;

export const problemSchema = z
  .object({
    type: z.string().meta({ example: 'about:blank' }),
    title: z.string(),
    status: z.int(),
    code: z.enum(ERROR_CODES),
    detail: z.string(),
    errors: z.array(z.object({ param: z.string(), message: z.string() })).optional(),
    suggestions: z.array(z.string()).optional().meta({ description: 'Close commune names, for an unknown commune' }),
    allowed_parameters: z.array(z.string()).optional(),
    merged_into: z.string().optional().meta({ description: 'GET /listings/{id} of a listing merged into another (a duplicate from another source): the id of the listing that carries it now' }),
    withdrawn_at: timestamp.optional().meta({ description: 'GET /listings/{id} of a listing its source no longer lists: when it was withdrawn' }),
    request_id: z.string().nullable(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });

export const healthSchema = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });
export const readinessSchema = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    checks: z.object({ database: z.enum(['ok', 'down']), redis: z.enum(['ok', 'down', 'refuses_writes', 'not_configured']) }),
    read_model: z
      .object({
        status: z.enum(['loading', 'loaded', 'off']),
        version: z.number().int().nullable().optional().meta({ description: 'The data version the read model holds' }),
        listings: z.number().int().optional(),
        last_load_ms: z.number().int().nullable().optional(),
        last_error: z.string().nullable().optional(),
        builds: z.number().int().optional().meta({ description: 'Loads completed since the process started' }),
        served: z.number().int().optional().meta({ description: 'Searches the read model answered since the process started (the rest: caches or SQL)' }),
      })
      .meta({ description: 'The in-memory read model of the active listings (informational: answers are exact without it, from SQL)' }),
  })
  .meta({ id: 'Readiness' });

// What the handlers build, checked by the compiler against the schemas the document shows.
export type ApiListing = z.infer<typeof listingSchema>;
export type ApiListingsPage = z.infer<typeof listingsPageSchema>;
export type ApiChange = z.infer<typeof changeSchema>;
export type ApiChangesPage = z.infer<typeof changesPageSchema>;
export type ApiStats = z.infer<typeof statsSchema>;
export type ApiCommunes = z.infer<typeof communesSchema>;
