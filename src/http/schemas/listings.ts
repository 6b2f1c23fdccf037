import { z } from 'zod';
import { LISTING_TYPES } from '../../domain/listing.js';
import { SORTS } from '../../domain/search.js';
import { boolParam, enumParam, intParam, numberParam, textParam } from '../validate.js';

export const INT4_MAX = 2_147_483_647;

export const communeParam = textParam(100, {
  description:
    'A commune in any of its forms (letter case, accents, hyphens/spaces, French, Luxembourgish or German name: Luxembourg, Lëtzebuerg, Luxemburg), or a locality or quarter (Kirchberg, Belvaux), which matches that locality only (a name that several localities bear, such as Bonnevoie, matches each of them). An unknown name is 400 with up to 3 suggestions.',
  example: 'Luxembourg',
});

export const listingsQueryShape = z.object({
  commune: communeParam.optional(),
  min_price: intParam(0, INT4_MAX, { description: 'Lower bound of price_eur, inclusive. Must not exceed max_price.', example: 1500 }).optional(),
  max_price: intParam(0, INT4_MAX, { description: 'Upper bound of price_eur, inclusive.', example: 3000 }).optional(),
  min_rooms: intParam(0, 1000, { description: 'Minimum number of rooms; listings with unknown rooms never match.', example: 2 }).optional(),
  listing_type: enumParam(LISTING_TYPES, { caseInsensitive: true }, { description: 'Type of listing.' }).optional(),
  source: textParam(64, { description: 'Feed name, or native for posts made on the service. Any letter case.', example: 'native' }).optional(),
  student: boolParam({ description: 'true: only student-friendly listings; false or absent: no filter.' }).optional(),
  flagged: boolParam({ description: 'Pro and Enterprise keys only (403 forbidden_for_tier otherwise): true only flagged listings, false only clean ones.' }).optional(),
  lat: numberParam(-90, 90, {}, { description: 'Centre latitude of a geo search; lat, lng and radius_km go together.', example: 49.6116 }).optional(),
  lng: numberParam(-180, 180, {}, { description: 'Centre longitude of a geo search.', example: 6.1319 }).optional(),
  radius_km: numberParam(0, 100, { exclusiveMin: true }, { description: 'Radius of a geo search in km (great-circle distance, boundary inclusive).', example: 2 }).optional(),
  page: intParam(1, 1_000_000, { description: 'Page number. A page past the end returns data: [] and the true total.', default: 1 }).optional(),
  per_page: intParam(1, 100, { description: 'Page size; out of range is 400, never clamped.', default: 20 }).optional(),
  sort: enumParam(SORTS, {}, {
    description: 'A leading minus means descending. size sorts by area_m2; distance needs a geo search. Default: distance for a geo search, else -createdAt. Nulls last; ties broken by id.',
  }).optional(),
});

const GEO = ['lat', 'lng', 'radius_km'] as const;

export const listingsQuery = listingsQueryShape.superRefine((q, ctx) => {
  if (q.min_price !== undefined && q.max_price !== undefined && q.min_price > q.max_price) {
    ctx.addIssue({ code: 'custom', path: ['min_price'], message: `must not be greater than max_price (${q.min_price} > ${q.max_price})` });
  }
  const given = GEO.filter((p) => q[p] !== undefined);
  if (given.length > 0 && given.length < GEO.length) {
    for (const p of GEO.filter((p) => q[p] === undefined)) {
      ctx.addIssue({ code: 'custom', path: [p], message: 'is required for a geo search: lat, lng and radius_km go together' });
    }
  }
  if (q.sort === 'distance' && given.length < GEO.length) {
    ctx.addIssue({ code: 'custom', path: ['sort'], message: 'distance needs a geo search (lat, lng and radius_km)' });
  }
});

export type ListingsQuery = z.infer<typeof listingsQueryShape>;
