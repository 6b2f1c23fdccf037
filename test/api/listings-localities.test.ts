import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/context.js';
import { bearer, insertListing, type ListingInput } from '../helpers/factory.js';

// `commune=` with a name that several localities bear: a listing search matches each of them
// (docs/decisions.md, "Commune matching").
const t = useTestContext({ app: 'api', keys: ['pro'] });

beforeAll(async () => {
  const fixtures: Record<string, ListingInput> = {
    nord: { commune: 'Luxembourg', locality: 'Bonnevoie-Nord / Verlorenkost', lat: 49.6043, lng: 6.1418 },
    sud: { commune: 'Luxembourg', locality: 'Bonnevoie-Sud', lat: 49.5966, lng: 6.1466 },
    gare: { commune: 'Luxembourg', locality: 'Gare', lat: 49.6005, lng: 6.1335 },
    city: { commune: 'Luxembourg', lat: null, lng: null },
    bruch: { commune: 'Esch-sur-Alzette', locality: 'Bruch', lat: null, lng: null },
    brouch: { commune: 'Helperknapp', locality: 'Brouch', lat: null, lng: null },
    biwer_brouch: { commune: 'Biwer', locality: 'Brouch', lat: null, lng: null },
    hesperange: { commune: 'Hesperange', locality: null, lat: null, lng: null },
    howald: { commune: 'Hesperange', locality: 'Howald', lat: null, lng: null },
  };
  for (const [name, input] of Object.entries(fixtures)) await insertListing(t.db, { external_id: name, ...input });
});

async function ids(qs: string): Promise<string[]> {
  const res = await request(t.app).get(`/api/v1/listings${qs}`).set(bearer(t.keys.pro));
  expect(res, qs).toHaveStatus(200);
  expect(res.body.meta.total, qs).toBe(res.body.data.length);
  return res.body.data.map((l: { external_id: string }) => l.external_id).sort();
}

describe('a place name that several localities bear', () => {
  it('matches both Bonnevoie quarters for Bonnevoie (and Bonneweg), and one quarter when it is named in full', async () => {
    expect(await ids('?commune=Bonnevoie')).toEqual(['nord', 'sud']);
    expect(await ids('?commune=bonneweg')).toEqual(['nord', 'sud']);
    expect(await ids('?commune=Luxembourg-Bonnevoie')).toEqual(['nord', 'sud']);
    expect(await ids('?commune=Bonnevoie-Sud')).toEqual(['sud']);
    expect(await ids('?commune=Verlorenkost')).toEqual(['nord']);
    expect(await ids('?commune=Bonnevoie&lat=49.5966&lng=6.1466&radius_km=0.5')).toEqual(['sud']);
  });

  it('reads a place written with a postcode, a centre or the country after it', async () => {
    expect(await ids('?commune=L-2340%20Bonnevoie')).toEqual(['nord', 'sud']);
    expect(await ids('?commune=Bonnevoie-Sud%2C%20Luxembourg')).toEqual(['sud']);
    expect(await ids('?commune=Lux-Gare')).toEqual(['gare']);
    expect(await ids('?commune=Luxembourg%20Bahnhof')).toEqual(['gare']); // its German name (the second re-check of stop 50)
    expect(await ids('?commune=Luxembourg%20Centre')).toEqual([]); // Ville Haute, which has none here
    expect(await ids('?commune=Luxembourg%20Zentrum')).toEqual([]); // the same (the re-check of stop 50: the whole City)
    expect(await ids('?commune=Esch-sur-Alzette%20(Centre)')).toEqual(['bruch']);
    // A town's centre is its commune to the filter, as before; the importer reads it as the village
    // (stop 50: test/ingest/normalize.test.ts).
    expect(await ids('?commune=Hesperange%20Centre')).toEqual(['hesperange', 'howald']);
  });

  it('matches each locality in its own commune: Bruch is Bruch in Esch-sur-Alzette and Brouch in Helperknapp, not Brouch in Biwer', async () => {
    expect(await ids('?commune=Bruch')).toEqual(['brouch', 'bruch']);
    expect(await ids('?commune=Brouch')).toEqual(['biwer_brouch', 'brouch']);
  });

  // An outside probe of stop 47: market prices answered for the first of the localities alone
  // (`Goebelsmühle`: Bourscheid, with none, while the listings were in Goesdorf).
  it('market prices: a record for each locality the name matches, in its commune, as the listings filter', async () => {
    const prices = async (qs: string) => {
      const res = await request(t.app).get(`/api/v1/market/prices${qs}`).set(bearer(t.keys.pro));
      expect(res, qs).toHaveStatus(200);
      return res.body.data.map((r: { commune: string; locality?: string; listings: number }) => [r.commune, r.locality, r.listings]);
    };
    expect(await prices('?commune=Bonnevoie')).toEqual([['Luxembourg', 'Bonnevoie-Nord / Verlorenkost', 1], ['Luxembourg', 'Bonnevoie-Sud', 1]]);
    expect(await prices('?commune=Bruch')).toEqual([['Esch-sur-Alzette', 'Bruch', 1], ['Helperknapp', 'Brouch', 1]]);
    expect(await prices('?commune=Bonnevoie-Sud')).toEqual([['Luxembourg', 'Bonnevoie-Sud', 1]]);
    expect(await prices('?commune=Helperknapp')).toEqual([['Helperknapp', undefined, 1]]);
  });

  // An outside probe of stop 50: /communes offered Pütscheid, Putscheid's German name, as one of its
  // localities, which no filter could select alone (it is the commune).
  it('does not list a commune\'s own name, in any of its forms, among its localities', async () => {
    const res = await request(t.app).get('/api/v1/communes').set(bearer(t.keys.pro));
    expect(res).toHaveStatus(200);
    const of = (name: string) => res.body.data.find((c: { name: string }) => c.name === name).localities.map((l: { name: string }) => l.name);
    expect(of('Putscheid')).not.toContain('Pütscheid');
    expect(of('Putscheid').length).toBeGreaterThan(0);
    expect(of('Hesperange')).toEqual(['Alzingen', 'Fentange', 'Howald', 'Itzig']);
  });
});
