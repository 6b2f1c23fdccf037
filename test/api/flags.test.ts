import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ListingRow } from '../../src/domain/listing.js';
import type { Tier } from '../../src/domain/tiers.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, insertListing } from '../helpers/factory.js';

const t = useTestContext({ app: 'api', keys: ['free', 'starter', 'pro', 'enterprise'] });
let clean: ListingRow;
let outlier: ListingRow;
let dup: ListingRow;

beforeAll(async () => {
  clean = await insertListing(t.db, { external_id: 'clean', price_eur: 1500 });
  outlier = await insertListing(t.db, { external_id: 'outlier', price_eur: 90, flags: ['price_outlier'] });
  dup = await insertListing(t.db, { external_id: 'dup', price_eur: 1600, flags: ['possible_duplicate', 'stale'] });
});

const list = (tier: Tier, qs = '') => request(t.app).get(`/api/v1/listings${qs}`).set(bearer(t.keys[tier]));

describe('flagged data per tier (docs/spec/contract.md section 7)', () => {
  for (const tier of ['free', 'starter'] as const) {
    it(`${tier}: flagged listings are left out of lists, counts and single reads; no flags field`, async () => {
      const res = await list(tier);
      expect(res).toHaveStatus(200);
      expect(res.body.data.map((l: { external_id: string }) => l.external_id)).toEqual(['clean']);
      expect(res.body.meta.total).toBe(1);
      expect(res.body.data[0]).not.toHaveProperty('flags');
      const geo = await list(tier, '?lat=49.6116&lng=6.1319&radius_km=5');
      expect(geo.body.meta.total).toBe(1);
      for (const l of [outlier, dup]) {
        const one = await request(t.app).get(`/api/v1/listings/${l.id}`).set(bearer(t.keys[tier]));
        expect(one).toHaveStatus(404);
      }
      const ok = await request(t.app).get(`/api/v1/listings/${clean.id}`).set(bearer(t.keys[tier]));
      expect(ok).toHaveStatus(200);
      expect(ok.body).not.toHaveProperty('flags');
    });

    it(`${tier}: the flagged parameter is 403 forbidden_for_tier`, async () => {
      for (const v of ['true', 'false']) {
        const res = await list(tier, `?flagged=${v}`);
        expect(res).toHaveStatus(403);
        expect(res.body.code).toBe('forbidden_for_tier');
        expect(res.headers['content-type']).toMatch(/problem\+json/);
      }
    });
  }

  for (const tier of ['pro', 'enterprise'] as const) {
    it(`${tier}: sees flagged listings with their flags, and may filter on them`, async () => {
      const res = await list(tier, '?sort=price');
      expect(res.body.meta.total).toBe(3);
      const byId = Object.fromEntries(res.body.data.map((l: { external_id: string; flags: string[] }) => [l.external_id, l.flags]));
      expect(byId).toEqual({ clean: [], outlier: ['price_outlier'], dup: ['possible_duplicate', 'stale'] });
      const flagged = await list(tier, '?flagged=true&sort=price');
      expect(flagged.body.data.map((l: { external_id: string }) => l.external_id)).toEqual(['outlier', 'dup']);
      expect(flagged.body.meta.total).toBe(2);
      const unflagged = await list(tier, '?flagged=0');
      expect(unflagged.body.data.map((l: { external_id: string }) => l.external_id)).toEqual(['clean']);
      const one = await request(t.app).get(`/api/v1/listings/${outlier.id}`).set(bearer(t.keys[tier]));
      expect(one).toHaveStatus(200);
      expect(one.body.flags).toEqual(['price_outlier']);
    });
  }

  it('market prices leave flagged rentals out; stats count them and report how many', async () => {
    const m = await request(t.app).get('/api/v1/market/prices?commune=Luxembourg').set(bearer(t.keys.pro));
    // One unflagged rental counted (its figures suppressed: fewer than 3 listings).
    expect(m.body.data).toEqual([
      expect.objectContaining({ commune: 'Luxembourg', listings: 1, listings_with_area: 1, avg_rent_eur: null, median_rent_eur: null, low_sample: true }),
    ]);
    const s = await request(t.app).get('/api/v1/stats');
    expect(s.body.total_active).toBe(3);
    expect(s.body.flagged).toBe(2);
  });
});
