import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/context.js';
import { bearer, insertListing } from '../helpers/factory.js';
import { countedListings, recompute, type MarketListing } from '../helpers/market.js';

const t = useTestContext({ app: 'api', keys: ['free'] });
let counted: MarketListing[];

// A small deterministic generator, so that the data has no convenient round numbers.
let state = 20261124;
const rand = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const between = (lo: number, hi: number) => Math.round(lo + rand() * (hi - lo));

// Strassen RENT by rooms: 2 rooms 10 listings (not low_sample), 3 rooms 9 (low_sample),
// 4 rooms 3 (published), 1 room 2 (suppressed), 5, 6 and 7 rooms 2 each (5+: 6), rooms
// unknown 4 (counted only without rooms); plus flagged, inactive and other types beside.
const STRASSEN_RENT_ROOMS: [number | null, number][] = [[1, 2], [2, 10], [3, 9], [4, 3], [5, 2], [6, 2], [7, 2], [null, 4]];

beforeAll(async () => {
  const add = (commune: string, listing_type: string, rooms: number | null, extra: Record<string, unknown> = {}) => {
    const area = rand() < 0.2 ? (rand() < 0.5 ? null : 0) : between(18, 160);
    const price = listing_type === 'SALE' ? between(250_000, 1_900_000) : between(600, 4800);
    return insertListing(t.db, { commune, listing_type: listing_type as 'RENT', rooms, area_m2: area, price_eur: price, ...extra });
  };
  for (const [rooms, n] of STRASSEN_RENT_ROOMS) for (let i = 0; i < n; i++) await add('Strassen', 'RENT', rooms);
  for (let i = 0; i < 7; i++) await add('Strassen', 'SALE', between(1, 6));
  for (let i = 0; i < 4; i++) await add('Strassen', 'FLATSHARE', 1);
  await add('Strassen', 'SUBLET', 2);
  for (let i = 0; i < 12; i++) await add('Mamer', 'RENT', between(0, 4));
  for (let i = 0; i < 2; i++) await add('Mamer', 'SALE', 3);
  // Not counted: flagged or not active.
  await add('Strassen', 'RENT', 2, { flags: ['price_outlier'], price_eur: 99_000 });
  await add('Strassen', 'RENT', 2, { status: 'inactive', removed_at: new Date(), price_eur: 1 });
  // Strassen, 3 with an area exactly: per-m2 figures published on the edge.
  await insertListing(t.db, { commune: 'Bertrange', listing_type: 'RENT', rooms: 2, price_eur: 1000, area_m2: 40 });
  await insertListing(t.db, { commune: 'Bertrange', listing_type: 'RENT', rooms: 2, price_eur: 1300, area_m2: null });
  await insertListing(t.db, { commune: 'Bertrange', listing_type: 'RENT', rooms: 2, price_eur: 1700, area_m2: 50 });
  counted = await countedListings(t.db);
});

const get = (path: string) => request(t.app).get(path).set(bearer(t.keys.free));
const strip = ({ commune: _c, locality: _l, ...rest }: Record<string, unknown>) => rest;

describe('GET /api/v1/market/prices by type and rooms', () => {
  it('gives every figure as recomputed from the listings, for every type and rooms bucket', async () => {
    for (const type of ['RENT', 'SALE', 'FLATSHARE', 'SUBLET']) {
      for (const rooms of [null, 0, 1, 2, 3, 4, 5]) {
        const res = await get(`/api/v1/market/prices?listing_type=${type}${rooms === null ? '' : `&rooms=${rooms}`}`);
        expect(res, `${type} ${rooms}`).toHaveStatus(200);
        expect(res.body.meta).toMatchObject({ listing_type: type, rooms });
        const expected = [...new Set(counted.filter((l) => l.listing_type === type).map((l) => l.commune))]
          .map((c) => ({ commune: c, ...recompute(counted, c, type, rooms) }) as { commune: string; listings?: unknown })
          .filter((r) => (r.listings as number) > 0);
        const byCommune = (a: { commune: string }, b: { commune: string }) => a.commune.localeCompare(b.commune, 'fr');
        expect(res.body.data, `${type} rooms=${rooms}`).toEqual(expected.sort(byCommune));
      }
    }
  });

  it('suppresses at 2 listings, publishes at 3, flags low_sample at 9 and not at 10; rooms=5 means 5 or more', async () => {
    const strassen = async (rooms: number) => (await get(`/api/v1/market/prices?commune=Strassen&rooms=${rooms}`)).body.data[0];
    const two = await strassen(1);
    expect(two).toMatchObject({ listings: 2, low_sample: true, avg_rent_eur: null, median_rent_eur: null, p25_rent_eur: null, p75_rent_eur: null, median_price_per_m2_eur: null });
    const three = await strassen(4);
    expect(three.listings).toBe(3);
    expect(three.median_rent_eur).not.toBeNull();
    expect(three.low_sample).toBe(true);
    expect((await strassen(3))).toMatchObject({ listings: 9, low_sample: true });
    expect((await strassen(2))).toMatchObject({ listings: 10, low_sample: false });
    const fivePlus = await strassen(5);
    expect(fivePlus).toMatchObject({ rooms: 5, listings: 6 });
    expect(fivePlus).toEqual({ commune: 'Strassen', ...recompute(counted, 'Strassen', 'RENT', 5) });
    // Without rooms: every counted rental, those with unknown rooms included.
    const all = (await get('/api/v1/market/prices?commune=Strassen')).body.data[0];
    expect(all).toMatchObject({ rooms: null, listings: 34 });
  });

  it('publishes per-m2 figures on 3 listings with an area, rent figures on all listings', async () => {
    const res = await get('/api/v1/market/prices?commune=Bertrange');
    expect(strip(res.body.data[0])).toEqual(recompute(counted, 'Bertrange', 'RENT', null));
    expect(res.body.data[0]).toMatchObject({ listings: 3, listings_with_area: 2, median_rent_eur: 1300, p25_rent_eur: 1150, p75_rent_eur: 1500, median_price_per_m2_eur: null });
  });

  it('names SALE money fields price, not rent', async () => {
    const res = await get('/api/v1/market/prices?commune=Strassen&listing_type=sale');
    expect(res).toHaveStatus(200);
    const r = res.body.data[0];
    expect(r).toHaveProperty('median_price_eur');
    expect(r).not.toHaveProperty('median_rent_eur');
    expect(r.median_price_eur).toBeGreaterThan(100_000);
    // 2 sales in Mamer: suppressed, the count stays.
    const mamer = await get('/api/v1/market/prices?commune=Mamer&listing_type=SALE');
    expect(mamer.body.data[0]).toMatchObject({ commune: 'Mamer', listings: 2, avg_price_eur: null, median_price_eur: null });
  });

  it('refuses bad listing_type and rooms with 400 problems naming the parameter', async () => {
    for (const [query, param, message] of [
      ['listing_type=LEASE', 'listing_type', 'must be one of RENT, SALE, SUBLET, FLATSHARE'],
      ['rooms=6', 'rooms', 'must be between 0 and 5'],
      ['rooms=-1', 'rooms', 'must not be negative'],
      ['rooms=two', 'rooms', 'must be a whole number'],
      ['rooms=2&rooms=3', 'rooms', 'was given more than once'],
    ]) {
      const res = await get(`/api/v1/market/prices?${query}`);
      expect(res, query).toHaveStatus(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.code).toBe('invalid_parameter');
      expect(res.body.errors[0]).toEqual({ param, message: expect.stringContaining(message) });
    }
    const unknown = await get('/api/v1/market/prices?bedrooms=2');
    expect(unknown).toHaveStatus(400);
    expect(unknown.body.code).toBe('unknown_parameter');
  });

  it('is cached per data version: a new listing changes the next answer', async () => {
    const before = (await get('/api/v1/market/prices?commune=Strassen&rooms=4')).body.data[0];
    expect(before.listings).toBe(3);
    await insertListing(t.db, { commune: 'Strassen', listing_type: 'RENT', rooms: 4, price_eur: 2222, area_m2: 70 });
    const after = (await get('/api/v1/market/prices?commune=Strassen&rooms=4')).body.data[0];
    expect(after.listings).toBe(4);
    counted = await countedListings(t.db);
    expect(after).toEqual({ commune: 'Strassen', ...recompute(counted, 'Strassen', 'RENT', 4) });
  });
});
