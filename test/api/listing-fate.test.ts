import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ListingRow } from '../../src/domain/listing.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, insertListing } from '../helpers/factory.js';

// GET /listings/:id of a merged listing says where it went (merged_into) only when this key
// may see that listing: a flagged one is a 404 for Free and Starter keys, so pointing them at
// it would be a dead end that names a listing they are not shown.
const t = useTestContext({ app: 'api', keys: ['free', 'starter', 'pro'] });
const L: Record<string, ListingRow> = {};

beforeAll(async () => {
  L.clean = await insertListing(t.db, { external_id: 'clean', commune: 'Mamer', price_eur: 2100 });
  L.flagged = await insertListing(t.db, { external_id: 'flagged', commune: 'Mamer', price_eur: 2300, flags: ['possible_duplicate'] });
  L.intoClean = await insertListing(t.db, { external_id: 'into-clean', source: 'other-agency', commune: 'Mamer', status: 'merged', merged_into: L.clean.id });
  L.intoFlagged = await insertListing(t.db, { external_id: 'into-flagged', source: 'other-agency', commune: 'Mamer', status: 'merged', merged_into: L.flagged.id });
});

describe('GET /listings/:id of a merged listing', () => {
  it('names the listing it was merged into to every tier when that listing is clean', async () => {
    for (const tier of ['free', 'starter', 'pro'] as const) {
      const res = await request(t.app).get(`/api/v1/listings/${L.intoClean.id}`).set(bearer(t.keys[tier]));
      expect(res, tier).toHaveStatus(404);
      expect(res.body, tier).toMatchObject({ code: 'not_found', merged_into: L.clean.id });
    }
  });

  it('names a flagged one to Pro only: Free and Starter get the plain 404 they get for that listing', async () => {
    const pro = await request(t.app).get(`/api/v1/listings/${L.intoFlagged.id}`).set(bearer(t.keys.pro));
    expect(pro.body).toMatchObject({ code: 'not_found', merged_into: L.flagged.id });
    for (const tier of ['free', 'starter'] as const) {
      const res = await request(t.app).get(`/api/v1/listings/${L.intoFlagged.id}`).set(bearer(t.keys[tier]));
      expect(res, tier).toHaveStatus(404);
      expect(res.body, tier).not.toHaveProperty('merged_into');
      expect(res.body.detail, tier).not.toContain(L.flagged.id);
      const target = await request(t.app).get(`/api/v1/listings/${L.flagged.id}`).set(bearer(t.keys[tier]));
      expect(target, tier).toHaveStatus(404);
    }
  });
});
