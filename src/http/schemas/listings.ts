import { z } from 'zod';
import { LISTING_TYPES } from '../../domain/listing.js';
import { boolParam, enumParam, intParam, numberParam, textParam } from '../validate.js';

export const INT4_MAX = 2_147_483_647;
export const SORTS = ['price', '-price', 'size', '-size', 'createdAt', '-createdAt', 'distance'] as const;
export type Sort = (typeof SORTS)[number];

export const listingsQueryShape = z.object({
  commune: textParam(100).optional(),
  min_price: intParam(0, INT4_MAX).optional(),
  max_price: intParam(0, INT4_MAX).optional(),
  min_rooms: intParam(0, 1000).optional(),
  listing_type: enumParam(LISTING_TYPES, { caseInsensitive: true }).optional(),
  source: textParam(64).optional(),
  student: boolParam().optional(),
  flagged: boolParam().optional(),
  lat: numberParam(-90, 90).optional(),
  lng: numberParam(-180, 180).optional(),
  radius_km: numberParam(0, 100, { exclusiveMin: true }).optional(),
  page: intParam(1, 1_000_000).optional(),
  per_page: intParam(1, 100).optional(),
  sort: enumParam(SORTS).optional(),
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
