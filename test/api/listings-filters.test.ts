import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ListingRow } from '../../src/domain/listing.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, insertListing, type ListingInput } from '../helpers/factory.js';

const t = useTestContext({ app: 'api', keys: ['starter'] });
const L: Record<string, ListingRow> = {};

const CENTRE = { lat: 49.6116, lng: 6.1319 };
const KM_PER_DEG = (6371.0088 * Math.PI) / 180;
// Due north of the centre, d km away along the meridian (haversine is exact there).
const north = (km: number) => ({ lat: CENTRE.lat + km / KM_PER_DEG, lng: CENTRE.lng });
const day = (d: number) => new Date(Date.UTC(2026, 10, d, 12, 0, 0, 0));

beforeAll(async () => {
  const fixtures: Record<string, ListingInput> = {
    lux_centre: { commune: 'Luxembourg', locality: 'Ville Haute', price_eur: 2000, rooms: 3, area_m2: 80, ...CENTRE, created_at: day(10) },
    lux_kirchberg: { commune: 'Luxembourg', locality: 'Kirchberg', price_eur: 2500, rooms: 2, area_m2: 60, ...north(1.999), created_at: day(11) },
    lux_far: { commune: 'Luxembourg', locality: 'Gare', price_eur: 1500, rooms: 1, area_m2: null, ...north(2.001), created_at: day(12), accepts_students: true },
    lux_nocoords: { commune: 'Luxembourg', price_eur: 1800, rooms: null, area_m2: 55, lat: null, lng: null, created_at: day(13) },
    lux_sale: { commune: 'Luxembourg', listing_type: 'SALE', price_eur: 950000, rooms: 4, area_m2: 120, ...north(0.5), created_at: day(14) },
    sanem_belvaux: { commune: 'Sanem', locality: 'Belvaux', price_eur: 1700, rooms: 3, area_m2: 74, lat: 49.5127, lng: 5.9301, created_at: day(9), source: 'capital-homes' },
    sanem_soleuvre: { commune: 'Sanem', locality: 'Soleuvre', price_eur: 1600, rooms: 3, area_m2: 70, lat: 49.52, lng: 5.94, created_at: day(8) },
    esch_flatshare: { commune: 'Esch-sur-Alzette', locality: 'Belval', listing_type: 'FLATSHARE', price_eur: 800, rooms: 1, area_m2: 15, lat: 49.5, lng: 5.95, created_at: day(7), accepts_students: true },
    petange_sublet: { commune: 'Pétange', listing_type: 'SUBLET', price_eur: 2000, rooms: 2, area_m2: 50, lat: 49.558, lng: 5.878, created_at: day(10), source: 'native', source_url: null },
    inactive: { commune: 'Luxembourg', price_eur: 2000, status: 'inactive', removed_at: day(15), created_at: day(15) },
  };
  for (const [name, input] of Object.entries(fixtures)) L[name] = await insertListing(t.db, { external_id: name, ...input });
  // A merged duplicate of lux_centre (another source) never shows.
  L.merged = await insertListing(t.db, { external_id: 'merged', source: 'other-agency', status: 'merged', merged_into: L.lux_centre.id, created_at: day(16) });
});

async function ids(qs: string): Promise<string[]> {
  const res = await request(t.app).get(`/api/v1/listings${qs}`).set(bearer(t.keys.starter));
  expect(res, qs).toHaveStatus(200);
  expect(res.body.meta.total, qs).toBeGreaterThanOrEqual(res.body.data.length);
  return res.body.data.map((l: { external_id: string }) => l.external_id);
}
const sorted = (a: string[]) => [...a].sort();

describe('listing filters', () => {
  it('lists only active listings, newest first by default, with meta', async () => {
    const res = await request(t.app).get('/api/v1/listings').set(bearer(t.keys.starter));
    expect(res.body.meta).toMatchObject({ total: 9, page: 1, per_page: 20 });
    expect(res.body.meta.last_updated === null || typeof res.body.meta.last_updated === 'string').toBe(true);
    expect(res.body.data.map((l: { external_id: string }) => l.external_id)).toEqual([
      'lux_sale',
      'lux_nocoords',
      'lux_far',
      'lux_kirchberg',
      // same created_at: tie broken by id
      ...['lux_centre', 'petange_sublet'].sort((a, b) => L[a].id.localeCompare(L[b].id)),
      'sanem_belvaux',
      'sanem_soleuvre',
      'esch_flatshare',
    ]);
  });

  it('returns every field of the listing object', async () => {
    const res = await request(t.app).get('/api/v1/listings?commune=Kirchberg').set(bearer(t.keys.starter));
    const l = res.body.data[0];
    expect(Object.keys(l).sort()).toEqual(
      [
        'id', 'url', 'source', 'external_id', 'title', 'price_eur', 'area_m2', 'rooms', 'commune', 'lat', 'lng', 'listing_type',
        'accepts_students', 'images', 'created_at', 'locality', 'source_url', 'updated_at',
      ].sort(),
    );
    expect(l.url).toBe(`https://api.example.test/listings/${L.lux_kirchberg.id}`);
    expect(l.created_at).toBe('2026-11-11T12:00:00.000Z');
    expect(l.images).toEqual([]);
    const nulls = await request(t.app).get('/api/v1/listings?commune=Gare').set(bearer(t.keys.starter));
    expect(nulls.body.data[0].area_m2).toBeNull();
  });

  it('matches communes regardless of case, accents, hyphens and language', async () => {
    const lux = sorted(['lux_centre', 'lux_kirchberg', 'lux_far', 'lux_nocoords', 'lux_sale']);
    for (const c of ['Luxembourg', 'luxembourg', 'LUXEMBOURG', 'Lëtzebuerg', 'letzebuerg', 'Luxemburg', 'Luxembourg-Ville']) {
      expect(sorted(await ids(`?commune=${encodeURIComponent(c)}`)), c).toEqual(lux);
    }
    for (const c of ['Esch-sur-Alzette', 'esch sur alzette', 'ESCH/ALZETTE', 'Esch-Uelzecht', 'Esch an der Alzette']) {
      expect(await ids(`?commune=${encodeURIComponent(c)}`), c).toEqual(['esch_flatshare']);
    }
    for (const c of ['Pétange', 'petange', 'PETANGE', 'Péiteng', 'Petingen']) {
      expect(await ids(`?commune=${encodeURIComponent(c)}`), c).toEqual(['petange_sublet']);
    }
  });

  it('matches a locality or quarter name to that locality only', async () => {
    expect(await ids('?commune=Kirchberg')).toEqual(['lux_kirchberg']);
    expect(await ids('?commune=kirchberg')).toEqual(['lux_kirchberg']);
    expect(await ids('?commune=Belvaux')).toEqual(['sanem_belvaux']);
    expect(await ids('?commune=Beles')).toEqual(['sanem_belvaux']);
    expect(sorted(await ids('?commune=Sanem'))).toEqual(['sanem_belvaux', 'sanem_soleuvre']);
    expect(await ids('?commune=Belval')).toEqual(['esch_flatshare']);
    expect(await ids('?commune=Luxembourg-Gare')).toEqual(['lux_far']);
  });

  it('filters by price bounds (inclusive), rooms, type, source and students', async () => {
    expect(sorted(await ids('?min_price=2000&max_price=2000'))).toEqual(sorted(['lux_centre', 'petange_sublet']));
    expect(sorted(await ids('?max_price=1600'))).toEqual(sorted(['lux_far', 'sanem_soleuvre', 'esch_flatshare']));
    expect(sorted(await ids('?min_price=2001'))).toEqual(sorted(['lux_kirchberg', 'lux_sale']));
    // rooms unknown (null) never satisfies a minimum
    expect(sorted(await ids('?min_rooms=3'))).toEqual(sorted(['lux_centre', 'lux_sale', 'sanem_belvaux', 'sanem_soleuvre']));
    expect(await ids('?listing_type=SALE')).toEqual(['lux_sale']);
    expect(await ids('?listing_type=flatshare')).toEqual(['esch_flatshare']);
    expect(await ids('?listing_type=Sublet')).toEqual(['petange_sublet']);
    expect(await ids('?source=native')).toEqual(['petange_sublet']);
    expect(await ids('?source=capital-homes')).toEqual(['sanem_belvaux']);
    expect(await ids('?source=no-such-feed')).toEqual([]);
    expect(sorted(await ids('?student=true'))).toEqual(sorted(['lux_far', 'esch_flatshare']));
    expect((await ids('?student=false')).length).toBe(9);
  });

  it('combines filters', async () => {
    expect(await ids('?commune=Luxembourg&listing_type=RENT&min_price=1900&max_price=3000&min_rooms=2')).toEqual(['lux_kirchberg', 'lux_centre']);
    expect(await ids('?commune=Sanem&min_price=1650')).toEqual(['sanem_belvaux']);
  });
});

describe('geo search', () => {
  it('includes 1.999 km and excludes 2.001 km for radius 2, sorted by distance with distance_km', async () => {
    const res = await request(t.app).get(`/api/v1/listings?lat=${CENTRE.lat}&lng=${CENTRE.lng}&radius_km=2`).set(bearer(t.keys.starter));
    expect(res).toHaveStatus(200);
    expect(res.body.data.map((l: { external_id: string }) => l.external_id)).toEqual(['lux_centre', 'lux_sale', 'lux_kirchberg']);
    expect(res.body.data.map((l: { distance_km: number }) => l.distance_km)).toEqual([0, 0.5, 1.999]);
    expect(res.body.meta.total).toBe(3);
    expect(res.body.meta.sort).toBe('distance');
  });

  it('is inclusive at the boundary and never matches listings without coordinates', async () => {
    const exact = north(1.5);
    await insertListing(t.db, { external_id: 'boundary', ...exact, created_at: day(1) });
    try {
      const got = await ids(`?lat=${CENTRE.lat}&lng=${CENTRE.lng}&radius_km=1.5`);
      expect(got).toContain('boundary');
      const wide = await ids(`?lat=${CENTRE.lat}&lng=${CENTRE.lng}&radius_km=100&per_page=100`);
      expect(wide).not.toContain('lux_nocoords');
      expect(wide.length).toBe(9); // all active with coordinates, incl. 'boundary'
    } finally {
      await t.db('listings').where({ external_id: 'boundary' }).del();
    }
  });

  it('combines with filters and other sorts', async () => {
    expect(await ids(`?lat=${CENTRE.lat}&lng=${CENTRE.lng}&radius_km=3&sort=-price`)).toEqual(['lux_sale', 'lux_kirchberg', 'lux_centre', 'lux_far']);
    expect(await ids(`?lat=${CENTRE.lat}&lng=${CENTRE.lng}&radius_km=3&listing_type=RENT&max_price=2000`)).toEqual(['lux_centre', 'lux_far']);
  });
});

describe('sorting and paging', () => {
  it('sorts by price both ways, ties by id', async () => {
    const asc = await ids('?sort=price');
    expect(asc[0]).toBe('esch_flatshare');
    expect(asc.at(-1)).toBe('lux_sale');
    const desc = await ids('?sort=-price');
    expect(desc[0]).toBe('lux_sale');
    const twoK = ['lux_centre', 'petange_sublet'].sort((a, b) => L[a].id.localeCompare(L[b].id));
    expect(asc.filter((x) => twoK.includes(x))).toEqual(twoK);
    expect(desc.filter((x) => twoK.includes(x))).toEqual(twoK);
  });

  it('sorts by size with nulls last in both directions', async () => {
    const asc = await ids('?sort=size');
    expect(asc[0]).toBe('esch_flatshare');
    expect(asc.at(-1)).toBe('lux_far');
    const desc = await ids('?sort=-size');
    expect(desc[0]).toBe('lux_sale');
    expect(desc.at(-1)).toBe('lux_far');
  });

  it('sorts by creation date both ways', async () => {
    expect((await ids('?sort=createdAt'))[0]).toBe('esch_flatshare');
    expect((await ids('?sort=-createdAt'))[0]).toBe('lux_sale');
  });

  it('pages stably: the pages of 2 concatenate to the full list, and past the end is empty with the true total', async () => {
    for (const sort of ['price', '-price', 'size', '-size', 'createdAt', '-createdAt']) {
      const all = await ids(`?sort=${sort}&per_page=100`);
      const paged: string[] = [];
      for (let page = 1; page <= 5; page++) paged.push(...(await ids(`?sort=${sort}&per_page=2&page=${page}`)));
      expect(paged, sort).toEqual(all);
    }
    const res = await request(t.app).get('/api/v1/listings?page=50&per_page=10').set(bearer(t.keys.starter));
    expect(res).toHaveStatus(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.meta).toMatchObject({ total: 9, page: 50, per_page: 10 });
  });
});

describe('live totals', () => {
  it('a committed change shows in the next answer (the cached count follows the data version)', async () => {
    const before = await request(t.app).get('/api/v1/listings?commune=Mamer').set(bearer(t.keys.starter));
    expect(before.body.meta.total).toBe(0);
    const trx = await t.db.transaction();
    try {
      await insertListing(trx as unknown as typeof t.db, { id: 'lst_live_1', external_id: 'live-1', commune: 'Mamer' });
      const during = await request(t.app).get('/api/v1/listings?commune=Mamer').set(bearer(t.keys.starter));
      expect(during.body.meta.total).toBe(0); // not committed yet
    } finally {
      await trx.commit();
    }
    const after = await request(t.app).get('/api/v1/listings?commune=Mamer').set(bearer(t.keys.starter));
    expect(after.body.meta.total).toBe(1);
    expect(after.body.data[0].id).toBe('lst_live_1');
    await t.db('listings').where({ id: 'lst_live_1' }).update({ status: 'inactive', removed_at: new Date() });
    const gone = await request(t.app).get('/api/v1/listings?commune=Mamer').set(bearer(t.keys.starter));
    expect(gone.body.meta.total).toBe(0);
    await t.db('listings').where({ id: 'lst_live_1' }).del();
  });
});

describe('single listing', () => {
  it('returns an active listing and 404 for inactive, merged or unknown ones', async () => {
    const ok = await request(t.app).get(`/api/v1/listings/${L.lux_centre.id}`).set(bearer(t.keys.starter));
    expect(ok).toHaveStatus(200);
    expect(ok.body).toMatchObject({ id: L.lux_centre.id, external_id: 'lux_centre', commune: 'Luxembourg', locality: 'Ville Haute', price_eur: 2000 });
    expect(ok.body.flags).toBeUndefined();
    for (const id of [L.inactive.id, L.merged.id, 'lst_00000000000000000000']) {
      const res = await request(t.app).get(`/api/v1/listings/${id}`).set(bearer(t.keys.starter));
      expect(res).toHaveStatus(404);
      expect(res.body.code).toBe('not_found');
    }
  });
});
