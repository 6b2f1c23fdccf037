import type { Knex } from 'knex';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { floorOf } from '../../src/ingest/floor.js';
import { classifyPair, type DedupNode, type PlacePoints } from '../../src/ingest/dedup/rule.js';
import { importFeed } from '../../src/ingest/index.js';
import { createTestDb, type TestDb } from '../helpers/pg.js';
import { csvFeed, csvRow, gazetteer } from './helpers.js';

// Twin flats of one building agree on everything a feed gives (area, rooms, price, position)
// but their floor, which titles state: two floors stated are two flats (docs/feed-operators.md,
// "Duplicates across sources"; an outside probe of stop 56 had 24 of its 25 pairs of twins
// merged, each title naming its floor).

describe('the floor a title names', () => {
  it.each([
    ['Appartement 2 chambres, 1er étage', 1],
    ['Bel appartement 1ère étage', 1],
    ['VEFA: appartement 2 chambres, 3e étage', 3],
    ['Appartement 2ème étage', 2],
    ['Appartement au deuxième étage', 2],
    ['Rez-de-chaussée avec jardin', 0],
    ['Appartement au RDC', 0],
    ['3-Zimmer-Wohnung im 3. OG', 3],
    ['Wohnung 2.Obergeschoss', 2],
    ['Wohnung im zweiten Stock', 2],
    ['Wohnung im Erdgeschoss', 0],
    ['Two-bedroom flat, 2nd floor', 2],
    ['1-bedroom flat, floor 1', 1],
    ['Floor 3 of 5', 3],
    ['Ground-floor flat', 0],
    ['Flat on the second floor', 2],
    ['floor 2, lift', 2],
    ['3-Zimmer-Wohnung im Mehrfamilienhaus, 2. OG', 2],
    ['Appartement dans maison de maître, 1er étage', 1],
    ['Wohnung im EG', 0],
    ['Appartement 2e étage - 1.850 €/mois - Bonnevoie', 2],
    ['Appartement au 4e étage - 2e arrondissement', 4],
    ['Wohnung im 2. OG, Energieklasse B', 2],
    ['Wohnung 2 OG', 2],
    ['um 2. Stack', 2],
    ['Erdgeschosswohnung mit Garten', 0],
    ['Appartement 3e ét. - Gare', 3],
  ])('%s: %s', (title, floor) => {
    expect(floorOf(title)).toBe(floor);
  });

  it.each([
    // A count of floors, the top floor, a level some call the ground floor and some the first.
    'Maison sur 2 étages',
    'House on two floors',
    'Penthouse dernier étage',
    'Wohnung im Dachgeschoss',
    'Wohnung im Hochparterre',
    'Appartement rez-de-jardin',
    // A flat on several floors, or a title naming two.
    'Duplex au 4e étage',
    'Duplex 4e et 5e étage',
    'Maisonette-Wohnung 2. OG',
    'EG + 1. OG',
    '1st & 2nd floor',
    // Not floors: an area, a plan, a room count.
    'Flat, floor area 80 m²',
    'floor 80 m²',
    'Floor plan included',
    'Appartement 2 chambres',
    'T3 lumineux',
    // A stop 56 re-check's: a count after "floor", a kind of floor before it.
    'Top floor 2 bedroom flat',
    'Parquet floor 3 bedrooms, bright',
    'Heated floor 2 bathrooms',
    // ... a house, whose title names a room's floor ...
    'Maison 3 chambres, séjour au rez-de-chaussée',
    'Maison avec 3 chambres au 1er étage',
    'Haus mit Einliegerwohnung im EG',
    'House with 2nd floor terrace',
    'Maison avec parterre fleuri',
    // ... a raised ground floor, a flat on two floors, English's "eg".
    'Appartement au rez-de-chaussée surélevé',
    'Raised ground floor flat',
    'Lower ground floor flat with garden',
    'Appartement au 1er et au 2e étage',
    'du 1er au 2e étage',
    'Flat near shops eg Cactus',
    // A second re-check's: a choice of floors, two levels joined, an energy class, what is not a flat.
    'Appartement au 1er ou 2e étage (au choix) - Lot 4 - Bettembourg',
    'Wohnung im 1. oder 2. OG - Mamer',
    'Flat on 2nd or 3rd floor - Kirchberg',
    'Wohnung im 1. OG und DG - Schifflingen',
    'Ground and first floor apartment - Bridel',
    'Appartement rez-de-chaussée et sous-sol - Hamm',
    'Wohnung EG mit Souterrain - Clausen',
    'Wohnung 2 Zimmer, Energieklasse EG - Differdingen',
    'Appartement 2 ch. - CPE: EG - Esch',
    'Family home, 3 bedrooms 1st floor - Strassen',
    'Semi-detached, kitchen on ground floor - Bertrange',
    'Immeuble de rapport, appartement au 1er étage loué - Esch',
    'Commerce + appartement au 1er étage - Ettelbruck',
    'Wohnung 120 m2 OG',
  ])('%s: none', (title) => {
    expect(floorOf(title)).toBeNull();
  });
});

// A flat in Strassen, located at its building (the reference points play no part here).
const PLACES: PlacePoints = { localitiesOf: () => [], commune: () => null, locality: () => null, hasQuarters: () => false };
const node = (over: Partial<DedupNode>): DedupNode => ({
  id: 'a', source: 's1', listing_type: 'RENT', commune: 'Strassen', locality: null, postcode: null, postcode_of_place: false, lat: 49.6201, lng: 6.0702,
  located: true, area_m2: 80, rooms: 3, price_eur: 1850, charges_included: null, charges_eur: null, image_count: 1, has_source_url: true,
  created_at: new Date('2026-11-01'), stale: false, ...over,
});

describe('pair rule: floors', () => {
  it('two floors stated rule a pair out, whatever else agrees', () => {
    expect(classifyPair(node({ floor: 1 }), node({ id: 'b', source: 's2', floor: 2 }), PLACES)).toMatchObject({ match: null, contradiction: true, reason: 'floors differ' });
    expect(classifyPair(node({ floor: 0 }), node({ id: 'b', source: 's2', floor: 3, lat: null, lng: null, located: false }), PLACES)).toMatchObject({ contradiction: true, reason: 'floors differ' });
  });
  it('one floor stated, or the same floor, is no evidence against: the figures decide', () => {
    expect(classifyPair(node({ floor: 2 }), node({ id: 'b', source: 's2', floor: null }), PLACES).match).toBe('merge');
    expect(classifyPair(node({ floor: 2 }), node({ id: 'b', source: 's2', floor: 2 }), PLACES).match).toBe('merge');
    expect(classifyPair(node({}), node({ id: 'b', source: 's2' }), PLACES).match).toBe('merge');
  });
});

// Imports: each agency a CSV feed of its own, the flats a few metres apart.
const row = (source: string, n: number, title: string, metres = 0) =>
  csvRow({ ref: `${source}-${n}`, title, price: '1850', area: '80', rooms: '3', place: 'Strassen', lat: (49.6201 + metres / 111_200).toFixed(6), lng: '6.0702' });

async function importRows(db: Knex, source: string, rows: string[]) {
  const r = await importFeed(db, { source, format: 'csv', input: Buffer.from(csvFeed(rows)), now: new Date('2026-11-25T08:00:00Z'), gazetteer: gazetteer() });
  expect(r.counts.rejected, JSON.stringify(r.rejects)).toBe(0);
  return r;
}

async function standing(db: Knex): Promise<string[]> {
  const rows = await db('listings').select('external_id', 'status', 'merged_into', 'flags', 'floor').orderBy('external_id');
  const refOf = new Map((await db('listings').select('id', 'external_id')).map((r) => [r.id, r.external_id]));
  return rows.map((r) => `${r.external_id} ${r.status} ${r.merged_into ? refOf.get(r.merged_into) : '-'} [${r.flags.join(',')}] floor ${r.floor ?? '-'}`);
}

describe('imports: twin flats stating their floors stay two listings', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => {
    await t?.drop();
  });
  beforeEach(async () => {
    await t.db.raw(`TRUNCATE listings CASCADE`);
  });

  it('two agencies, one twin each, floors named: two public listings, neither flagged (without the floors, one)', async () => {
    await importRows(t.db, 'agence-a', [row('agence-a', 1, 'Appartement 2 chambres, 1er étage')]);
    await importRows(t.db, 'agence-b', [row('agence-b', 1, '3-Zimmer-Wohnung im 2. OG', 5)]);
    expect(await standing(t.db)).toEqual(['agence-a-1 active - [] floor 1', 'agence-b-1 active - [] floor 2']);
    // The same records with titles that name no floor: one flat.
    await importRows(t.db, 'agence-b', [row('agence-b', 1, '3-Zimmer-Wohnung', 5)]);
    expect((await standing(t.db)).filter((s) => s.includes(' merged '))).toHaveLength(1);
  });

  it('one floor named, the other record silent: merged as before (a missing field is neutral)', async () => {
    await importRows(t.db, 'agence-a', [row('agence-a', 1, 'Appartement 2 chambres, 1er étage')]);
    await importRows(t.db, 'agence-b', [row('agence-b', 1, 'Three-room flat', 5)]);
    expect(await standing(t.db)).toEqual(['agence-a-1 active - [] floor 1', 'agence-b-1 merged agence-a-1 [] floor -']);
  });

  it('a third record naming no floor does not join two twins into one group', async () => {
    await importRows(t.db, 'agence-a', [row('agence-a', 1, 'Appartement 2 chambres, 1er étage')]);
    await importRows(t.db, 'agence-b', [row('agence-b', 1, 'Three-room flat', 3)]);
    await importRows(t.db, 'agence-c', [row('agence-c', 1, 'Two-bedroom flat, 2nd floor', 6)]);
    // agence-b's record may be either twin: it matches both alike, so it is merged into neither
    // (one listing per source per property) and stays visible, flagged as a possible duplicate; the
    // twins are never one group.
    expect(await standing(t.db)).toEqual([
      'agence-a-1 active - [] floor 1', 'agence-b-1 active - [possible_duplicate] floor -', 'agence-c-1 active - [] floor 2',
    ]);
  });

  it('listings stored before the floor was read get it at their source\'s next import, and their group is decided again', async () => {
    await importRows(t.db, 'agence-a', [row('agence-a', 1, 'Appartement 2 chambres, 1er étage')]);
    await importRows(t.db, 'agence-b', [row('agence-b', 1, '3-Zimmer-Wohnung im 2. OG', 5)]);
    // As stored before the column: no floor, and the twins merged (the rule of stop 55).
    const b = await t.db('listings').where({ external_id: 'agence-b-1' }).first('id');
    const a = await t.db('listings').where({ external_id: 'agence-a-1' }).first('id');
    await t.db('listings').update({ floor: null });
    await t.db('listings').where({ id: b.id }).update({ status: 'merged', merged_into: a.id });
    // agence-b's next import: its floor written (no public change), the pair decided again; the
    // other twin's floor is not known yet, so the figures still merge them.
    const r = await importRows(t.db, 'agence-b', [row('agence-b', 1, '3-Zimmer-Wohnung im 2. OG', 5)]);
    expect(r.counts.updated).toBe(0);
    expect(await standing(t.db)).toEqual(['agence-a-1 active - [] floor -', 'agence-b-1 merged agence-a-1 [] floor 2']);
    // agence-a's: both floors known, two flats.
    await importRows(t.db, 'agence-a', [row('agence-a', 1, 'Appartement 2 chambres, 1er étage')]);
    expect(await standing(t.db)).toEqual(['agence-a-1 active - [] floor 1', 'agence-b-1 active - [] floor 2']);
  });
});
