import type { ListingType } from './listing.js';

// Market figures (GET /api/v1/market/prices and /market/history, the /market page): the rules
// that turn the figures computed from a group of listings into what is published.

// Figures of fewer listings than this are not published (null); the record keeps its count.
export const SUPPRESS_BELOW = 3;
// Figures of fewer listings than this are published with low_sample: true.
export const LOW_SAMPLE_BELOW = 10;
// rooms=5 means 5 rooms or more.
export const ROOMS_TOP_BUCKET = 5;

// What SQL computes for one group (src/repositories/market.ts): money in whole euros,
// per-m² figures in cents, quartiles and medians with percentile_cont (continuous: the mean
// of the two middle values for an even count).
export interface MarketFigures {
  listings: number;
  listings_with_area: number;
  avg_price: number | null;
  p25_price: number | null;
  median_price: number | null;
  p75_price: number | null;
  avg_per_m2: number | null;
  p25_per_m2: number | null;
  median_per_m2: number | null;
  p75_per_m2: number | null;
}

export const NO_FIGURES: MarketFigures = {
  listings: 0,
  listings_with_area: 0,
  avg_price: null,
  p25_price: null,
  median_price: null,
  p75_price: null,
  avg_per_m2: null,
  p25_per_m2: null,
  median_per_m2: null,
  p75_per_m2: null,
};

interface Common {
  listing_type: ListingType;
  rooms: number | null;
  listings: number;
  listings_with_area: number;
  low_sample: boolean;
}
interface PerM2 {
  avg_price_per_m2_eur: number | null;
  median_price_per_m2_eur: number | null;
  p25_price_per_m2_eur: number | null;
  p75_price_per_m2_eur: number | null;
}
export interface RentFigures extends Common, PerM2 {
  avg_rent_eur: number | null;
  median_rent_eur: number | null;
  p25_rent_eur: number | null;
  p75_rent_eur: number | null;
}
export interface SaleFigures extends Common, PerM2 {
  avg_price_eur: number | null;
  median_price_eur: number | null;
  p25_price_eur: number | null;
  p75_price_eur: number | null;
}
export type PublishedFigures = RentFigures | SaleFigures;

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

// Published figures: suppressed below SUPPRESS_BELOW listings (the per-m² ones below
// SUPPRESS_BELOW listings with an area), low_sample below LOW_SAMPLE_BELOW listings. SALE
// names its money fields price, the rental types rent. Key order: the fields /market/prices
// always had first.
export function publishFigures(f: MarketFigures, listingType: ListingType, rooms: number | null): PublishedFigures {
  const listings = Number(f.listings);
  const withArea = Number(f.listings_with_area);
  const money = listings >= SUPPRESS_BELOW;
  const perM2 = money && withArea >= SUPPRESS_BELOW;
  const m = (v: unknown) => (money ? num(v) : null);
  const a = (v: unknown) => (perM2 ? num(v) : null);
  const common = { listing_type: listingType, rooms, listings_with_area: withArea, low_sample: listings < LOW_SAMPLE_BELOW };
  if (listingType === 'SALE') {
    return {
      listings,
      avg_price_eur: m(f.avg_price),
      avg_price_per_m2_eur: a(f.avg_per_m2),
      median_price_eur: m(f.median_price),
      median_price_per_m2_eur: a(f.median_per_m2),
      p25_price_eur: m(f.p25_price),
      p75_price_eur: m(f.p75_price),
      p25_price_per_m2_eur: a(f.p25_per_m2),
      p75_price_per_m2_eur: a(f.p75_per_m2),
      ...common,
    };
  }
  return {
    listings,
    avg_rent_eur: m(f.avg_price),
    avg_price_per_m2_eur: a(f.avg_per_m2),
    median_rent_eur: m(f.median_price),
    median_price_per_m2_eur: a(f.median_per_m2),
    p25_rent_eur: m(f.p25_price),
    p75_rent_eur: m(f.p75_price),
    p25_price_per_m2_eur: a(f.p25_per_m2),
    p75_price_per_m2_eur: a(f.p75_per_m2),
    ...common,
  };
}

// Periods of the history: ISO weeks (Monday to Sunday, labelled 2026-W47) or calendar months
// (labelled 2026-11), over UTC days written YYYY-MM-DD.
export type MarketInterval = 'week' | 'month';

const DAY_MS = 86_400_000;
const day = (s: string) => new Date(`${s}T00:00:00Z`);
const ymd = (d: Date) => d.toISOString().slice(0, 10);
// Date.UTC, but for every year: Date.UTC reads years 0-99 as 1900-1999.
const utc = (year: number, month: number, date: number) => {
  const d = new Date(0);
  d.setUTCFullYear(year, month, date);
  return d;
};

export function periodStart(interval: MarketInterval, date: string): string {
  const d = day(date);
  if (interval === 'month') return ymd(utc(d.getUTCFullYear(), d.getUTCMonth(), 1));
  return ymd(new Date(d.getTime() - ((d.getUTCDay() + 6) % 7) * DAY_MS));
}

export function describePeriod(interval: MarketInterval, start: string): { period: string; period_start: string; period_end: string } {
  const s = day(start);
  if (interval === 'month') {
    const end = utc(s.getUTCFullYear(), s.getUTCMonth() + 1, 0);
    return { period: start.slice(0, 7), period_start: start, period_end: ymd(end) };
  }
  const thursday = new Date(s.getTime() + 3 * DAY_MS);
  const isoYear = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - utc(isoYear, 0, 1).getTime()) / (7 * DAY_MS)) + 1;
  return { period: `${isoYear}-W${String(week).padStart(2, '0')}`, period_start: start, period_end: ymd(new Date(s.getTime() + 6 * DAY_MS)) };
}

// The first day any date parameter may name (PostgreSQL has no year 0; nothing the service
// holds is older than this).
export const EARLIEST_DAY = '1900-01-01';

// from..to of a history request: to defaults to today; from to the start of the period 11
// months (month) or 25 weeks (week) before to's, so that the default is 12 months or 26 weeks,
// but never before EARLIEST_DAY (a from given before it is refused by the parameter's check).
export function historyRange(interval: MarketInterval, today: string, q: { from?: string; to?: string }): { from: string; to: string } {
  const to = q.to ?? today;
  if (q.from) return { from: q.from, to };
  const start = day(periodStart(interval, to));
  const from =
    interval === 'month' ? utc(start.getUTCFullYear(), start.getUTCMonth() - 11, 1) : new Date(start.getTime() - 25 * 7 * DAY_MS);
  const fromDay = ymd(from);
  return { from: fromDay < EARLIEST_DAY ? EARLIEST_DAY : fromDay, to };
}

export function utcDay(d: Date): string {
  return ymd(d);
}
