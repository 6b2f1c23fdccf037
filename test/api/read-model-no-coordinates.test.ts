import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ListingReadModel } from '../../src/read-model/read-model.js';
import { currentDataVersion } from '../../src/repositories/data-version.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, buildTestApp, createKey, insertListing, silentLogger } from '../helpers/factory.js';

// docs/spec/contract.md section 3: "Listings with no coordinates never match a geo search." With no active
// listing located at all (a new deployment before its first import, or feeds that give no
// coordinates), the read model has no geo grid: a geo search counted through it was a 500
// (an outside probe; SQL answered 200 and nothing).
const t = useTestContext();

describe('a geo search when no active listing has coordinates', () => {
  it('is 200 with nothing found, answered by the read model, empty or with unlocated listings only', async () => {
    const readModel = new ListingReadModel(t.db, silentLogger, 10);
    try {
      const app = await buildTestApp(t.db, { readModel });
      const { key } = await createKey(t.db, 'pro');
      const search = async (query: string) => {
        const res = await request(app).get(`/api/v1/listings?lat=49.6&lng=6.1&radius_km=5${query}`).set(bearer(key));
        expect(res, query).toHaveStatus(200);
        expect(res.body.data, query).toEqual([]);
        expect(res.body.meta.total, query).toBe(0);
      };
      const queries = ['', '&sort=price', '&sort=distance', '&flagged=true', '&listing_type=RENT&min_rooms=1', '&page=3'];

      await readModel.ready(await currentDataVersion(t.db));
      let served = readModel.info().served;
      for (const q of queries) await search(q);
      expect(readModel.info().served, 'answered by the read model').toBeGreaterThan(served);

      const unlocated = await insertListing(t.db, { lat: null, lng: null });
      await readModel.ready(await currentDataVersion(t.db));
      served = readModel.info().served;
      for (const q of queries) await search(`${q}&per_page=99`);
      expect(readModel.info().served, 'answered by the read model').toBeGreaterThan(served);
      // The listing is there, for a search without a circle.
      const all = await request(app).get('/api/v1/listings').set(bearer(key));
      expect(all.body.data.map((l: { id: string }) => l.id)).toEqual([unlocated.id]);
    } finally {
      await readModel.close();
    }
  });
});
