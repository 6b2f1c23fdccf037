import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/context.js';
import { bearer, ensureSource, insertListing } from '../helpers/factory.js';

const t = useTestContext({ app: 'api', keys: ['free'] });

beforeAll(async () => {
  const rent = (commune: string, price_eur: number, area_m2: number | null, extra = {}) =>
    insertListing(t.db, { commune, price_eur, area_m2, listing_type: 'RENT', source: 'agency-a', ...extra });
  // Mamer: 4 counted rentals
  await rent('Mamer', 1000, 50); // 20.00 /m2
  await rent('Mamer', 2000, 80); // 25.00 /m2
  await rent('Mamer', 1500, null); // no area: counts for rent, not per m2
  await rent('Mamer', 3000, 0); // area 0: not per m2
  // not counted
  await rent('Mamer', 9999, 40, { flags: ['price_outlier'] });
  await rent('Mamer', 5000, 40, { status: 'inactive', removed_at: new Date() });
  await insertListing(t.db, { commune: 'Mamer', listing_type: 'SALE', price_eur: 800000, area_m2: 90, source: 'agency-b' });
  await insertListing(t.db, { commune: 'Mamer', listing_type: 'FLATSHARE', price_eur: 700, area_m2: 15, source: 'agency-b' });
  await insertListing(t.db, { commune: 'Mamer', listing_type: 'SUBLET', price_eur: 1900, area_m2: 60, source: 'native', source_url: null });
  // Rounding: 1001.5 -> 1002; 1000/30 = 33.333.. -> 33.33
  await rent('Bertrange', 1001, 30);
  await rent('Bertrange', 1002, 30);
  // Sorted by name with French collation: Pétange < Préizerdaul < Putscheid
  await rent('Putscheid', 900, 45);
  await rent('Pétange', 1200, 60, { locality: 'Rodange' });
  await rent('Préizerdaul', 1100, 55);
});

describe('GET /api/v1/market/prices', () => {
  it('computes averages and medians from active unflagged rentals, sorted by commune name', async () => {
    const res = await request(t.app).get('/api/v1/market/prices').set(bearer(t.keys.free));
    expect(res).toHaveStatus(200);
    expect(res.body.meta.listing_type).toBe('RENT');
    expect(res.body.data.map((r: { commune: string }) => r.commune)).toEqual(['Bertrange', 'Mamer', 'Pétange', 'Préizerdaul', 'Putscheid']);
    const mamer = res.body.data.find((r: { commune: string }) => r.commune === 'Mamer');
    // 2 of the 4 have an area > 0: too few for per-m2 figures (suppressed under 3).
    expect(mamer).toEqual({
      commune: 'Mamer',
      listings: 4,
      avg_rent_eur: 1875,
      avg_price_per_m2_eur: null,
      median_rent_eur: 1750,
      median_price_per_m2_eur: null,
      p25_rent_eur: 1375,
      p75_rent_eur: 2250,
      p25_price_per_m2_eur: null,
      p75_price_per_m2_eur: null,
      listing_type: 'RENT',
      rooms: null,
      listings_with_area: 2,
      low_sample: true,
    });
    const bertrange = res.body.data.find((r: { commune: string }) => r.commune === 'Bertrange');
    // 2 rentals: the figures are suppressed, the count stays.
    expect(bertrange).toMatchObject({
      commune: 'Bertrange',
      listings: 2,
      avg_rent_eur: null,
      avg_price_per_m2_eur: null,
      median_rent_eur: null,
      median_price_per_m2_eur: null,
      low_sample: true,
    });
  });

  it('restricts to one commune in any of its forms; a commune with no rentals gives one empty record', async () => {
    const one = await request(t.app).get('/api/v1/market/prices?commune=mamer').set(bearer(t.keys.free));
    expect(one.body.data).toHaveLength(1);
    expect(one.body.data[0].avg_rent_eur).toBe(1875);
    const lb = await request(t.app).get(`/api/v1/market/prices?commune=${encodeURIComponent('Péiteng')}`).set(bearer(t.keys.free));
    expect(lb.body.data[0]).toMatchObject({ commune: 'Pétange', listings: 1, avg_rent_eur: null });
    const none = await request(t.app).get('/api/v1/market/prices?commune=Vianden').set(bearer(t.keys.free));
    expect(none).toHaveStatus(200);
    expect(none.body.data).toEqual([
      {
        commune: 'Vianden', listings: 0, avg_rent_eur: null, avg_price_per_m2_eur: null, median_rent_eur: null, median_price_per_m2_eur: null,
        p25_rent_eur: null, p75_rent_eur: null, p25_price_per_m2_eur: null, p75_price_per_m2_eur: null,
        listing_type: 'RENT', rooms: null, listings_with_area: 0, low_sample: true,
      },
    ]);
  });

  it('is live: a new rental changes the next answer', async () => {
    await insertListing(t.db, { commune: 'Putscheid', listing_type: 'RENT', price_eur: 1100, area_m2: 55, source: 'agency-a' });
    await insertListing(t.db, { commune: 'Putscheid', listing_type: 'RENT', price_eur: 1000, area_m2: 50, source: 'agency-a' });
    const res = await request(t.app).get('/api/v1/market/prices?commune=Putscheid').set(bearer(t.keys.free));
    expect(res.body.data[0]).toMatchObject({ listings: 3, avg_rent_eur: 1000, median_rent_eur: 1000, avg_price_per_m2_eur: 20 });
  });
});

describe('GET /api/v1/stats', () => {
  it('counts every active listing by source and commune, with per-source freshness and Cache-Control', async () => {
    await ensureSource(t.db, 'agency-c'); // a source that never imported
    await t.db('import_runs').insert([
      { source: 'agency-a', mode: 'full', status: 'ok', started_at: '2026-11-20T09:00:00Z', finished_at: '2026-11-20T09:05:00.123Z' },
      { source: 'agency-a', mode: 'full', status: 'failed', started_at: '2026-11-21T09:00:00Z', finished_at: '2026-11-21T09:01:00Z' },
      { source: 'agency-b', mode: 'delta', status: 'ok', started_at: '2026-11-21T07:00:00Z', finished_at: '2026-11-21T07:00:30.500Z' },
    ]);
    const res = await request(t.app).get('/api/v1/stats');
    expect(res).toHaveStatus(200);
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    // Active: Mamer 4 rent + 1 flagged + sale + flatshare + sublet = 8, Bertrange 2, Putscheid 3, Pétange 1, Préizerdaul 1
    expect(res.body.total_active).toBe(15);
    expect(res.body.flagged).toBe(1);
    expect(res.body.by_source).toEqual([
      { source: 'agency-a', active: 12 },
      { source: 'agency-b', active: 2 },
      { source: 'native', active: 1 },
    ]);
    expect(res.body.by_commune[0]).toEqual({ commune: 'Mamer', active: 8 });
    expect(res.body.by_commune).toHaveLength(5);
    expect(res.body.sources).toEqual([
      { source: 'agency-a', last_import_at: '2026-11-20T09:05:00.123Z', status: 'failed' },
      { source: 'agency-b', last_import_at: '2026-11-21T07:00:30.500Z', status: 'ok' },
      { source: 'agency-c', last_import_at: null, status: 'never' },
      { source: 'native', last_import_at: null, status: 'never' },
    ]);
    expect(res.body.last_updated).toBe('2026-11-21T07:00:30.500Z');
  });

  it('meta.last_updated is the later of the last successful import and the last native post change', async () => {
    await t.db('native_posts').insert({
      id: 'np_1', title: 'x', price_eur: 1000, commune_text: 'Mamer', listing_type: 'RENT', updated_at: '2026-11-21T08:00:00.000Z', created_at: '2026-11-21T08:00:00.000Z',
    });
    const res = await request(t.app).get('/api/v1/listings?per_page=1').set(bearer(t.keys.free));
    expect(res.body.meta.last_updated).toBe('2026-11-21T08:00:00.000Z');
    const stats = await request(t.app).get('/api/v1/stats');
    expect(stats.body.last_updated).toBe('2026-11-21T08:00:00.000Z');
    expect(stats.body.sources.find((s: { source: string }) => s.source === 'native')).toEqual({
      source: 'native', last_import_at: '2026-11-21T08:00:00.000Z', status: 'ok',
    });
  });
});
