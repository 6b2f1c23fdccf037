import { z } from 'zod';
import { LISTING_TYPES } from '../../domain/listing.js';
import { LOW_SAMPLE_BELOW, ROOMS_TOP_BUCKET, SUPPRESS_BELOW } from '../../domain/market.js';
import { dateParam, enumParam, intParam, textParamOpenApi, textParamRule } from '../validate.js';
import { communeParam } from './listings.js';
import { timestamp } from './responses.js';

// The query parameters and responses of /api/v1/market/prices and /api/v1/market/history
// (src/http/routes/market.ts); the OpenAPI document is generated from them.

export const MARKET_INTERVALS = ['week', 'month'] as const;
export type MarketInterval = (typeof MARKET_INTERVALS)[number];

const listingTypeParam = enumParam(LISTING_TYPES, { caseInsensitive: true }, {
  description: 'Type of listing the figures are of. SALE figures are asking prices (avg_price_eur…), the others monthly rents (avg_rent_eur…).',
  default: 'RENT',
});
const roomsParam = intParam(0, ROOMS_TOP_BUCKET, {
  description: `Only listings with this many rooms; ${ROOMS_TOP_BUCKET} means ${ROOMS_TOP_BUCKET} or more. Listings whose rooms are unknown count only when rooms is absent.`,
  example: 2,
});

export const marketPricesQuery = z.object({
  commune: communeParam
    .meta({
      queryParam: {
        schema: textParamOpenApi(100),
        description:
          `A commune in any of its forms (Luxembourg, Lëtzebuerg, Luxemburg), or a locality or quarter (Kirchberg), whose figures the record then gives, naming it in locality. Figures are kept per locality: a name that several localities bear (Bonnevoie, Bruch) gives a record for each, in its commune, as the listings filter matches them all. ${textParamRule(100)}`,
        example: 'Strassen',
      },
    })
    .optional(),
  listing_type: listingTypeParam.optional(),
  rooms: roomsParam.optional(),
});

export const marketHistoryQueryShape = z.object({
  commune: communeParam.meta({
    queryParam: {
      schema: textParamOpenApi(100),
      description: `The commune, in any of its forms (Luxembourg, Lëtzebuerg, Luxemburg). History is kept per commune: a locality or quarter is 400 naming its commune. ${textParamRule(100)}`,
      example: 'Strassen',
    },
  }),
  listing_type: listingTypeParam.optional(),
  rooms: roomsParam.optional(),
  interval: enumParam(MARKET_INTERVALS, { caseInsensitive: true }, {
    description: 'Length of a period: ISO week (Monday to Sunday) or calendar month. A period’s figures are those of the last daily snapshot taken in it (within from..to).',
    default: 'month',
  }).optional(),
  from: dateParam({ description: 'First day, inclusive (UTC). Default: the start of the period 11 months (month) or 25 weeks (week) before to’s.', example: '2025-12-01' }).optional(),
  to: dateParam({ description: 'Last day, inclusive (UTC). Default: today.', example: '2026-11-30' }).optional(),
});

export const MAX_HISTORY_DAYS = 3700; // about ten years

// What is wrong with the range from..to (as given, or with the route's defaults), or null.
export function historyRangeProblem(from: string, to: string): string | null {
  if (from > to) return `must not be after to (${from} > ${to})`;
  if ((Date.parse(to) - Date.parse(from)) / 86_400_000 > MAX_HISTORY_DAYS) return `must be at most ${MAX_HISTORY_DAYS} days before to (${to})`;
  return null;
}

// Both given: checked with the other parameters (every problem in one answer); otherwise the
// route checks the range once it has its defaults (to: today).
export const marketHistoryQuery = marketHistoryQueryShape.superRefine((q, ctx) => {
  const problem = q.from !== undefined && q.to !== undefined ? historyRangeProblem(q.from, q.to) : null;
  if (problem) ctx.addIssue({ code: 'custom', path: ['from'], message: problem });
});

const eur = (description: string) => z.int().nullable().meta({ description });
const perM2 = (description: string) => z.number().nullable().meta({ description: `${description}; EUR per m² per listing with an area > 0, in cents` });
const common = {
  listing_type: z.enum(LISTING_TYPES),
  rooms: z.int().nullable().meta({ description: `The rooms asked for (${ROOMS_TOP_BUCKET}: ${ROOMS_TOP_BUCKET} or more); null when not split by rooms` }),
  listings: z.int().meta({ description: 'Listings counted: active, unflagged, of this type (and rooms)' }),
  listings_with_area: z.int().meta({ description: 'Of those, listings with an area > 0: the per-m² figures’ sample' }),
  low_sample: z.boolean().meta({ description: `true when fewer than ${LOW_SAMPLE_BELOW} listings stand behind the figures (listings: the money figures; the per-m² ones rest on listings_with_area, which may be fewer)` }),
  avg_price_per_m2_eur: perM2('Average'),
  median_price_per_m2_eur: perM2('Median (percentile_cont)'),
  p25_price_per_m2_eur: perM2('First quartile (percentile_cont)'),
  p75_price_per_m2_eur: perM2('Third quartile (percentile_cont)'),
};
const SUPPRESSED = `Figures rest on at least ${SUPPRESS_BELOW} listings (the per-m² ones on ${SUPPRESS_BELOW} with an area); below that they are null and the counts stay.`;

const rentFields = {
  ...common,
  avg_rent_eur: eur('Average monthly rent, whole euros'),
  median_rent_eur: eur('Median monthly rent (percentile_cont), whole euros'),
  p25_rent_eur: eur('First quartile of the monthly rent'),
  p75_rent_eur: eur('Third quartile of the monthly rent'),
};
const saleFields = {
  ...common,
  avg_price_eur: eur('Average asking price, whole euros'),
  median_price_eur: eur('Median asking price (percentile_cont), whole euros'),
  p25_price_eur: eur('First quartile of the asking price'),
  p75_price_eur: eur('Third quartile of the asking price'),
};
const place = {
  commune: z.string(),
  locality: z.string().optional().meta({ description: 'Present when the commune parameter named a quarter or locality' }),
};

export const marketRecordSchema = z
  .object({ ...place, ...rentFields })
  .meta({ id: 'MarketRecord', description: `Rental figures of a commune (RENT, SUBLET, FLATSHARE). ${SUPPRESSED}` });
export const marketSaleRecordSchema = z
  .object({ ...place, ...saleFields })
  .meta({ id: 'MarketSaleRecord', description: `Sale figures of a commune (SALE). ${SUPPRESSED}` });

export const marketPricesSchema = z
  .object({
    data: z.array(z.union([marketRecordSchema, marketSaleRecordSchema])),
    meta: z.object({
      listing_type: z.enum(LISTING_TYPES),
      rooms: z.int().nullable(),
      last_updated: timestamp.nullable(),
    }),
  })
  .meta({ id: 'MarketPrices' });

const period = {
  period: z.string().meta({ description: 'The period: 2026-11 (month) or 2026-W47 (ISO week)', example: '2026-11' }),
  period_start: z.string().meta({ format: 'date', example: '2026-11-01' }),
  period_end: z.string().meta({ format: 'date', example: '2026-11-30' }),
  snapshot_date: z.string().meta({ format: 'date', description: 'The day of the snapshot the figures are from: the last taken in the period (within from..to)', example: '2026-11-23' }),
};
export const marketHistoryRentRecordSchema = z.object({ ...period, ...rentFields }).meta({ id: 'MarketHistoryRecord', description: `A period of a rental type. ${SUPPRESSED}` });
export const marketHistorySaleRecordSchema = z.object({ ...period, ...saleFields }).meta({ id: 'MarketHistorySaleRecord', description: `A period of SALE. ${SUPPRESSED}` });

export const marketHistorySchema = z
  .object({
    data: z.array(z.union([marketHistoryRentRecordSchema, marketHistorySaleRecordSchema])).meta({
      description: 'One record per period that has a snapshot, oldest first; periods without one are left out',
    }),
    meta: z.object({
      commune: z.string(),
      listing_type: z.enum(LISTING_TYPES),
      rooms: z.int().nullable(),
      interval: z.enum(MARKET_INTERVALS),
      from: z.string().meta({ format: 'date' }),
      to: z.string().meta({ format: 'date' }),
      last_snapshot_at: timestamp.nullable().meta({ description: 'When the latest snapshot (of any day) was taken' }),
    }),
  })
  .meta({ id: 'MarketHistory' });

export type ApiMarketPrices = z.infer<typeof marketPricesSchema>;
export type ApiMarketHistory = z.infer<typeof marketHistorySchema>;
